package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeNAS is a small TrueNAS middleware for tests: JSON-RPC 2.0 over a
// WebSocket at /api/current and/or REST at /api/v2.0, speaking the wire
// formats the real server does (see fake_ws_test.go, fake_rest_test.go).
// Handlers are registered per method; errors they return pick the wire
// error shape.
type fakeNAS struct {
	t       testing.TB
	version string // system.version
	ws      bool   // serve /api/current (25.04+)
	rest    bool   // serve /api/v2.0 (up to 25.10)
	user    string
	pass    string
	apiKey  string
	loginEx bool // auth.login_ex exists
	// maxInFlight per WebSocket: more at once answer -32000 (0 = no limit).
	maxInFlight int

	mu        sync.Mutex
	handlers  map[string]fakeHandler
	jobs      map[string]bool // methods that are jobs
	jobTable  map[int64]*fakeJob
	nextJob   int64
	conns     map[*fakeWSConn]bool
	restLog   []restRecord
	dropOn    string // close the socket when this method arrives (no answer)
	freezeOn  string // stop reading and answering the socket when this method arrives
	methodLog []string

	logins   atomic.Int64
	accepted atomic.Int64 // WebSocket connections accepted

	srv *httptest.Server
}

type fakeHandler func(ctx context.Context, params []json.RawMessage) (any, error)

type fakeJob struct {
	id     int64
	method string
	state  string
	result any
	err    error
}

// Errors a handler returns to choose the wire error.
type (
	// fakeCallError is a CallError: -32001 / REST 422 {"message","errno"}.
	fakeCallError struct {
		errno int
		msg   string
	}
	// fakeValidation is ValidationErrors: -32602 extra / REST 422 {attr: [...]}.
	fakeValidation []fakeField
	fakeField      struct {
		attr  string
		msg   string
		errno int
	}
	// fakeInstanceNotFound is get_instance's miss: -32602 [[null, msg, ENOENT]] / REST 404 {"message"}.
	fakeInstanceNotFound string
	// fakeRPCError forces a raw JSON-RPC error code.
	fakeRPCError struct {
		code int
		msg  string
	}
)

func (e fakeCallError) Error() string        { return e.msg }
func (e fakeValidation) Error() string       { return "validation" }
func (e fakeInstanceNotFound) Error() string { return string(e) }
func (e fakeRPCError) Error() string         { return e.msg }

const testAPIKey = "1-0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ01"

// newFakeNAS starts a server for version v ("24.10", "25.04", "25.10", "26.04").
func newFakeNAS(t testing.TB, v string) *fakeNAS {
	t.Helper()
	f := &fakeNAS{
		t:        t,
		user:     "root",
		pass:     "s3cret-Passw0rd",
		apiKey:   testAPIKey,
		loginEx:  true,
		handlers: map[string]fakeHandler{},
		jobs:     map[string]bool{},
		jobTable: map[int64]*fakeJob{},
		conns:    map[*fakeWSConn]bool{},
	}
	switch v {
	case "24.10":
		f.version, f.rest = "TrueNAS-SCALE-24.10.2", true
	case "25.04":
		f.version, f.rest, f.ws = "TrueNAS-25.04.2", true, true
	case "25.10":
		f.version, f.rest, f.ws = "TrueNAS-25.10.1", true, true
	case "26.04":
		f.version, f.ws = "TrueNAS-26.04.0", true
	default:
		t.Fatalf("fake version %q", v)
	}
	f.handle("system.version", func(context.Context, []json.RawMessage) (any, error) { return f.version, nil })
	f.handle("core.ping", func(context.Context, []json.RawMessage) (any, error) { return "pong", nil })
	f.handle("test.echo", func(_ context.Context, p []json.RawMessage) (any, error) {
		if len(p) == 0 {
			return nil, nil
		}
		return p[0], nil
	})
	f.srv = httptest.NewUnstartedServer(http.HandlerFunc(f.serveHTTP))
	f.srv.Config.ErrorLog = log.New(io.Discard, "", 0) // TLS handshake failures are the point of some tests
	return f
}

func (f *fakeNAS) start() *fakeNAS {
	f.srv.Start()
	f.t.Cleanup(f.close)
	return f
}

func (f *fakeNAS) startTLS() *fakeNAS {
	f.srv.StartTLS()
	f.t.Cleanup(f.close)
	return f
}

func (f *fakeNAS) close() {
	f.dropAll()
	f.srv.Close()
}

func (f *fakeNAS) handle(method string, h fakeHandler) {
	f.mu.Lock()
	f.handlers[method] = h
	f.mu.Unlock()
}

// handleJob registers a job method: it answers a job id unless the
// connection turned legacy jobs off.
func (f *fakeNAS) handleJob(method string, h fakeHandler) {
	f.handle(method, h)
	f.mu.Lock()
	f.jobs[method] = true
	f.mu.Unlock()
}

