package middleware

import (
	"encoding/json"
	"reflect"
	"testing"
)

func rows() []Row {
	return []Row{
		{"id": 1, "name": "tank/a", "path": "/mnt/tank/a", "props": map[string]any{"x": "1"}},
		{"id": 2, "name": "tank/b", "path": "/mnt/tank/b", "props": map[string]any{"x": "2"}},
		{"id": 3, "name": "other/c", "path": "/mnt/other/c", "props": map[string]any{"x": "1"}},
	}
}

func ids(t *testing.T, v any) []int {
	t.Helper()
	l, ok := v.([]Row)
	if !ok {
		t.Fatalf("result %T, want []Row", v)
	}
	var out []int
	for _, r := range l {
		out = append(out, r["id"].(int))
	}
	return out
}

func TestQueryFilters(t *testing.T) {
	cases := []struct {
		filters string
		want    []int
	}{
		{`[]`, []int{1, 2, 3}},
		{`[["id","=",2]]`, []int{2}},
		{`[["name","^","tank/"]]`, []int{1, 2}},
		{`[["name","$","/c"]]`, []int{3}},
		{`[["props.x","=","1"]]`, []int{1, 3}},
		{`[["id","in",[1,3]]]`, []int{1, 3}},
		{`[["id","nin",[1,3]]]`, []int{2}},
		{`[["id",">=",2],["name","~","^tank"]]`, []int{2}},
		{`[["OR",[["id","=",1],["id","=",3]]]]`, []int{1, 3}},
		{`[["OR",[[["id","=",1],["name","=","x"]],["id","=",2]]]]`, []int{2}},
		{`[["name","C=","TANK/A"]]`, []int{1}},
		{`[["missing","=",null]]`, []int{1, 2, 3}},
	}
	for _, c := range cases {
		var f []any
		if err := json.Unmarshal([]byte(c.filters), &f); err != nil {
			t.Fatal(err)
		}
		got, err := Query(rows(), f, QueryOptions{})
		if err != nil {
			t.Fatalf("%s: %v", c.filters, err)
		}
		if g := ids(t, got); !reflect.DeepEqual(g, c.want) {
			t.Errorf("%s: got %v, want %v", c.filters, g, c.want)
		}
	}
}

func TestQueryOptions(t *testing.T) {
	got, _ := Query(rows(), nil, QueryOptions{OrderBy: []string{"-id"}, Offset: 1, Limit: 1})
	if g := ids(t, got); !reflect.DeepEqual(g, []int{2}) {
		t.Errorf("order/offset/limit: %v", g)
	}
	n, _ := Query(rows(), nil, QueryOptions{Count: true})
	if n != 3 {
		t.Errorf("count = %v", n)
	}
	one, err := Query(rows(), []any{[]any{"id", "=", 3.0}}, QueryOptions{Get: true, Select: []string{"name", "props.x"}})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(one, Row{"name": "other/c", "props": map[string]any{"x": "1"}}) {
		t.Errorf("get/select: %v", one)
	}
	_, err = Query(rows(), []any{[]any{"id", "=", 9.0}}, QueryOptions{Get: true})
	if ce, ok := err.(*CallError); !ok || ce.Errno != ENOENT {
		t.Errorf("get of nothing: %v", err)
	}
}

func TestQueryRejectsBadFilters(t *testing.T) {
	for _, f := range []string{`[["id","=="]]`, `[["id","like",1]]`, `["id"]`, `[["name","~","("]]`} {
		_, _, err := ParseQuery([]json.RawMessage{json.RawMessage(f)}, "x_query")
		if _, ok := err.(ValidationErrors); !ok {
			t.Errorf("%s: got %v, want ValidationErrors", f, err)
		}
	}
}

func TestParseVersion(t *testing.T) {
	for in, want := range map[string]string{"25.04": "25.04.2", "24.10": "24.10.2", "TrueNAS-25.10.1": "25.10.1", "26.04.3": "26.04.3"} {
		v, err := ParseVersion(in)
		if err != nil || v.String() != want {
			t.Errorf("%s: %v %v", in, v, err)
		}
	}
	if v, _ := ParseVersion("24.10"); v.Product() != "TrueNAS-SCALE-24.10.2" {
		t.Errorf("24.10 product %s", v.Product())
	}
	if _, err := ParseVersion("x.y"); err == nil {
		t.Error("x.y parsed")
	}
}
