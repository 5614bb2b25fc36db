package events

import (
	"bytes"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// call is one request the fake API server got.
type call struct {
	method, path, auth, ctype string
	body                      map[string]any
}

// apiServer is an httptest TLS server standing in for kube-apiserver's
// events.k8s.io/v1 endpoints: it records calls and answers with code.
type apiServer struct {
	*httptest.Server
	mu    sync.Mutex
	calls []call
	code  int // answer to every call (default 201/200)
	patch int // answer to PATCH when set
}

func newAPIServer(t *testing.T) *apiServer {
	a := &apiServer{}
	a.Server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		c := call{method: r.Method, path: r.URL.Path, auth: r.Header.Get("Authorization"), ctype: r.Header.Get("Content-Type")}
		_ = json.Unmarshal(b, &c.body)
		a.mu.Lock()
		a.calls = append(a.calls, c)
		code := a.code
		if r.Method == http.MethodPatch && a.patch != 0 {
			code = a.patch
		}
		a.mu.Unlock()
		switch {
		case code != 0:
			w.WriteHeader(code)
			_, _ = w.Write([]byte(`{"kind":"Status","message":"events.events.k8s.io is forbidden: User \"system:serviceaccount:ns:sa\" cannot create resource"}`))
		case r.Method == http.MethodPost:
			w.WriteHeader(http.StatusCreated)
			_, _ = w.Write(b)
		default:
			_, _ = w.Write([]byte(`{}`))
		}
	}))
	t.Cleanup(a.Close)
	return a
}

func (a *apiServer) got() []call {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]call(nil), a.calls...)
}

