package api

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestMapREST(t *testing.T) {
	type want struct {
		verb, path, query, body string // body "" = none; query as encoded (sorted)
	}
	filter := func(f ...any) []any { return f }
	tests := []struct {
		method string
		params []any
		want   want
	}{
		// CRUD namespace
		{"pool.dataset.query", nil, want{"GET", "/pool/dataset", "", ""}},
		{"pool.dataset.query", []any{filter([]any{"id", "=", "tank/a b"})}, want{"GET", "/pool/dataset", "id=tank%2Fa+b", ""}},
		{"pool.dataset.query", []any{filter([]any{"id", "=", "tank/a"}, []any{"used", ">=", 5}), map[string]any{"limit": 10, "offset": 20}},
			want{"GET", "/pool/dataset", "id=tank%2Fa&limit=10&offset=20&used__gte=5", ""}},
		{"pool.dataset.query", []any{[]any{}, map[string]any{"extra": map[string]any{"retrieve_children": false, "properties": []string{"volsize"}}}},
			want{"GET", "/pool/dataset", "extra.properties=%5B%22volsize%22%5D&extra.retrieve_children=false", ""}},
		{"sharing.nfs.query", []any{filter([]any{"path", "!=", "/mnt/x"}, []any{"enabled", "=", true}, []any{"comment", "=", nil})},
			want{"GET", "/sharing/nfs", "comment=null&enabled=true&path__neq=%2Fmnt%2Fx", ""}},
		{"iscsi.target.query", []any{filter([]any{"id", "=", 7}), map[string]any{"count": true}},
			want{"GET", "/iscsi/target", "count=true&id=7", ""}},
		// Filters a query string would change: sent in a GET body.
		{"iscsi.target.query", []any{filter([]any{"name", "=", "123"})},
			want{"GET", "/iscsi/target", "", `{"query-filters":[["name","=","123"]]}`}},
		{"iscsi.target.query", []any{filter([]any{"name", "in", []string{"a", "b"}})},
			want{"GET", "/iscsi/target", "", `{"query-filters":[["name","in",["a","b"]]]}`}},
		{"iscsi.target.query", []any{filter([]any{"name", "^", "pvc-"})},
			want{"GET", "/iscsi/target", "", `{"query-filters":[["name","^","pvc-"]]}`}},
		{"iscsi.target.query", []any{filter([]any{"OR", []any{[]any{"a", "=", "x"}, []any{"b", "=", "y"}}})},
			want{"GET", "/iscsi/target", "", `{"query-filters":[["OR",[["a","=","x"],["b","=","y"]]]]}`}},
		{"iscsi.target.query", []any{filter([]any{"name", "=", "true"})},
			want{"GET", "/iscsi/target", "", `{"query-filters":[["name","=","true"]]}`}},
		{"iscsi.target.query", []any{filter([]any{"lunid", "=", -1})},
			want{"GET", "/iscsi/target", "", `{"query-filters":[["lunid","=",-1]]}`}},
		{"pool.dataset.query", []any{[]any{}, map[string]any{"select": []string{"id"}}},
			want{"GET", "/pool/dataset", "", `{"query-filters":[],"query-options":{"select":["id"]}}`}},
		{"pool.dataset.get_instance", []any{"tank/k8s/pvc-1"}, want{"GET", "/pool/dataset/id/tank%2Fk8s%2Fpvc-1", "", ""}},
		{"pool.dataset.get_instance", []any{"tank/v", map[string]any{"extra": map[string]any{"retrieve_children": false}}},
			want{"GET", "/pool/dataset/id/tank%2Fv", "extra.retrieve_children=false", ""}},
		{"iscsi.extent.get_instance", []any{12}, want{"GET", "/iscsi/extent/id/12", "", ""}},
		{"pool.dataset.create", []any{map[string]any{"name": "tank/v", "type": "VOLUME", "volsize": 1 << 30}},
			want{"POST", "/pool/dataset", "", `{"name":"tank/v","type":"VOLUME","volsize":1073741824}`}},
		{"pool.dataset.update", []any{"tank/v", map[string]any{"volsize": 2 << 30}},
			want{"PUT", "/pool/dataset/id/tank%2Fv", "", `{"volsize":2147483648}`}},
		{"pool.dataset.delete", []any{"tank/v"}, want{"DELETE", "/pool/dataset/id/tank%2Fv", "", ""}},
		{"pool.dataset.delete", []any{"tank/v", map[string]any{"recursive": true, "force": true}},
			want{"DELETE", "/pool/dataset/id/tank%2Fv", "", `{"force":true,"recursive":true}`}},
		{"zfs.snapshot.delete", []any{"tank/v@s1", map[string]any{"defer": true}},
			want{"DELETE", "/zfs/snapshot/id/tank%2Fv@s1", "", `{"defer":true}`}},
		{"iscsi.target.delete", []any{3, true, true}, want{"DELETE", "/iscsi/target/id/3", "", `{"delete_extents":true,"force":true}`}},
		{"iscsi.target.delete", []any{3, true}, want{"DELETE", "/iscsi/target/id/3", "", `{"force":true}`}},
		{"iscsi.extent.delete", []any{4, false, true}, want{"DELETE", "/iscsi/extent/id/4", "", `{"force":true,"remove":false}`}},
		{"iscsi.targetextent.delete", []any{5, true}, want{"DELETE", "/iscsi/targetextent/id/5", "", `true`}},
		{"sharing.nfs.delete", []any{9}, want{"DELETE", "/sharing/nfs/id/9", "", ""}},
		// Config namespaces
		{"iscsi.global.config", nil, want{"GET", "/iscsi/global", "", ""}},
		{"nvmet.global.config", nil, want{"GET", "/nvmet/global", "", ""}},
		{"nfs.update", []any{map[string]any{"servers": 4}}, want{"PUT", "/nfs", "", `{"servers":4}`}},
		// Other methods
		{"system.version", nil, want{"GET", "/system/version", "", ""}},
		{"core.get_jobs", []any{filter([]any{"id", "=", 42})}, want{"GET", "/core/get_jobs", "id=42", ""}},
		{"zfs.snapshot.clone", []any{map[string]any{"snapshot": "tank/a@s", "dataset_dst": "tank/b"}},
			want{"POST", "/zfs/snapshot/clone", "", `{"dataset_dst":"tank/b","snapshot":"tank/a@s"}`}},
		{"pool.dataset.destroy_snapshots", []any{map[string]any{"name": "tank/a"}},
			want{"POST", "/pool/dataset/destroy_snapshots", "", `{"name":"tank/a"}`}},
		{"core.job_wait", []any{17}, want{"POST", "/core/job_wait", "", `17`}},
	}
	for _, tt := range tests {
		got, err := mapREST(tt.method, tt.params)
		if err != nil {
			t.Errorf("%s %v: %v", tt.method, tt.params, err)
			continue
		}
		body := ""
		if got.HasBody {
			b, _ := json.Marshal(got.Body)
			body = string(b)
		}
		g := want{got.Verb, got.Path, got.Query.Encode(), body}
		if g != tt.want {
			t.Errorf("%s %v:\n got %+v\nwant %+v", tt.method, tt.params, g, tt.want)
		}
	}
}

func TestMapRESTRefuses(t *testing.T) {
	tests := []struct {
		method string
		params []any
		want   string
	}{
		{"version", nil, "not a middleware method name"},
		{"pool.dataset.", nil, "not a middleware method name"},
		{"pool.dataset.delete", nil, "id (first parameter) is missing"},
		{"pool.dataset.get_instance", []any{map[string]any{}}, "id must be a string or a number"},
		{"pool.dataset.get_instance", []any{"tank/a", map[string]any{"select": []string{"id"}}}, `option "select"`},
		{"some.method", []any{1, 2}, "use httpConnection.transport: websocket"},
		{"iscsi.target.delete", []any{1, true, true, true}, "3 parameters"},
		{"pool.dataset.create", []any{make(chan int)}, "cannot encode"},
	}
	for _, tt := range tests {
		_, err := mapREST(tt.method, tt.params)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s %v: error %v, want %q", tt.method, tt.params, err, tt.want)
		}
	}
}
