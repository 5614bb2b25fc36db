package truenas

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/switchyard-csi/switchyard/simulators/truenas/middleware"
)

// TestJSONRPCMalformedRequests: requests that are not valid JSON-RPC get
// -32700/-32600 with a null id; an unknown method -32601 with its id.
func TestJSONRPCMalformedRequests(t *testing.T) {
	s := startServer(t, "25.04")
	cases := []struct {
		name, msg string
		code      int
		id        any
		text      string
	}{
		{"not JSON", `{"jsonrpc":`, rpcParseError, nil, ""},
		{"batch", `[{"jsonrpc":"2.0","id":1,"method":"core.ping"}]`, rpcInvalidRequest, nil, "is not of type 'object'"},
		{"wrong version", `{"jsonrpc":"1.0","id":1,"method":"core.ping"}`, rpcInvalidRequest, nil, "is not one of ['2.0']"},
		{"no jsonrpc", `{"id":1,"method":"core.ping"}`, rpcInvalidRequest, nil, "'jsonrpc' is a required property"},
		{"no method", `{"jsonrpc":"2.0","id":1}`, rpcInvalidRequest, nil, "'method' is a required property"},
		{"method not a string", `{"jsonrpc":"2.0","id":1,"method":5}`, rpcInvalidRequest, nil, "is not of type 'string'"},
		{"params object", `{"jsonrpc":"2.0","id":1,"method":"core.ping","params":{}}`, rpcInvalidRequest, nil, "is not of type 'array'"},
		{"id object", `{"jsonrpc":"2.0","id":{},"method":"core.ping"}`, rpcInvalidRequest, nil, "is not of type 'null', 'number', 'string'"},
		{"extra member", `{"jsonrpc":"2.0","id":1,"method":"core.ping","x":1}`, rpcInvalidRequest, nil, "Additional properties"},
		{"unknown method", `{"jsonrpc":"2.0","id":77,"method":"no.such"}`, rpcMethodNotFound, float64(77), "Method does not exist"},
		{"unknown method, string id", `{"jsonrpc":"2.0","id":"x-1","method":"pool.nothing"}`, rpcMethodNotFound, "x-1", "Method does not exist"},
	}
	c := dialRPC(t, s)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c.sendRaw(tc.msg)
			m := c.nextOther()
			e, _ := m["error"].(map[string]any)
			if e == nil {
				t.Fatalf("answer %v has no error", m)
			}
			if code, _ := e["code"].(float64); int(code) != tc.code {
				t.Errorf("code %v, want %d", e["code"], tc.code)
			}
			if m["id"] != tc.id {
				t.Errorf("id %v, want %v", m["id"], tc.id)
			}
			if msg, _ := e["message"].(string); !strings.Contains(msg, tc.text) {
				t.Errorf("message %q does not contain %q", msg, tc.text)
			}
		})
	}
}

// TestJSONRPCErrorRendering: each kind of service error has middlewared's
// code and data.
func TestJSONRPCErrorRendering(t *testing.T) {
	s := startServer(t, "25.10")
	c := dialRPC(t, s)
	c.login()
	cases := []struct {
		method  string
		code    int
		message string
		errno   float64
		errname string
		reason  string
		extra   string // JSON
	}{
		{"test.callerror", rpcMethodCallError, "Method call error", 2, "ENOENT", "[ENOENT] gone", `{"k":"v"}`},
		{"test.invalid", rpcInvalidParams, "Invalid params", 22, "EINVAL", "[EINVAL] test.x: bad\n[EEXIST] test.y: worse\n",
			`[["test.x","bad",22],["test.y","worse",17]]`},
		{"test.notfound", rpcInvalidParams, "Invalid params", 22, "EINVAL", "[ENOENT] None: Thing 1 does not exist",
			`[[null,"Thing 1 does not exist",2]]`},
		{"test.panic", rpcInternalError, "Internal error", 22, "EINVAL", "panic in method handler: handler exploded", `null`},
		{"test.plainerr", rpcInternalError, "Internal error", 22, "EINVAL", "disk on fire", `null`},
	}
	for _, tc := range cases {
		t.Run(tc.method, func(t *testing.T) {
			a := c.call(tc.method)
			if a.Error == nil {
				t.Fatalf("no error: %s", a.Result)
			}
			e := a.Error
			if e.Code != tc.code || e.Message != tc.message {
				t.Errorf("got %d %q, want %d %q", e.Code, e.Message, tc.code, tc.message)
			}
			if e.Data["error"] != tc.errno || e.Data["errname"] != tc.errname || e.Data["reason"] != tc.reason {
				t.Errorf("data %v, want error %v errname %s reason %q", e.Data, tc.errno, tc.errname, tc.reason)
			}
			extra, _ := json.Marshal(e.Data["extra"])
			if !jsonEqual(t, extra, tc.extra) {
				t.Errorf("extra %s, want %s", extra, tc.extra)
			}
		})
	}
	// The server survived the panic.
	var pong string
	c.result("core.ping", &pong)
	if pong != "pong" {
		t.Errorf("core.ping = %q after a panic", pong)
	}
}

