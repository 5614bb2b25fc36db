package truenas

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"runtime/debug"
	"time"

	"github.com/switchyard-csi/switchyard/simulators/truenas/middleware"
)

// noAuthMethods may be called before logging in (middlewared's
// no_auth_required methods that clients use).
var noAuthMethods = map[string]bool{
	"core.ping": true, "auth.login": true, "auth.login_with_api_key": true, "auth.login_ex": true,
}

// outcome is what a transport answers for one call.
type outcome struct {
	result any
	err    error
	// drop: Faults.DropAfter fired; the call took effect but the
	// transport must close the connection instead of answering.
	drop bool
}

// call runs one method call for a session: the path every transport shares
// (records, authentication, faults, jobs, panics).
func (s *Server) call(g *generation, ss *session, method string, params []json.RawMessage) outcome {
	user, cred := ss.identity()
	rec := s.rec.start(ss.transport, method, redactParams(method, params), user)
	s.stats.countCall(ss.transport)
	start := time.Now()
	res, err := s.invoke(g, ss, method, params, user, cred)
	rec.finish(err)
	// Asked first: the arguments, boxed for the logger, were five
	// allocations per call with debug logging off (issue 16, eighth round).
	switch {
	case !s.log.Enabled(g.ctx, slog.LevelDebug):
	case err != nil:
		s.log.Debug("call failed", "transport", ss.transport, "method", method, "user", user, "duration", time.Since(start), "error", err)
	default:
		s.log.Debug("call", "transport", ss.transport, "method", method, "user", user, "duration", time.Since(start))
	}
	return outcome{result: res, err: err, drop: s.faults.TakeDrop()}
}

func (s *Server) invoke(g *generation, ss *session, method string, params []json.RawMessage, user, cred string) (any, error) {
	m, ok := s.reg.Lookup(method)
	if !ok {
		svc, _, _ := cutLast(method, ".")
		return nil, &noMethodError{method: method, knownService: s.reg.HasNamespace(svc) || s.census != nil && s.census.HasService(svc)}
	}
	if user == "" && !noAuthMethods[method] {
		return nil, errNotAuthenticated
	}
	if d := s.faults.Delay(method); d > 0 {
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-g.ctx.Done():
			t.Stop()
			return nil, &middleware.CallError{Errno: middleware.EFAULT, Message: "server restarted"}
		}
	}
	if s.faults.Fail(method) {
		return nil, errInjected
	}
	ctx := context.WithValue(g.ctx, sessionKey{}, ss)
	if m.Job {
		if m.Validate != nil {
			if err := m.Validate(params); err != nil {
				return nil, err
			}
		}
		j := s.jobs.submit(ctx, m, params, user, cred)
		if ss.transport != transportWebSocket || ss.jobsAsIDs() {
			return j.id, nil
		}
		return j.wait(ctx)
	}
	c := &middleware.Call{Ctx: ctx, Version: s.version, User: user, Progress: func(float64, string) {}}
	return runHandler(m.Handler, c, params)
}

// runHandler calls h, turning a panic into a *panicError: a bad handler
// must never take the server down or leave a client without an answer.
func runHandler(h middleware.Handler, c *middleware.Call, params []json.RawMessage) (res any, err error) {
	defer func() {
		if r := recover(); r != nil {
			res, err = nil, &panicError{value: r, stack: string(debug.Stack())}
		}
	}()
	if h == nil {
		return nil, fmt.Errorf("method has no handler")
	}
	if params == nil {
		params = []json.RawMessage{}
	}
	return h(c, params)
}

// redactParams hides credentials from call records, as middlewared's
// dump_args does for its audit log.
func redactParams(method string, params []json.RawMessage) json.RawMessage {
	const hidden = `"********"`
	p := append([]json.RawMessage(nil), params...)
	switch method {
	case "auth.login":
		for i := 1; i < len(p); i++ {
			p[i] = json.RawMessage(hidden)
		}
	case "auth.login_with_api_key":
		for i := range p {
			p[i] = json.RawMessage(hidden)
		}
	case "auth.login_ex":
		if len(p) > 0 {
			var m map[string]any
			if json.Unmarshal(p[0], &m) == nil {
				for _, k := range []string{"password", "api_key", "token", "otp_token"} {
					if _, ok := m[k]; ok {
						m[k] = "********"
					}
				}
				p[0], _ = json.Marshal(m)
			} else {
				p[0] = json.RawMessage(hidden)
			}
		}
	}
	if p == nil {
		p = []json.RawMessage{}
	}
	if out, ok := joinPlain(p); ok {
		return out
	}
	out, err := json.Marshal(p)
	if err != nil {
		return json.RawMessage("[]")
	}
	return out
}

// joinPlain is json.Marshal(params) for the usual parameters: valid JSON
// with no byte that Marshal's compaction and HTML escaping would change
// (whitespace, <, >, &, and U+2028/U+2029, which start with 0xE2), so
// Marshal would copy them as they are. ok is false for anything else,
// which takes Marshal. Marshal compacted and scanned every call's
// parameters twice for its record: 2 % of the simulator's CPU (issue 16,
// sixth round).
func joinPlain(params []json.RawMessage) (json.RawMessage, bool) {
	n := 2
	for _, p := range params {
		if len(p) == 0 || !plainBytes(p) || !json.Valid(p) {
			return nil, false
		}
		n += len(p) + 1
	}
	out := make([]byte, 0, n)
	out = append(out, '[')
	for i, p := range params {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, p...)
	}
	return append(out, ']'), true
}

// plainBytes reports whether p has none of the bytes joinPlain excludes.
func plainBytes(p []byte) bool {
	for _, b := range p {
		switch b {
		case ' ', '\t', '\r', '\n', '<', '>', '&', 0xe2:
			return false
		}
	}
	return true
}
