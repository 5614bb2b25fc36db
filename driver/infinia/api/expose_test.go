package api

import (
	"context"
	"net/http"
	"testing"
)

// TestExposeAnswer: the facts leave open what an expose answers. A
// subsystem is returned as one; anything else (null, another shape) is
// nil and no error, for the expose itself succeeded.
func TestExposeAnswer(t *testing.T) {
	const path = "PUT /redapi/v1/clusters/clu1/tenants/red/subtenants/red/datasets/csiService/volumes/pvc-1/expose"
	for _, tc := range []struct {
		name string
		data any
		want string // the subsystem's name; "" for nil
	}{
		{"subsystem", map[string]any{"name": "pvc-1", "nqn": "nqn.x", "listeners": []any{map[string]any{"traddrs": []string{"10.0.0.1"}, "instance_id": 1}}}, "pvc-1"},
		{"null", nil, ""},
		{"string", "exposed", ""},
		{"number", 3, ""},
		{"object without a name", map[string]any{"status": "ok"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeAPI(t)
			f.route(path, func(*http.Request) (int, string, any) { return 200, "OK", tc.data })
			c := newClient(t, f.config(f.start()))
			s, err := c.ExposeVolume(context.Background(), "red", "csiService", "pvc-1", 1)
			if err != nil {
				t.Fatalf("expose: %v", err)
			}
			switch {
			case tc.want == "" && s != nil:
				t.Errorf("answer %v read as subsystem %+v", tc.data, s)
			case tc.want != "" && (s == nil || s.Name != tc.want || len(s.Listeners) != 1 || s.Listeners[0].InstanceID.Int() != 1):
				t.Errorf("answer %v read as %+v", tc.data, s)
			}
		})
	}
}
