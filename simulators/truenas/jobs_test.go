package truenas

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/switchyard-csi/switchyard/simulators/truenas/middleware"
)

// waitJob waits until job id reaches state.
func waitJob(t *testing.T, s *Server, id int, state string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for {
		var row map[string]any
		if j := s.jobs.get(id); j != nil {
			row = j.row()
			if row["state"] == state {
				return row
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %d: %v, want state %s", id, row, state)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// jobMethods registers test.job.ok (progress, then a result),
// test.job.fail (a CallError), test.job.invalid (validation errors) and
// test.job.block (runs until its context ends).
func jobMethods(r *middleware.Registry, blocked chan<- struct{}) {
	r.Add(middleware.Method{Name: "test.job.ok", Job: true, Params: []string{"x"}, Handler: func(c *middleware.Call, p []json.RawMessage) (any, error) {
		c.Progress(40, "working")
		return map[string]any{"x": p[0]}, nil
	}})
	r.Add(middleware.Method{Name: "test.job.fail", Job: true, Handler: func(*middleware.Call, []json.RawMessage) (any, error) {
		return nil, middleware.Errorf(middleware.EFAULT, "boom")
	}})
	r.Add(middleware.Method{Name: "test.job.invalid", Job: true, Handler: func(*middleware.Call, []json.RawMessage) (any, error) {
		return nil, middleware.Invalid("test_job.name", "bad name")
	}})
	r.Add(middleware.Method{Name: "test.job.block", Job: true, Handler: func(c *middleware.Call, _ []json.RawMessage) (any, error) {
		blocked <- struct{}{}
		<-c.Ctx.Done()
		return nil, c.Ctx.Err()
	}})
}

// TestLegacyJobs: a job call answers its id; core.job_wait is itself a job
// whose result is the waited job's; core.get_jobs shows state, progress,
// result and failures the way middlewared records them.
func TestLegacyJobs(t *testing.T) {
	s := startServer(t, "25.04")
	jobMethods(s.Registry(), make(chan struct{}, 1))
	c := dialRPC(t, s)
	c.login()

	var id int
	c.result("test.job.ok", &id, "a")
	if id != 1 {
		t.Fatalf("first job id %d, want 1", id)
	}
	var waitID int
	c.result("core.job_wait", &waitID, id)
	if waitID != 2 {
		t.Fatalf("core.job_wait answered %d, want the id of its own job (2)", waitID)
	}
	w := waitJob(t, s, waitID, jobSuccess)
	if res, _ := json.Marshal(w["result"]); !jsonEqual(t, res, `{"x":"a"}`) {
		t.Errorf("core.job_wait result %s", res)
	}
	var rows []map[string]any
	c.result("core.get_jobs", &rows, [][]any{{"id", "=", id}})
	if len(rows) != 1 || rows[0]["state"] != "SUCCESS" || rows[0]["method"] != "test.job.ok" {
		t.Fatalf("core.get_jobs: %v", rows)
	}
	if p := rows[0]["progress"].(map[string]any); p["percent"] != float64(100) {
		t.Errorf("progress %v", p)
	}
	if cr := rows[0]["credentials"].(map[string]any); cr["type"] != "LOGIN_PASSWORD" || cr["data"].(map[string]any)["username"] != "root" {
		t.Errorf("credentials %v", cr)
	}
	if args, _ := json.Marshal(rows[0]["arguments"]); string(args) != `["a"]` {
		t.Errorf("arguments %s", args)
	}
	if _, ok := rows[0]["time_finished"].(map[string]any)["$date"]; !ok {
		t.Errorf("time_finished %v is not {$date}", rows[0]["time_finished"])
	}

	cases := []struct {
		method, errStr, excType string
		errno                   float64
		extra                   string
	}{
		{"test.job.fail", "[EFAULT] boom", "CallError", 14, `null`},
		{"test.job.invalid", "[EINVAL] test_job.name: bad name\n", "VALIDATION", 22, `[["test_job.name","bad name",22]]`},
	}
	for _, tc := range cases {
		var jid int
		c.result(tc.method, &jid)
		row := waitJob(t, s, jid, jobFailed)
		exc := row["exc_info"].(map[string]any)
		extra, _ := json.Marshal(exc["extra"])
		if row["error"] != tc.errStr || exc["type"] != tc.excType || exc["errno"] != int(tc.errno) || !jsonEqual(t, extra, tc.extra) {
			t.Errorf("%s: error %q exc_info %v", tc.method, row["error"], exc)
		}
	}
	a := c.call("core.job_wait", 999)
	if a.Error != nil {
		t.Fatalf("core.job_wait of a missing job should start a job that fails: %+v", a.Error)
	}
}

// TestBlockingJobs (25.10): after core.set_options({"legacy_jobs": false})
// a job call waits and answers the job's result, or its error.
func TestBlockingJobs(t *testing.T) {
	s := startServer(t, "25.10")
	jobMethods(s.Registry(), make(chan struct{}, 1))
	c := dialRPC(t, s)
	c.login()
	var res any
	c.result("core.set_options", &res, map[string]any{"legacy_jobs": false})
	var out map[string]any
	c.result("test.job.ok", &out, "b")
	if out["x"] != "b" {
		t.Fatalf("blocking job result %v", out)
	}
	a := c.call("test.job.fail")
	if a.Error == nil || a.Error.Code != rpcMethodCallError || a.Error.Data["reason"] != "[EFAULT] boom" {
		t.Fatalf("blocking failed job: %+v", a.Error)
	}
	a = c.call("test.job.invalid")
	if a.Error == nil || a.Error.Code != rpcInvalidParams {
		t.Fatalf("blocking invalid job: %+v", a.Error)
	}
	// Another connection still gets ids.
	c2 := dialRPC(t, s)
	c2.login()
	var id int
	c2.result("test.job.ok", &id, "c")
	if id == 0 {
		t.Fatal("legacy_jobs leaked across connections")
	}
	if a := c.call("core.set_options", map[string]any{"bogus": true}); a.Error == nil || a.Error.Code != rpcInvalidParams {
		t.Errorf("unknown option: %+v", a.Error)
	}
}

// TestJobAbortAndEvents: core.job_abort cancels the job's context and marks
// it ABORTED; core.subscribe("core.get_jobs") delivers collection_update
// notifications.
func TestJobAbortAndEvents(t *testing.T) {
	s := startServer(t, "25.04")
	blocked := make(chan struct{}, 1)
	jobMethods(s.Registry(), blocked)
	c := dialRPC(t, s)
	c.login()
	var ident string
	c.result("core.subscribe", &ident, "core.get_jobs")
	var id int
	c.result("test.job.block", &id)
	<-blocked
	var none any
	c.result("core.job_abort", &none, id)
	row := waitJob(t, s, id, jobAborted)
	if row["error"] != "[EINTR] Job aborted" {
		t.Errorf("aborted job error %v", row["error"])
	}
	// added (RUNNING), then changed (ABORTED).
	var states []any
	for len(states) < 2 {
		m := c.nextOther()
		if m["method"] != "collection_update" {
			t.Fatalf("unexpected message %v", m)
		}
		p := m["params"].(map[string]any)
		if p["collection"] != "core.get_jobs" || p["id"] != float64(id) {
			t.Fatalf("event %v", p)
		}
		states = append(states, p["msg"].(string)+":"+p["fields"].(map[string]any)["state"].(string))
	}
	if states[0] != "added:RUNNING" || states[1] != "changed:ABORTED" {
		t.Errorf("events %v", states)
	}
}
