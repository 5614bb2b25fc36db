package truenas

import (
	"encoding/json"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchyard-csi/switchyard/simulators/truenas/middleware"
)

// counting registers test.count, which counts its runs.
func counting(r *middleware.Registry) *atomic.Int64 {
	var n atomic.Int64
	r.Add(middleware.Method{Name: "test.count", Handler: func(*middleware.Call, []json.RawMessage) (any, error) {
		return n.Add(1), nil
	}})
	return &n
}

// TestFaultErrorRateAndLatency: injected failures hit only the named
// method (or all with ""), Reset removes them; latency delays the call.
func TestFaultErrorRateAndLatency(t *testing.T) {
	s := startServer(t, "25.04")
	runs := counting(s.Registry())
	c := dialRPC(t, s)
	c.login()
	s.Faults().SetErrorRate("test.count", 1)
	a := c.call("test.count")
	if a.Error == nil || a.Error.Code != rpcMethodCallError || a.Error.Data["reason"] != "[EFAULT] injected fault" {
		t.Fatalf("with error rate 1: %+v", a.Error)
	}
	if runs.Load() != 0 {
		t.Error("a failed injected call ran")
	}
	var pong string
	c.result("core.ping", &pong) // other methods are unaffected
	s.Faults().SetErrorRate("", 1)
	if a := c.call("core.ping"); a.Error == nil {
		t.Error(`error rate on "" did not reach core.ping`)
	}
	s.Faults().Reset()
	var n int
	c.result("test.count", &n)
	if n != 1 {
		t.Errorf("after Reset: %d runs", n)
	}

	s.Faults().SetLatency("test.count", 150*time.Millisecond)
	start := time.Now()
	c.result("test.count", &n)
	if d := time.Since(start); d < 150*time.Millisecond {
		t.Errorf("a call with 150ms latency took %v", d)
	}
	// REST sees the same faults.
	s.Faults().SetErrorRate("test.count", 1)
	if status, body := rest(t, nil, s.URL(), "GET", "/test/count", "", rootAuth); status != 422 || !jsonEqual(t, body, `{"message":"injected fault","errno":14}`) {
		t.Errorf("REST with error rate 1: %d %s", status, body)
	}
}

// TestFaultDropAfter: the n-th call runs but its connection is closed
// instead of answered, on JSON-RPC, REST and the legacy protocol.
func TestFaultDropAfter(t *testing.T) {
	s := startServer(t, "25.04")
	runs := counting(s.Registry())

	c := dialRPC(t, s)
	c.login()
	s.Faults().DropAfter(2)
	var n int
	c.result("test.count", &n) // call 1: answered
	c.send("99", "test.count") // call 2: runs, never answered
	if !c.closed(waitTimeout) {
		t.Fatal("the connection was not dropped")
	}
	if runs.Load() != 2 {
		t.Errorf("runs = %d, want 2: the dropped call must take effect", runs.Load())
	}

	s.Faults().DropAfter(1)
	req, _ := http.NewRequest(http.MethodGet, s.URL()+"/api/v2.0/test/count", nil)
	req.Header.Set("Authorization", rootAuth.header())
	if resp, err := (&http.Client{Transport: &http.Transport{DisableKeepAlives: true}}).Do(req); err == nil {
		resp.Body.Close()
		t.Fatalf("REST call answered %d despite DropAfter(1)", resp.StatusCode)
	}
	if runs.Load() != 3 {
		t.Errorf("runs = %d, want 3", runs.Load())
	}

	l := dialLegacy(t, s)
	l.login("root", "secret")
	s.Faults().DropAfter(1)
	l.send(map[string]any{"msg": "method", "id": "x", "method": "test.count", "params": []any{}})
	select {
	case <-l.done:
	case <-time.After(waitTimeout):
		t.Fatal("legacy connection not dropped")
	}
	if runs.Load() != 4 {
		t.Errorf("runs = %d, want 4", runs.Load())
	}
	if st := s.Stats(); st.DroppedConnections != 3 {
		t.Errorf("DroppedConnections = %d, want 3", st.DroppedConnections)
	}
	// The server still answers new connections.
	c2 := dialRPC(t, s)
	var pong string
	c2.result("core.ping", &pong)
}
