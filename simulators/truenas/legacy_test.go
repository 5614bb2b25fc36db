package truenas

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// legacyClient speaks the /websocket protocol.
type legacyClient struct {
	t       *testing.T
	ws      *websocket.Conn
	mu      sync.Mutex
	next    int
	pending map[string]chan map[string]any
	other   chan map[string]any
	done    chan struct{}
}

func dialLegacy(t *testing.T, s *Server) *legacyClient {
	t.Helper()
	ws, _, err := dialWS(t, wsURL(s.URL(), "/websocket"), nil)
	if err != nil {
		t.Fatalf("dial /websocket: %v", err)
	}
	c := &legacyClient{t: t, ws: ws, pending: map[string]chan map[string]any{}, other: make(chan map[string]any, 100), done: make(chan struct{})}
	t.Cleanup(func() { ws.CloseNow() })
	go c.read()
	c.send(map[string]any{"msg": "connect", "version": "1", "support": []string{"1"}})
	if m := c.nextOther(); m["msg"] != "connected" || m["session"] == "" {
		t.Fatalf("handshake answer %v", m)
	}
	return c
}

func (c *legacyClient) read() {
	defer close(c.done)
	for {
		_, data, err := c.ws.Read(context.Background())
		if err != nil {
			return
		}
		var m map[string]any
		json.Unmarshal(data, &m)
		id, _ := m["id"].(string)
		c.mu.Lock()
		ch, ok := c.pending[id]
		delete(c.pending, id)
		c.mu.Unlock()
		if ok && m["msg"] == "result" {
			ch <- m
			continue
		}
		c.other <- m
	}
}

func (c *legacyClient) send(v any) {
	c.t.Helper()
	data, _ := json.Marshal(v)
	if err := c.ws.Write(context.Background(), websocket.MessageText, data); err != nil {
		c.t.Fatal(err)
	}
}

func (c *legacyClient) nextOther() map[string]any {
	c.t.Helper()
	select {
	case m := <-c.other:
		return m
	case <-time.After(waitTimeout):
		c.t.Fatal("no message")
	}
	return nil
}

// legacyAnswer is a "result" message.
type legacyAnswer struct {
	Result json.RawMessage
	Error  map[string]any
}

func (c *legacyClient) call(method string, params ...any) legacyAnswer {
	c.t.Helper()
	if params == nil {
		params = []any{}
	}
	c.mu.Lock()
	c.next++
	id := fmt.Sprintf("call-%d", c.next)
	ch := make(chan map[string]any, 1)
	c.pending[id] = ch
	c.mu.Unlock()
	c.send(map[string]any{"msg": "method", "id": id, "method": method, "params": params})
	select {
	case m := <-ch:
		var a legacyAnswer
		a.Result, _ = json.Marshal(m["result"])
		a.Error, _ = m["error"].(map[string]any)
		return a
	case <-c.done:
		c.t.Fatalf("%s: connection closed", method)
	case <-time.After(waitTimeout):
		c.t.Fatalf("%s: no answer", method)
	}
	return legacyAnswer{}
}

func (c *legacyClient) result(method string, v any, params ...any) {
	c.t.Helper()
	a := c.call(method, params...)
	if a.Error != nil {
		c.t.Fatalf("%s: %v", method, a.Error)
	}
	if err := json.Unmarshal(a.Result, v); err != nil {
		c.t.Fatalf("%s: %s: %v", method, a.Result, err)
	}
}

func (c *legacyClient) login(user, password string) {
	c.t.Helper()
	var ok bool
	c.result("auth.login", &ok, user, password)
	if !ok {
		c.t.Fatalf("auth.login %s refused", user)
	}
}

// TestLegacyProtocol (24.10): handshake, ping, errors in the legacy shape,
// and job events through a core.get_jobs subscription.
func TestLegacyProtocol(t *testing.T) {
	s := startServer(t, "24.10")
	jobMethods(s.Registry(), make(chan struct{}, 1))

	// Messages before "connect" and a wrong version fail.
	ws, _, err := dialWS(t, wsURL(s.URL(), "/websocket"), nil)
	if err != nil {
		t.Fatal(err)
	}
	raw := &legacyClient{t: t, ws: ws, pending: map[string]chan map[string]any{}, other: make(chan map[string]any, 10), done: make(chan struct{})}
	go raw.read()
	raw.send(map[string]any{"msg": "method", "id": "1", "method": "core.ping"})
	if m := raw.nextOther(); m["msg"] != "failed" {
		t.Errorf("method before connect: %v", m)
	}
	raw.send(map[string]any{"msg": "connect", "version": "2", "support": []string{"2"}})
	if m := raw.nextOther(); m["msg"] != "failed" || m["version"] != "1" {
		t.Errorf("connect version 2: %v", m)
	}
	ws.CloseNow()

	c := dialLegacy(t, s)
	c.send(map[string]any{"msg": "ping", "id": "p1"})
	if m := c.nextOther(); m["msg"] != "pong" || m["id"] != "p1" {
		t.Errorf("ping: %v", m)
	}
	cases := []struct {
		name, method string
		login        bool
		errno        float64
		errname      string
		typ          any
		reason       string
	}{
		{"before login", "system.info", false, 207, "ENOTAUTHENTICATED", nil, "[ENOTAUTHENTICATED] Not authenticated"},
		{"unknown method", "no.such", true, 201, "ENOMETHOD", nil, `[ENOMETHOD] Service 'no' not found`},
		{"unknown method of a known service", "pool.dataset.nothing", true, 201, "ENOMETHOD", nil, `[ENOMETHOD] Method 'nothing' not found in 'pool.dataset'`},
		{"method name without a dot", "nodot", true, 74, "EBADMSG", nil, `[EBADMSG] Invalid method name`},
		{"CallError", "test.callerror", true, 2, "ENOENT", nil, "[ENOENT] gone"},
		{"validation", "test.invalid", true, 11, "EAGAIN", "VALIDATION", "[EINVAL] test.x: bad\n[EEXIST] test.y: worse\n"},
		{"instance not found", "test.notfound", true, 2, "ENOENT", "VALIDATION", "[ENOENT] None: Thing 1 does not exist"},
		{"panic", "test.panic", true, 22, "EINVAL", nil, "panic in method handler: handler exploded"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.login {
				c.login("root", "secret")
			}
			e := c.call(tc.method).Error
			if e == nil || e["error"] != tc.errno || e["errname"] != tc.errname || e["type"] != tc.typ || e["reason"] != tc.reason {
				t.Errorf("error %v", e)
			}
		})
	}
	// Job events.
	c.send(map[string]any{"msg": "sub", "id": "sub-1", "name": "core.get_jobs"})
	if m := c.nextOther(); m["msg"] != "ready" {
		t.Fatalf("sub: %v", m)
	}
	var id int
	c.result("test.job.ok", &id, "z")
	for {
		m := c.nextOther()
		if m["collection"] != "core.get_jobs" || m["id"] != float64(id) {
			t.Fatalf("event %v", m)
		}
		if f := m["fields"].(map[string]any); m["msg"] == "changed" && f["state"] == "SUCCESS" {
			break
		}
	}
}
