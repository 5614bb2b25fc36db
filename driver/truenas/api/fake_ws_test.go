package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/coder/websocket"
)

// fakeWSConn is one JSON-RPC connection on the fake server. Calls run
// concurrently and are answered in completion order, as the middleware does.
type fakeWSConn struct {
	f          *fakeNAS
	ws         *websocket.Conn
	authed     atomic.Bool
	legacyJobs atomic.Bool
	inFlight   atomic.Int64
	cancel     context.CancelFunc
	wg         sync.WaitGroup
}

func (f *fakeNAS) serveWS(w http.ResponseWriter, r *http.Request) {
	ws, err := websocket.Accept(w, r, nil)
	if err != nil {
		return
	}
	ws.SetReadLimit(1 << 24)
	ctx, cancel := context.WithCancel(context.Background())
	c := &fakeWSConn{f: f, ws: ws, cancel: cancel}
	c.legacyJobs.Store(true)
	f.accepted.Add(1)
	f.mu.Lock()
	f.conns[c] = true
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		delete(f.conns, c)
		f.mu.Unlock()
		cancel()
		_ = ws.CloseNow()
	}()
	for {
		_, data, err := ws.Read(ctx)
		if err != nil {
			return
		}
		var req struct {
			JSONRPC string            `json:"jsonrpc"`
			ID      json.RawMessage   `json:"id"`
			Method  string            `json:"method"`
			Params  []json.RawMessage `json:"params"`
		}
		if err := json.Unmarshal(data, &req); err != nil || req.JSONRPC != "2.0" || req.Method == "" {
			c.send(ctx, map[string]any{"jsonrpc": "2.0", "id": nil, "error": map[string]any{"code": -32600, "message": "Invalid Request"}})
			continue
		}
		f.mu.Lock()
		drop := f.dropOn != "" && req.Method == f.dropOn
		f.mu.Unlock()
		f.mu.Lock()
		freeze := f.freezeOn != "" && req.Method == f.freezeOn
		f.mu.Unlock()
		if freeze {
			// A peer that vanished without closing TCP: nothing is read
			// (so pings go unanswered) and nothing is sent.
			<-ctx.Done()
			return
		}
		if drop {
			f.mu.Lock()
			f.methodLog = append(f.methodLog, req.Method)
			f.mu.Unlock()
			_ = ws.CloseNow()
			return
		}
		if limit := f.maxInFlight; limit > 0 && c.inFlight.Add(1) > int64(limit) {
			c.inFlight.Add(-1)
			c.sendError(ctx, req.ID, -32000, fmt.Sprintf("Maximum number of concurrent calls (%d) has exceeded", limit), nil)
			continue
		} else if limit == 0 {
			c.inFlight.Add(1)
		}
		c.wg.Add(1)
		go func() {
			defer c.wg.Done()
			var once sync.Once
			release := func() { once.Do(func() { c.inFlight.Add(-1) }) }
			defer release()
			c.dispatch(context.WithValue(ctx, fakeReleaseKey{}, release), req.ID, req.Method, req.Params)
		}()
	}
}

func (c *fakeWSConn) dispatch(ctx context.Context, id json.RawMessage, method string, params []json.RawMessage) {
	f := c.f
	f.mu.Lock()
	_, known := f.handlers[method]
	f.mu.Unlock()
	switch method {
	case "auth.login", "auth.login_with_api_key", "core.set_options", "core.get_jobs":
		known = true
	case "auth.login_ex":
		known = f.loginEx
	}
	if !known { // the middleware looks the method up before checking auth
		f.mu.Lock()
		f.methodLog = append(f.methodLog, method)
		f.mu.Unlock()
		c.sendError(ctx, id, -32601, "Method does not exist", nil)
		return
	}
	switch {
	case method == "auth.login_ex":
		f.logins.Add(1)
		f.mu.Lock()
		f.methodLog = append(f.methodLog, method)
		f.mu.Unlock()
		var cred map[string]string
		if len(params) != 1 || json.Unmarshal(params[0], &cred) != nil {
			c.sendError(ctx, id, -32602, "Invalid params", map[string]any{"error": 22, "errname": "EINVAL", "reason": "bad login_data",
				"extra": [][]any{{"auth.login_ex.login_data", "bad login_data", 22}}})
			return
		}
		ok := false
		switch cred["mechanism"] {
		case "PASSWORD_PLAIN":
			ok = f.checkPassword(cred["username"], cred["password"])
		case "API_KEY_PLAIN":
			ok = cred["username"] == f.user && f.checkKey(cred["api_key"])
		}
		c.authed.Store(ok)
		resp := "AUTH_ERR"
		if ok {
			resp = "SUCCESS"
		}
		c.send(ctx, map[string]any{"jsonrpc": "2.0", "id": id, "result": map[string]any{"response_type": resp}})
		return
	case method == "auth.login" || method == "auth.login_with_api_key":
		f.logins.Add(1)
		f.mu.Lock()
		f.methodLog = append(f.methodLog, method)
		f.mu.Unlock()
		var args []string
		for _, p := range params {
			var s string
			_ = json.Unmarshal(p, &s)
			args = append(args, s)
		}
		ok := false
		if method == "auth.login" && len(args) >= 2 {
			ok = f.checkPassword(args[0], args[1])
		} else if method == "auth.login_with_api_key" && len(args) == 1 {
			ok = f.checkKey(args[0])
		}
		c.authed.Store(ok)
		c.send(ctx, map[string]any{"jsonrpc": "2.0", "id": id, "result": ok})
		return
	case method == "core.ping":
	case !c.authed.Load():
		c.sendError(ctx, id, -32001, "Method call error",
			map[string]any{"error": 207, "errname": "ENOTAUTHENTICATED", "reason": "[ENOTAUTHENTICATED] Not authenticated", "extra": nil})
		return
	case method == "core.set_options":
		if !strings.HasPrefix(f.version, "TrueNAS-25.10") && !strings.HasPrefix(f.version, "TrueNAS-26") {
			c.sendError(ctx, id, -32601, "Method does not exist", nil)
			return
		}
		var opts map[string]bool
		if len(params) == 1 && json.Unmarshal(params[0], &opts) == nil {
			if v, ok := opts["legacy_jobs"]; ok {
				c.legacyJobs.Store(v)
			}
		}
		f.mu.Lock()
		f.methodLog = append(f.methodLog, method)
		f.mu.Unlock()
		c.send(ctx, map[string]any{"jsonrpc": "2.0", "id": id, "result": nil})
		return
	}
	res, err := f.invoke(ctx, method, params, c.legacyJobs.Load())
	if err != nil {
		c.sendErr(ctx, id, err)
		return
	}
	c.send(ctx, map[string]any{"jsonrpc": "2.0", "id": id, "result": res})
}

