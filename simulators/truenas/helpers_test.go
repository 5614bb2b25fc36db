package truenas

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/switchyard-csi/switchyard/simulators/truenas/middleware"
)

// testKey is a well-formed API key for tests.
const testKey = "1-" + "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789AB"

// waitTimeout bounds every wait in the tests (generous: the clock of the
// test machines is not precise).
const waitTimeout = 10 * time.Second

// startServer starts a server of version v on 127.0.0.1 with the test
// methods registered; mod adjusts the options.
func startServer(t *testing.T, v string, mod ...func(*Options)) *Server {
	t.Helper()
	ver, err := middleware.ParseVersion(v)
	if err != nil {
		t.Fatal(err)
	}
	o := Options{Version: ver, StateDir: t.TempDir(), Users: map[string]string{"root": "secret"},
		APIKeys: map[string]string{"ci": testKey}}
	for _, m := range mod {
		m(&o)
	}
	s, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	addTestMethods(s.Registry())
	if err := s.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	return s
}

// addTestMethods registers methods with known behaviour under "test.".
func addTestMethods(r *middleware.Registry) {
	r.Add(middleware.Method{Name: "test.ok", Params: []string{"value"}, Handler: func(c *middleware.Call, p []json.RawMessage) (any, error) {
		return map[string]any{"user": c.User, "params": p}, nil
	}})
	r.Add(middleware.Method{Name: "test.callerror", Handler: func(*middleware.Call, []json.RawMessage) (any, error) {
		return nil, &middleware.CallError{Errno: middleware.ENOENT, Message: "gone", Extra: map[string]any{"k": "v"}}
	}})
	r.Add(middleware.Method{Name: "test.invalid", Handler: func(*middleware.Call, []json.RawMessage) (any, error) {
		return nil, middleware.ValidationErrors{{Attribute: "test.x", Message: "bad"}, {Attribute: "test.y", Message: "worse", Errno: middleware.EEXIST}}
	}})
	r.Add(middleware.Method{Name: "test.notfound", Handler: func(*middleware.Call, []json.RawMessage) (any, error) {
		return nil, middleware.NotFound("Thing", 1)
	}})
	r.Add(middleware.Method{Name: "test.panic", Handler: func(*middleware.Call, []json.RawMessage) (any, error) {
		panic("handler exploded")
	}})
	r.Add(middleware.Method{Name: "test.plainerr", Handler: func(*middleware.Call, []json.RawMessage) (any, error) {
		return nil, errors.New("disk on fire")
	}})
	r.Add(middleware.Method{Name: "test.sleep", Params: []string{"ms"}, Handler: func(c *middleware.Call, p []json.RawMessage) (any, error) {
		var ms int
		json.Unmarshal(p[0], &ms)
		select {
		case <-time.After(time.Duration(ms) * time.Millisecond):
			return ms, nil
		case <-c.Ctx.Done():
			return nil, c.Ctx.Err()
		}
	}})
}

// --- JSON-RPC client ---

// rpcClient is a minimal JSON-RPC 2.0 WebSocket client: answers are matched
// by id; everything else (notifications, id-null errors) goes to other.
type rpcClient struct {
	t       *testing.T
	ws      *websocket.Conn
	mu      sync.Mutex
	next    int
	pending map[string]chan rpcAnswer
	other   chan map[string]any
	done    chan struct{}
	readErr error
}

type rpcAnswer struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *rpcErrorObj    `json:"error"`
}

type rpcErrorObj struct {
	Code    int            `json:"code"`
	Message string         `json:"message"`
	Data    map[string]any `json:"data"`
}

func wsURL(base, path string) string {
	return strings.Replace(strings.Replace(base, "https://", "wss://", 1), "http://", "ws://", 1) + path
}

func dialWS(t *testing.T, url string, client *http.Client) (*websocket.Conn, *http.Response, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	ws, resp, err := websocket.Dial(ctx, url, &websocket.DialOptions{HTTPClient: client})
	if err == nil {
		ws.SetReadLimit(16 << 20)
	}
	return ws, resp, err
}

func dialRPC(t *testing.T, s *Server, client ...*http.Client) *rpcClient {
	t.Helper()
	var hc *http.Client
	if len(client) > 0 {
		hc = client[0]
	}
	ws, _, err := dialWS(t, wsURL(s.URL(), "/api/current"), hc)
	if err != nil {
		t.Fatalf("dial /api/current: %v", err)
	}
	return newRPCClient(t, ws)
}

func newRPCClient(t *testing.T, ws *websocket.Conn) *rpcClient {
	c := &rpcClient{t: t, ws: ws, pending: map[string]chan rpcAnswer{}, other: make(chan map[string]any, 100), done: make(chan struct{})}
	t.Cleanup(func() { ws.CloseNow() })
	go c.read()
	return c
}