// TestJSONRPCNotAuthenticated: only core.ping and auth.* work before login;
// the rest fail with ENOTAUTHENTICATED (errno 207), which clients re-login on.
func TestJSONRPCNotAuthenticated(t *testing.T) {
	s := startServer(t, "25.04")
	c := dialRPC(t, s)
	var pong string
	c.result("core.ping", &pong)
	if pong != "pong" {
		t.Fatalf("core.ping = %q", pong)
	}
	for _, m := range []string{"system.info", "core.get_jobs", "auth.me", "test.ok"} {
		a := c.call(m)
		if a.Error == nil || a.Error.Code != rpcMethodCallError || a.Error.Data["errname"] != "ENOTAUTHENTICATED" ||
			a.Error.Data["error"] != float64(207) || a.Error.Data["reason"] != "[ENOTAUTHENTICATED] Not authenticated" {
			t.Errorf("%s before login: %+v", m, a.Error)
		}
	}
	c.login()
	var me map[string]any
	c.result("auth.me", &me)
	if me["pw_name"] != "root" {
		t.Errorf("auth.me = %v", me)
	}
}

// TestJSONRPCNotification: a request without id runs but gets no answer.
func TestJSONRPCNotification(t *testing.T) {
	s := startServer(t, "25.04")
	c := dialRPC(t, s)
	c.login()
	c.sendRaw(`{"jsonrpc":"2.0","method":"test.ok","params":["quiet"]}`)
	var pong string
	c.result("core.ping", &pong)
	select {
	case m := <-c.other:
		t.Fatalf("notification answered: %v", m)
	case <-time.After(200 * time.Millisecond):
	}
	calls := s.Calls()
	found := false
	for _, r := range calls {
		found = found || r.Method == "test.ok" && string(r.Params) == `["quiet"]`
	}
	if !found {
		t.Errorf("the notification did not run: %+v", calls)
	}
}

// TestJSONRPCCompletionOrder: calls on one connection run concurrently and
// are answered as they finish.
func TestJSONRPCCompletionOrder(t *testing.T) {
	s := startServer(t, "25.04")
	c := dialRPC(t, s)
	c.login()
	slow := c.send(`"slow"`, "test.sleep", 400)
	fast := c.send(`"fast"`, "test.sleep", 1)
	select {
	case a := <-fast:
		if string(a.Result) != "1" {
			t.Fatalf("fast: %s %+v", a.Result, a.Error)
		}
	case <-slow:
		t.Fatal("the slow call was answered first: calls are serialised")
	case <-time.After(waitTimeout):
		t.Fatal("no answer")
	}
	if a := c.wait(slow, "slow"); string(a.Result) != "400" {
		t.Fatalf("slow: %s %+v", a.Result, a.Error)
	}
}

// TestJSONRPCConcurrencyLimit: more than MaxConcurrentCalls in flight is
// -32000; half of the limit runs at once, the rest waits.
func TestJSONRPCConcurrencyLimit(t *testing.T) {
	var running, peak int
	var mu sync.Mutex
	release := make(chan struct{})
	s := startServer(t, "25.04", func(o *Options) { o.MaxConcurrentCalls = 4 })
	s.Registry().Add(middleware.Method{Name: "test.block", Handler: func(c *middleware.Call, _ []json.RawMessage) (any, error) {
		mu.Lock()
		running++
		peak = max(peak, running)
		mu.Unlock()
		defer func() { mu.Lock(); running--; mu.Unlock() }()
		select {
		case <-release:
			return "released", nil
		case <-c.Ctx.Done():
			return nil, c.Ctx.Err()
		}
	}})
	c := dialRPC(t, s)
	c.login()
	var chans []chan rpcAnswer
	for i := range 4 {
		chans = append(chans, c.send(itoa(100+i), "test.block"))
	}
	// The fifth is refused at once.
	over := c.wait(c.send("200", "test.block"), "fifth call")
	if over.Error == nil || over.Error.Code != rpcTooManyCalls ||
		over.Error.Message != "Maximum number of concurrent calls (4) has exceeded" {
		t.Fatalf("fifth call: %+v", over.Error)
	}
	// Another connection has its own limit.
	c2 := dialRPC(t, s)
	var pong string
	c2.result("core.ping", &pong)
	close(release)
	for i, ch := range chans {
		if a := c.wait(ch, "blocked call"); string(a.Result) != `"released"` {
			t.Errorf("call %d: %s %+v", i, a.Result, a.Error)
		}
	}
	if peak != 2 {
		t.Errorf("%d calls ran at once, want 2 (the soft limit, half of 4)", peak)
	}
	if st := s.Stats(); st.RejectedCalls != 1 {
		t.Errorf("RejectedCalls = %d, want 1", st.RejectedCalls)
	}
}

// TestJSONRPCBinaryMessage: binary frames close the connection (1003).
func TestJSONRPCBinaryMessage(t *testing.T) {
	s := startServer(t, "25.04")
	ws, _, err := dialWS(t, wsURL(s.URL(), "/api/current"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	if err := ws.Write(context.Background(), websocket.MessageBinary, []byte("{}")); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	_, _, err = ws.Read(ctx)
	var ce websocket.CloseError
	if !errors.As(err, &ce) || ce.Code != websocket.StatusUnsupportedData {
		t.Fatalf("read after a binary frame: %v, want close 1003", err)
	}
}