// waitCalls waits until the server got n calls (or fails the test).
func (a *apiServer) waitCalls(t *testing.T, n int) []call {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		c := a.got()
		if len(c) >= n {
			return c
		}
		if time.Now().After(deadline) {
			t.Fatalf("the API server got %d calls, want %d: %+v", len(c), n, c)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func testOptions(a *apiServer) Options {
	return Options{
		APIServer: a.URL, Client: a.Client(),
		Token:      func() (string, error) { return "tok-1", nil },
		Pod:        Pod{Name: "switchyard-controller-abc", Namespace: "storage", UID: "uid-1"},
		Controller: "org.democratic-csi.proxy",
	}
}

// brokenErr is what the proxy reports for a file that does not parse.
var brokenErr = status.Error(codes.FailedPrecondition, "connection nas: nas.yaml: yaml: line 3: mapping values are not allowed here")

func TestBrokenFileMakesWarningEvent(t *testing.T) {
	a := newAPIServer(t)
	r := New(testOptions(a))
	defer r.Close(time.Second)
	r.ConnectionLoaded("nas", "/config/nas.yaml", brokenErr)
	c := a.waitCalls(t, 1)[0]
	if c.method != http.MethodPost || c.path != "/apis/events.k8s.io/v1/namespaces/storage/events" {
		t.Fatalf("call %s %s, want POST to the namespace's events", c.method, c.path)
	}
	if c.auth != "Bearer tok-1" || c.ctype != "application/json" {
		t.Errorf("auth %q content type %q", c.auth, c.ctype)
	}
	b := c.body
	reg, _ := b["regarding"].(map[string]any)
	meta, _ := b["metadata"].(map[string]any)
	want := map[string]any{"apiVersion": "events.k8s.io/v1", "kind": "Event", "type": "Warning", "reason": ReasonConnectionInvalid,
		"action": "LoadConnection", "reportingController": "org.democratic-csi.proxy", "reportingInstance": "switchyard-controller-abc"}
	for k, v := range want {
		if b[k] != v {
			t.Errorf("%s = %v, want %v", k, b[k], v)
		}
	}
	if reg["kind"] != "Pod" || reg["name"] != "switchyard-controller-abc" || reg["namespace"] != "storage" || reg["uid"] != "uid-1" {
		t.Errorf("regarding = %v, want the driver's own Pod", reg)
	}
	if n, _ := meta["name"].(string); !strings.HasPrefix(n, "switchyard-controller-abc.") || meta["namespace"] != "storage" {
		t.Errorf("metadata = %v", meta)
	}
	note, _ := b["note"].(string)
	for _, s := range []string{"connection nas", "/config/nas.yaml", "line 3", "other connections"} {
		if !strings.Contains(note, s) {
			t.Errorf("note %q does not say %q", note, s)
		}
	}
	if _, err := time.Parse(time.RFC3339Nano, b["eventTime"].(string)); err != nil || !strings.Contains(b["eventTime"].(string), ".") {
		t.Errorf("eventTime %v is not a MicroTime: %v", b["eventTime"], err)
	}
	if _, has := b["series"]; has {
		t.Errorf("a first occurrence has a series: %v", b["series"])
	}
}

// TestRepeatsAreOneEventWithACount: the same broken file reported again and
// again is one Event, patched with its count once the interval is over.
func TestRepeatsAreOneEventWithACount(t *testing.T) {
	a := newAPIServer(t)
	o := testOptions(a)
	o.Interval = 150 * time.Millisecond
	r := New(o)
	defer r.Close(time.Second)
	for range 5 {
		r.ConnectionLoaded("nas", "/config/nas.yaml", brokenErr)
	}
	a.waitCalls(t, 2)
	time.Sleep(2 * o.Interval) // nothing more may come: no new occurrences
	calls := a.got()
	if len(calls) != 2 || calls[0].method != http.MethodPost || calls[1].method != http.MethodPatch {
		t.Fatalf("calls %+v, want one POST then one PATCH", calls)
	}
	name := calls[0].body["metadata"].(map[string]any)["name"].(string)
	if calls[1].path != "/apis/events.k8s.io/v1/namespaces/storage/events/"+url.PathEscape(name) || calls[1].ctype != "application/merge-patch+json" {
		t.Errorf("PATCH %s (%s), want the Event %s as a merge patch", calls[1].path, calls[1].ctype, name)
	}
	s, _ := calls[1].body["series"].(map[string]any)
	if s["count"] != float64(5) || s["lastObservedTime"] == nil {
		t.Errorf("series %v, want count 5 and a lastObservedTime", s)
	}
}

// TestDistinctProblemsAreRateLimited: a burst of different broken files
// makes at most Burst API calls.
func TestDistinctProblemsAreRateLimited(t *testing.T) {
	a := newAPIServer(t)
	o := testOptions(a)
	o.Burst, o.Refill = 2, time.Hour
	var logs bytes.Buffer
	o.Log = slog.New(slog.NewTextHandler(&logs, nil))
	r := New(o)
	for _, f := range []string{"a", "b", "c", "d", "e"} {
		r.ConnectionLoaded(f, "/config/"+f+".yaml", brokenErr)
	}
	r.Close(2 * time.Second)
	if n := len(a.got()); n != 2 {
		t.Errorf("%d API calls for 5 problems with a burst of 2", n)
	}
	if !strings.Contains(logs.String(), "rate limit reached") {
		t.Errorf("the dropped events are not logged: %s", logs.String())
	}
}

// TestFixedFileMakesNormalEvent: after the broken file is fixed, a Normal
// Event says so; a file that was never broken makes none.
func TestFixedFileMakesNormalEvent(t *testing.T) {
	a := newAPIServer(t)
	r := New(testOptions(a))
	r.ConnectionLoaded("fine", "/config/fine.yaml", nil)
	r.ConnectionLoaded("nas", "/config/nas.yaml", brokenErr)
	r.ConnectionLoaded("nas", "/config/nas.yaml", nil)
	r.Close(2 * time.Second)
	c := a.got()
	if len(c) != 2 {
		t.Fatalf("%d calls, want the Warning and the Normal event: %+v", len(c), c)
	}
	if c[1].body["type"] != "Normal" || c[1].body["reason"] != ReasonConnectionLoaded || !strings.Contains(c[1].body["note"].(string), "nas.yaml") {
		t.Errorf("second event %v", c[1].body)
	}
}

// TestForbiddenIsLoggedWithTheFix: without RBAC the failure is logged,
// naming what the service account needs, and nothing blocks.
func TestForbiddenIsLoggedWithTheFix(t *testing.T) {
	a := newAPIServer(t)
	a.code = http.StatusForbidden
	o := testOptions(a)
	var logs bytes.Buffer
	o.Log = slog.New(slog.NewTextHandler(&logs, nil))
	r := New(o)
	r.ConnectionLoaded("nas", "/config/nas.yaml", brokenErr)
	r.Close(2 * time.Second)
	if !strings.Contains(logs.String(), "create and patch on events.k8s.io events") {
		t.Errorf("log does not name the missing RBAC: %s", logs.String())
	}
}

// TestExpiredEventIsMadeAgain: a PATCH answered 404 (the Event expired)
// makes a new Event that carries the count.
func TestExpiredEventIsMadeAgain(t *testing.T) {
	a := newAPIServer(t)
	a.patch = http.StatusNotFound
	o := testOptions(a)
	o.Interval = 100 * time.Millisecond
	r := New(o)
	r.ConnectionLoaded("nas", "/config/nas.yaml", brokenErr)
	a.waitCalls(t, 1)
	time.Sleep(o.Interval)
	r.ConnectionLoaded("nas", "/config/nas.yaml", brokenErr)
	r.Close(2 * time.Second)
	c := a.got()
	if len(c) != 3 || c[1].method != http.MethodPatch || c[2].method != http.MethodPost {
		t.Fatalf("calls %+v, want POST, PATCH (404), POST", c)
	}
	if s, _ := c[2].body["series"].(map[string]any); s["count"] != float64(2) {
		t.Errorf("the new Event's series %v, want count 2", c[2].body["series"])
	}
}

func TestInClusterOptions(t *testing.T) {
	a := newAPIServer(t)
	sa := t.TempDir()
	env := map[string]string{}
	e := Env{Getenv: func(k string) string { return env[k] }, SADir: sa}

	if _, err := InClusterOptions(e); !errors.Is(err, ErrNotInCluster) {
		t.Fatalf("no KUBERNETES_SERVICE_HOST: %v, want ErrNotInCluster", err)
	}
	u, _ := url.Parse(a.URL)
	env["KUBERNETES_SERVICE_HOST"], env["KUBERNETES_SERVICE_PORT"] = u.Hostname(), u.Port()
	if _, err := InClusterOptions(e); !errors.Is(err, ErrNotInCluster) {
		t.Fatalf("no token file: %v, want ErrNotInCluster", err)
	}
	if err := os.WriteFile(filepath.Join(sa, "token"), []byte("tok-a\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := InClusterOptions(e); err == nil || !strings.Contains(err.Error(), "POD_NAME") {
		t.Fatalf("no POD_NAME: %v, want an error naming it", err)
	}
	env["POD_NAME"], env["POD_NAMESPACE"] = "node-xyz", "storage"
	if _, err := InClusterOptions(e); err == nil || !strings.Contains(err.Error(), "CA") {
		t.Fatalf("no ca.crt: %v, want an error naming the CA", err)
	}
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: a.Certificate().Raw})
	if err := os.WriteFile(filepath.Join(sa, "ca.crt"), ca, 0o644); err != nil {
		t.Fatal(err)
	}
	o, err := InClusterOptions(e)
	if err != nil {
		t.Fatal(err)
	}
	r := New(o)
	r.ConnectionLoaded("nas", "/config/nas.yaml", brokenErr)
	a.waitCalls(t, 1)
	// The kubelet rotates projected tokens: the next call reads the new one.
	if err := os.WriteFile(filepath.Join(sa, "token"), []byte("tok-b"), 0o600); err != nil {
		t.Fatal(err)
	}
	r.ConnectionLoaded("other", "/config/other.yaml", brokenErr)
	r.Close(2 * time.Second)
	c := a.got()
	if len(c) != 2 || c[0].auth != "Bearer tok-a" || c[1].auth != "Bearer tok-b" {
		t.Fatalf("calls %+v, want two with the token of the moment (CA trusted)", c)
	}
	if c[0].path != "/apis/events.k8s.io/v1/namespaces/storage/events" {
		t.Errorf("path %s", c[0].path)
	}
}

// TestCloseDropsLateEvents: an observer call after Close neither blocks
// nor panics.
func TestCloseDropsLateEvents(t *testing.T) {
	a := newAPIServer(t)
	r := New(testOptions(a))
	r.Close(time.Second)
	r.ConnectionLoaded("nas", "/config/nas.yaml", brokenErr)
	if n := len(a.got()); n != 0 {
		t.Errorf("%d calls after Close", n)
	}
}
