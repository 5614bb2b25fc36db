package truenas

import (
	"encoding/json"
	"testing"
	"time"
)

// wireError is an error answer of either WebSocket protocol: code is the
// JSON-RPC code (0 on the legacy protocol), errno/errname/reason/extra
// the middleware's error data.
type wireError struct {
	Code    int
	Errno   int
	Errname string
	Reason  string
	Extra   any
}

// anyClient calls methods the way a WebSocket client of the release does:
// JSON-RPC 2.0 on /api/current from 25.04, the legacy protocol on
// /websocket before (24.10 has nothing else). It is logged in as root.
type anyClient struct {
	t      *testing.T
	rpc    *rpcClient
	legacy *legacyClient
}

func dialAny(t *testing.T, s *Server) *anyClient {
	t.Helper()
	if s.Version().AtLeast(25, 4, 0) {
		c := dialRPC(t, s)
		c.login()
		return &anyClient{t: t, rpc: c}
	}
	c := dialLegacy(t, s)
	c.login("root", "secret")
	return &anyClient{t: t, legacy: c}
}

// callRaw sends one call and returns its result or its error.
func (c *anyClient) callRaw(method string, params ...any) (json.RawMessage, *wireError) {
	c.t.Helper()
	if c.rpc != nil {
		a := c.rpc.call(method, params...)
		if a.Error == nil {
			return a.Result, nil
		}
		w := &wireError{Code: a.Error.Code, Reason: a.Error.Message}
		if d := a.Error.Data; d != nil {
			n, _ := d["error"].(float64)
			w.Errno = int(n)
			w.Errname, _ = d["errname"].(string)
			w.Reason, _ = d["reason"].(string)
			w.Extra = d["extra"]
		}
		return nil, w
	}
	a := c.legacy.call(method, params...)
	if a.Error == nil {
		return a.Result, nil
	}
	n, _ := a.Error["error"].(float64)
	name, _ := a.Error["errname"].(string)
	reason, _ := a.Error["reason"].(string)
	return nil, &wireError{Errno: int(n), Errname: name, Reason: reason, Extra: a.Error["extra"]}
}

// mustCall is callRaw that has to succeed.
func (c *anyClient) mustCall(method string, params ...any) json.RawMessage {
	c.t.Helper()
	res, err := c.callRaw(method, params...)
	if err != nil {
		c.t.Fatalf("%s: %+v", method, *err)
	}
	return res
}

func (c *anyClient) decode(raw json.RawMessage, v any) {
	c.t.Helper()
	if err := json.Unmarshal(raw, v); err != nil {
		c.t.Fatalf("result %s: %v", raw, err)
	}
}

// job calls a job method, waits for the job through core.get_jobs (as
// clients that poll do) and returns the finished job.
func (c *anyClient) job(method string, params ...any) map[string]any {
	c.t.Helper()
	var id int
	c.decode(c.mustCall(method, params...), &id)
	deadline := time.Now().Add(waitTimeout)
	for time.Now().Before(deadline) {
		var jobs []map[string]any
		c.decode(c.mustCall("core.get_jobs", []any{[]any{"id", "=", id}}), &jobs)
		if len(jobs) == 1 {
			switch jobs[0]["state"] {
			case "SUCCESS", "FAILED", "ABORTED":
				return jobs[0]
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	c.t.Fatalf("%s: job %d did not finish", method, id)
	return nil
}
