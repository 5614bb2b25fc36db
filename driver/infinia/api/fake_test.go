package api

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeAPI is a small stand-in for the Infinia REST API: logins with
// expiring JWT-shaped tokens, and per-route answers a test sets.
type fakeAPI struct {
	t        *testing.T
	user     string
	password string
	level    string
	lifetime time.Duration

	mu     sync.Mutex
	tokens map[string]bool
	routes map[string]func(r *http.Request) (int, string, any)
	seen   []*http.Request

	logins   atomic.Int64
	requests atomic.Int64
	// loginDelay slows logins so concurrent callers overlap.
	loginDelay time.Duration
}

func newFakeAPI(t *testing.T) *fakeAPI {
	return &fakeAPI{t: t, user: "csiAccount", password: "s3cret-pass", level: "clu1/red", lifetime: time.Hour,
		tokens: map[string]bool{}, routes: map[string]func(*http.Request) (int, string, any){}}
}

// route sets the answer to "METHOD /redapi/v1/..." (escaped path).
func (f *fakeAPI) route(key string, h func(r *http.Request) (int, string, any)) {
	f.mu.Lock()
	f.routes[key] = h
	f.mu.Unlock()
}

// expireAll makes every issued token invalid, as an expiry would.
func (f *fakeAPI) expireAll() {
	f.mu.Lock()
	f.tokens = map[string]bool{}
	f.mu.Unlock()
}

func (f *fakeAPI) jwt() string {
	enc := base64.RawURLEncoding
	now := time.Now().Unix()
	head := enc.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`))
	body, _ := json.Marshal(map[string]any{"sub": f.user, "level": f.level, "iat": now, "exp": now + int64(f.lifetime/time.Second),
		"n": f.logins.Load()})
	return head + "." + enc.EncodeToString(body) + "." + enc.EncodeToString([]byte("sig"))
}

func (f *fakeAPI) write(w http.ResponseWriter, code int, title string, data any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]any{"title": title, "data": data})
}

func (f *fakeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.requests.Add(1)
	f.mu.Lock()
	f.seen = append(f.seen, r)
	f.mu.Unlock()
	if r.URL.Path == "/redapi/v1/auth_user" {
		f.logins.Add(1)
		time.Sleep(f.loginDelay)
		if r.Header.Get("user_id") != f.user || r.Header.Get("password") != f.password || r.Header.Get("level") != f.level {
			f.write(w, 401, "bad credentials for "+r.Header.Get("user_id"), nil)
			return
		}
		tok := f.jwt()
		f.mu.Lock()
		f.tokens[tok] = true
		f.mu.Unlock()
		f.write(w, 200, "OK", map[string]string{"token": tok})
		return
	}
	tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	f.mu.Lock()
	ok := f.tokens[tok]
	h := f.routes[r.Method+" "+r.URL.EscapedPath()]
	f.mu.Unlock()
	if !ok {
		f.write(w, 401, "token expired", nil)
		return
	}
	if h == nil {
		f.write(w, 404, fmt.Sprintf("no route %s %s", r.Method, r.URL.EscapedPath()), nil)
		return
	}
	code, title, data := h(r)
	f.write(w, code, title, data)
}

func (f *fakeAPI) start() string {
	srv := httptest.NewServer(f)
	f.t.Cleanup(srv.Close)
	return srv.URL
}

func (f *fakeAPI) config(apis ...string) Config {
	return Config{APIs: apis, User: f.user, Level: f.level, Password: f.password, Timeout: 5 * time.Second}
}

// deadEndpoint is an address nothing listens on (connection refused).
func deadEndpoint(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr
}

func newClient(t *testing.T, cfg Config) *Client {
	t.Helper()
	c, err := New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

func okService(*http.Request) (int, string, any) {
	return 200, "OK", map[string]any{"name": "csiService", "type": "block", "dataset": "csiService", "instances": []int{1, 2}}
}

const servicePath = "GET /redapi/v1/clusters/clu1/tenants/red/subtenants/red/services/csiService"