func (f *fakeNAS) hostPort() (string, int) {
	h, p, err := net.SplitHostPort(f.srv.Listener.Addr().String())
	if err != nil {
		f.t.Fatal(err)
	}
	n, _ := strconv.Atoi(p)
	return h, n
}

// config is a client config for this server with password auth.
func (f *fakeNAS) config() Config {
	h, p := f.hostPort()
	proto := "http"
	if f.srv.TLS != nil {
		proto = "https"
	}
	return Config{Host: h, Port: p, Protocol: proto, Username: f.user, Password: f.pass, Timeout: 10 * time.Second}
}

func (f *fakeNAS) keyConfig() Config {
	cfg := f.config()
	cfg.Password = ""
	cfg.APIKey = f.apiKey
	return cfg
}

func (f *fakeNAS) serveHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path == "/api/current" && f.ws:
		f.serveWS(w, r)
	case strings.HasPrefix(r.URL.Path, "/api/v2.0/") && f.rest:
		f.serveREST(w, r)
	default:
		http.Error(w, "404: Not Found", http.StatusNotFound)
	}
}

// invoke runs a handler (jobs included), recording the method.
func (f *fakeNAS) invoke(ctx context.Context, method string, params []json.RawMessage, legacyJobs bool) (any, error) {
	f.mu.Lock()
	h := f.handlers[method]
	isJob := f.jobs[method]
	f.methodLog = append(f.methodLog, method)
	f.mu.Unlock()
	if method == "core.get_jobs" {
		return f.getJobs(params)
	}
	if h == nil {
		return nil, fakeRPCError{code: -32601, msg: "Method does not exist"}
	}
	if !isJob || !legacyJobs {
		return h(ctx, params)
	}
	f.mu.Lock()
	f.nextJob++
	j := &fakeJob{id: f.nextJob, method: method, state: "RUNNING"}
	f.jobTable[j.id] = j
	f.mu.Unlock()
	go func() {
		res, err := h(context.Background(), params)
		f.mu.Lock()
		j.result, j.err, j.state = res, err, "SUCCESS"
		if err != nil {
			j.state = "FAILED"
		}
		f.mu.Unlock()
	}()
	return j.id, nil
}

// getJobs answers core.get_jobs([["id","=",N]]).
func (f *fakeNAS) getJobs(params []json.RawMessage) (any, error) {
	var filters [][]any
	if len(params) > 0 {
		if err := json.Unmarshal(params[0], &filters); err != nil {
			return nil, fakeValidation{{attr: "core.get_jobs.filters", msg: err.Error(), errno: 22}}
		}
	}
	want := int64(-1)
	for _, flt := range filters {
		if len(flt) == 3 && flt[0] == "id" && flt[1] == "=" {
			if n, ok := flt[2].(float64); ok {
				want = int64(n)
			}
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []map[string]any
	for id, j := range f.jobTable {
		if want >= 0 && id != want {
			continue
		}
		e := map[string]any{"id": j.id, "method": j.method, "state": j.state, "result": j.result, "error": nil, "exc_info": nil}
		if j.err != nil {
			e["result"] = nil
			switch je := j.err.(type) {
			case fakeValidation:
				var extra [][]any
				msgs := []string{}
				for _, fl := range je {
					extra = append(extra, []any{fl.attr, fl.msg, fl.errno})
					msgs = append(msgs, fmt.Sprintf("[EINVAL] %s: %s", fl.attr, fl.msg))
				}
				e["error"] = strings.Join(msgs, "\n")
				e["exc_info"] = map[string]any{"type": "VALIDATION", "errno": 22, "extra": extra}
			case fakeCallError:
				e["error"] = fmt.Sprintf("[%s] %s", errnoNames[je.errno], je.msg)
				e["exc_info"] = map[string]any{"type": "CallError", "errno": je.errno, "extra": nil}
			default:
				e["error"] = j.err.Error()
			}
		}
		out = append(out, e)
	}
	if out == nil {
		out = []map[string]any{}
	}
	return out, nil
}

func (f *fakeNAS) methods() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.methodLog...)
}

func (f *fakeNAS) countMethod(m string) int {
	n := 0
	for _, x := range f.methods() {
		if x == m {
			n++
		}
	}
	return n
}

// checkPassword / checkKey are the server's credential checks.
func (f *fakeNAS) checkPassword(u, p string) bool { return u == f.user && p == f.pass }
func (f *fakeNAS) checkKey(k string) bool         { return k == f.apiKey }

// logBuffer captures slog output from many goroutines.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func debugLogger() (*slog.Logger, *logBuffer) {
	b := &logBuffer{}
	return slog.New(slog.NewTextHandler(b, &slog.HandlerOptions{Level: slog.LevelDebug})), b
}

func newClient(t testing.TB, cfg Config) *Client {
	t.Helper()
	c, err := New(cfg, nil)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}