// sendErr renders a handler's error as the middleware's rpc.py does.
func (c *fakeWSConn) sendErr(ctx context.Context, id json.RawMessage, err error) {
	var (
		ce  fakeCallError
		ve  fakeValidation
		nf  fakeInstanceNotFound
		rpc fakeRPCError
	)
	switch {
	case errors.As(err, &rpc):
		c.sendError(ctx, id, rpc.code, rpc.msg, nil)
	case errors.As(err, &ce):
		name := errnoNames[ce.errno]
		c.sendError(ctx, id, -32001, "Method call error",
			map[string]any{"error": ce.errno, "errname": name, "reason": "[" + name + "] " + ce.msg, "trace": nil, "extra": nil})
	case errors.As(err, &ve):
		var extra [][]any
		var reason strings.Builder
		for _, fl := range ve {
			extra = append(extra, []any{fl.attr, fl.msg, fl.errno})
			fmt.Fprintf(&reason, "[%s] %s: %s\n", errnoNames[fl.errno], fl.attr, fl.msg)
		}
		c.sendError(ctx, id, -32602, "Invalid params",
			map[string]any{"error": 22, "errname": "EINVAL", "reason": reason.String(), "trace": nil, "extra": extra})
	case errors.As(err, &nf):
		c.sendError(ctx, id, -32602, "Invalid params",
			map[string]any{"error": 22, "errname": "EINVAL", "reason": "[ENOENT] None: " + string(nf), "trace": nil,
				"extra": [][]any{{nil, string(nf), 2}}})
	default:
		c.sendError(ctx, id, -32001, "Method call error",
			map[string]any{"error": 22, "errname": "EINVAL", "reason": err.Error(), "trace": nil, "extra": nil})
	}
}

func (c *fakeWSConn) sendError(ctx context.Context, id json.RawMessage, code int, msg string, data map[string]any) {
	e := map[string]any{"code": code, "message": msg}
	if data != nil {
		e["data"] = data
	}
	c.send(ctx, map[string]any{"jsonrpc": "2.0", "id": id, "error": e})
}

func (c *fakeWSConn) send(ctx context.Context, msg map[string]any) {
	b, err := json.Marshal(msg)
	if err != nil {
		panic(err)
	}
	// The call leaves the in-flight count before its answer is sent, as in
	// middlewared (and simulators/truenas): a client that sends its next
	// call on an answer must not be refused for it.
	if release, ok := ctx.Value(fakeReleaseKey{}).(func()); ok {
		release()
	}
	_ = c.ws.Write(ctx, websocket.MessageText, b)
}

// fakeReleaseKey carries a call's release from the in-flight count.
type fakeReleaseKey struct{}

// expireSessions logs every connection out (the next call gets ENOTAUTHENTICATED).
func (f *fakeNAS) expireSessions() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for c := range f.conns {
		c.authed.Store(false)
	}
}

// dropAll closes every WebSocket abruptly.
func (f *fakeNAS) dropAll() {
	f.mu.Lock()
	conns := make([]*fakeWSConn, 0, len(f.conns))
	for c := range f.conns {
		conns = append(conns, c)
	}
	f.mu.Unlock()
	for _, c := range conns {
		c.cancel() // also ends a frozen read loop
		_ = c.ws.CloseNow()
	}
}

func (f *fakeNAS) openConns() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.conns)
}
