package truenas

// Row 9 of issue 15: the service list and its control (see fidelity_test.go).

import (
	"strings"
	"testing"
)

// Row 9: the service list and its control: GET /service (REST, up to
// 25.10), service.query, service.start/stop (removed in 26) and the
// service.control job (25.10+).
func TestFidelityServices(t *testing.T) {
	for _, v := range []string{"24.10", "25.04", "25.10", "26.04"} {
		t.Run(v, func(t *testing.T) {
			s := startServer(t, v)
			c := dialAny(t, s)
			var rows []map[string]any
			c.decode(c.mustCall("service.query", []any{[]any{"service", "=", "nfs"}}, map[string]any{}), &rows)
			if len(rows) != 1 || rows[0]["id"] != 9.0 || rows[0]["enable"] != false || rows[0]["state"] != "STOPPED" ||
				!reflectEqual(rows[0]["pids"], []any{}) {
				t.Fatalf("nfs on a fresh system: %v", rows)
			}
			if !s.Version().AtLeast(26, 0, 0) {
				var all []map[string]any
				restJSON(t, s, "GET", "/service", "", &all)
				names := map[string]bool{}
				for _, r := range all {
					names[r["service"].(string)] = true
				}
				hasNVMet := s.Version().AtLeast(25, 10, 0)
				if !names["iscsitarget"] || !names["cifs"] || names["nvmet"] != hasNVMet || names["smartd"] == hasNVMet {
					t.Errorf("GET /service lists %v", names)
				}
			}
			if s.Version().AtLeast(25, 10, 0) {
				job := c.job("service.control", "START", "nfs", map[string]any{"silent": false})
				if job["state"] != "SUCCESS" || job["result"] != true {
					t.Fatalf("service.control START nfs: %v", job)
				}
				_, werr := c.callRaw("service.control", "BOUNCE", "nfs")
				if werr == nil || werr.Code != -32602 {
					t.Errorf("service.control with a bad verb: %+v", werr)
				}
			} else {
				var ok bool
				c.decode(c.mustCall("service.start", "nfs", map[string]any{"silent": false}), &ok)
				if !ok {
					t.Fatal("service.start nfs answered false")
				}
			}
			if _, werr := c.callRaw("service.start", "nfs"); s.Version().AtLeast(26, 0, 0) && (werr == nil || werr.Code != -32601) {
				t.Errorf("service.start on 26 (removed): %+v", werr)
			}
			c.decode(c.mustCall("service.query", []any{[]any{"service", "=", "nfs"}}), &rows)
			if rows[0]["state"] != "RUNNING" || len(rows[0]["pids"].([]any)) != 1 {
				t.Errorf("nfs after start: %v", rows[0])
			}
			var started bool
			c.decode(c.mustCall("service.started", "nfs"), &started)
			if !started {
				t.Error("service.started nfs = false after start")
			}
			var id int
			c.decode(c.mustCall("service.update", "nfs", map[string]any{"enable": true}), &id)
			if id != 9 {
				t.Errorf("service.update returned %d, want the row id 9", id)
			}
			if _, werr := c.callRaw("service.update", "nope", map[string]any{"enable": true}); werr == nil || werr.Errno != 2 ||
				!strings.Contains(werr.Reason, "Service nope not found.") {
				t.Errorf("update of an unknown service: %+v", werr)
			}
		})
	}
}
