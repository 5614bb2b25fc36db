package truenas

import (
	"bytes"
	"encoding/json"
	"testing"
)

// The result envelope is byte for byte what json.Marshal made of the map.
func TestResultMessageIsMarshal(t *testing.T) {
	results := []any{nil, true, 3, "a<b>&c", []any{1, "x"},
		map[string]any{"name": "tank/k8s/v/pvc-1", "used": map[string]any{"parsed": 1 << 20, "rawvalue": "1048576"}, "html": "<&>"}}
	ids := []string{`1`, `"abc"`, `"<x&y>"`, `{ "a" : 1 }`, `[1, 2]`, `null`, `1.5e3`, `"é\u2028"`, `"a\u003c"`, `12345678901234567890`, `-0`, `1 `, `{"a":[true,false,null]}`, "\"\u2028 \u00e9\""}
	for _, id := range ids {
		for _, r := range results {
			res, err := json.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			want, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": json.RawMessage(id), "result": json.RawMessage(res)})
			if err != nil {
				t.Fatal(err)
			}
			got, err := resultMessage(json.RawMessage(id), res)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("id %s result %v:\n got %s\nwant %s", id, r, got, want)
			}
		}
	}
}
