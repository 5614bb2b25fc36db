package storage

import (
	"testing"
)

func names(t *testing.T, v any) []string {
	t.Helper()
	l, ok := v.([]any)
	if !ok {
		t.Fatalf("got %T, want a list", v)
	}
	var out []string
	for _, x := range l {
		out = append(out, obj(t, x)["id"].(string))
	}
	return out
}

func TestDatasetQuery(t *testing.T) {
	e := newEnv(t, "25.10")
	e.mkfs("tank/a", nil)
	e.mkfs("tank/a/b", nil)
	e.mkfs("tank/c", nil)
	cases := []struct {
		name    string
		filters []any
		options map[string]any
		want    []string
		check   func(t *testing.T, res any)
	}{
		{name: "flat", want: []string{"tank", "tank/a", "tank/a/b", "tank/c"}},
		{name: "id", filters: []any{[]any{"id", "=", "tank/a"}}, want: []string{"tank/a"},
			check: func(t *testing.T, res any) {
				kids := names(t, obj(t, res.([]any)[0])["children"])
				if len(kids) != 1 || kids[0] != "tank/a/b" {
					t.Errorf("children of tank/a: %v", kids)
				}
			}},
		{name: "hierarchy", options: map[string]any{"extra": map[string]any{"flat": false}}, want: []string{"tank"},
			check: func(t *testing.T, res any) {
				root := obj(t, res.([]any)[0])
				if kids := names(t, root["children"]); len(kids) != 2 {
					t.Errorf("children of tank: %v", kids)
				}
			}},
		{name: "no children", filters: []any{[]any{"id", "=", "tank/a"}},
			options: map[string]any{"extra": map[string]any{"retrieve_children": false}}, want: []string{"tank/a"},
			check: func(t *testing.T, res any) {
				if kids := obj(t, res.([]any)[0])["children"].([]any); len(kids) != 0 {
					t.Errorf("children retrieved: %v", kids)
				}
			}},
		{name: "properties", filters: []any{[]any{"id", "=", "tank/c"}},
			options: map[string]any{"extra": map[string]any{"properties": []any{"used", "mountpoint"}}}, want: []string{"tank/c"},
			check: func(t *testing.T, res any) {
				ent := obj(t, res.([]any)[0])
				if _, ok := ent["compression"]; ok {
					t.Error("compression reported though not asked for")
				}
				if ent["mountpoint"] != "/mnt/tank/c" || ent["used"] == nil {
					t.Errorf("asked properties missing: %v", ent)
				}
			}},
		{name: "prefix filter and order", filters: []any{[]any{"id", "^", "tank/"}},
			options: map[string]any{"order_by": []any{"-id"}}, want: []string{"tank/c", "tank/a/b", "tank/a"}},
		{name: "type", filters: []any{[]any{"type", "=", "VOLUME"}}, want: nil},
		{name: "missing", filters: []any{[]any{"id", "=", "tank/zz"}}, want: nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := c.filters
			if f == nil {
				f = []any{}
			}
			opts := c.options
			if opts == nil {
				opts = map[string]any{}
			}
			res := e.must("pool.dataset.query", f, opts)
			got := names(t, res)
			if len(got) != len(c.want) {
				t.Fatalf("got %v, want %v", got, c.want)
			}
			for i := range got {
				if got[i] != c.want[i] {
					t.Fatalf("got %v, want %v", got, c.want)
				}
			}
			if c.check != nil {
				c.check(t, res)
			}
		})
	}
	n := e.must("pool.dataset.query", []any{}, map[string]any{"count": true})
	if n != 4.0 {
		t.Errorf("count = %v", n)
	}
	_, err := e.call("pool.dataset.get_instance", "tank/zz")
	wantNotFound(t, err, "PoolDataset tank/zz does not exist")
	_, err = e.call("pool.dataset.query", []any{[]any{"id", "like", "x"}})
	wantValidation(t, err, "pool_dataset_query.query-filters", "Invalid operation")
}