func (c *rpcClient) read() {
	defer close(c.done)
	for {
		_, data, err := c.ws.Read(context.Background())
		if err != nil {
			c.readErr = err
			return
		}
		var a rpcAnswer
		json.Unmarshal(data, &a)
		c.mu.Lock()
		ch, ok := c.pending[string(a.ID)]
		delete(c.pending, string(a.ID))
		c.mu.Unlock()
		if ok {
			ch <- a
			continue
		}
		var m map[string]any
		json.Unmarshal(data, &m)
		c.other <- m
	}
}

// send sends a request with the given id (raw JSON) and returns the channel
// its answer arrives on.
func (c *rpcClient) send(id string, method string, params ...any) chan rpcAnswer {
	c.t.Helper()
	if params == nil {
		params = []any{}
	}
	ch := make(chan rpcAnswer, 1)
	c.mu.Lock()
	c.pending[id] = ch
	c.mu.Unlock()
	msg, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": json.RawMessage(id), "method": method, "params": params})
	if err := c.ws.Write(context.Background(), websocket.MessageText, msg); err != nil {
		c.t.Fatalf("send %s: %v", method, err)
	}
	return ch
}

// call sends a request and waits for its answer.
func (c *rpcClient) call(method string, params ...any) rpcAnswer {
	c.t.Helper()
	c.mu.Lock()
	c.next++
	id := fmt.Sprint(c.next)
	c.mu.Unlock()
	return c.wait(c.send(id, method, params...), method)
}

func (c *rpcClient) wait(ch chan rpcAnswer, what string) rpcAnswer {
	c.t.Helper()
	select {
	case a := <-ch:
		return a
	case <-c.done:
		c.t.Fatalf("%s: connection closed: %v", what, c.readErr)
	case <-time.After(waitTimeout):
		c.t.Fatalf("%s: no answer", what)
	}
	return rpcAnswer{}
}

// result decodes a successful answer into v.
func (c *rpcClient) result(method string, v any, params ...any) {
	c.t.Helper()
	a := c.call(method, params...)
	if a.Error != nil {
		c.t.Fatalf("%s: error %d %s %v", method, a.Error.Code, a.Error.Message, a.Error.Data)
	}
	if err := json.Unmarshal(a.Result, v); err != nil {
		c.t.Fatalf("%s: result %s: %v", method, a.Result, err)
	}
}

func (c *rpcClient) login() {
	c.t.Helper()
	var ok bool
	c.result("auth.login", &ok, "root", "secret")
	if !ok {
		c.t.Fatal("auth.login root/secret refused")
	}
}

func (c *rpcClient) sendRaw(text string) {
	c.t.Helper()
	if err := c.ws.Write(context.Background(), websocket.MessageText, []byte(text)); err != nil {
		c.t.Fatal(err)
	}
}

// nextOther is the next message that answered no pending call.
func (c *rpcClient) nextOther() map[string]any {
	c.t.Helper()
	select {
	case m := <-c.other:
		return m
	case <-time.After(waitTimeout):
		c.t.Fatal("no message")
	}
	return nil
}

// closed reports whether the server closed the connection within d.
func (c *rpcClient) closed(d time.Duration) bool {
	select {
	case <-c.done:
		return true
	case <-time.After(d):
		return false
	}
}

// --- REST client ---

type restAuth struct{ user, password, key string }

var rootAuth = restAuth{user: "root", password: "secret"}

func (a restAuth) header() string {
	switch {
	case a.key != "":
		return "Bearer " + a.key
	case a.user != "":
		return "Basic " + base64.StdEncoding.EncodeToString([]byte(a.user+":"+a.password))
	}
	return ""
}

// rest sends a REST request to base+"/api/v2.0"+path.
func rest(t *testing.T, client *http.Client, base, verb, path, body string, auth restAuth) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(verb, base+"/api/v2.0"+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if h := auth.header(); h != "" {
		req.Header.Set("Authorization", h)
	}
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", verb, path, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, data
}

// tlsClient trusts the server's certificate.
func tlsClient(t *testing.T, s *Server) *http.Client {
	t.Helper()
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(s.CertPEM()) {
		t.Fatal("CertPEM is not a PEM certificate")
	}
	return &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
}

// jsonEqual compares JSON texts by value.
func jsonEqual(t *testing.T, got []byte, want string) bool {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("not JSON: %s", got)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("bad test JSON %s", want)
	}
	gb, _ := json.Marshal(g)
	wb, _ := json.Marshal(w)
	return bytes.Equal(gb, wb)
}
