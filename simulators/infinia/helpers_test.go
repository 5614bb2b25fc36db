package infinia

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// Paths of the default seed.
const (
	pathC = "/redapi/v1/clusters/clu1"
	pathT = pathC + "/tenants/red"
	pathP = pathT + "/subtenants/red"
	pathD = pathP + "/datasets/csiService"
)

// startServer starts a TLS server on a fresh state directory.
func startServer(t *testing.T, mod ...func(*Options)) *Server {
	t.Helper()
	o := Options{StateDir: t.TempDir()}
	for _, m := range mod {
		m(&o)
	}
	return startOn(t, o)
}

func startOn(t *testing.T, o Options) *Server {
	t.Helper()
	s, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if err := s.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	return s
}

// client is a REST client of one server: one connection pool, one token.
type client struct {
	t     *testing.T
	s     *Server
	hc    *http.Client
	token string
}

// answer is a decoded envelope.
type answer struct {
	Status int
	Title  string
	Data   json.RawMessage
}

func (a answer) decode(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal(a.Data, v); err != nil {
		t.Fatalf("decoding %s: %v", a.Data, err)
	}
}

// newClient trusts only the server's certificate (no InsecureSkipVerify).
func newClient(t *testing.T, s *Server) *client {
	t.Helper()
	tr := &http.Transport{}
	if pem := s.CertPEM(); pem != nil {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			t.Fatal("CertPEM is not a PEM certificate")
		}
		tr.TLSClientConfig = &tls.Config{RootCAs: pool}
	}
	t.Cleanup(tr.CloseIdleConnections)
	return &client{t: t, s: s, hc: &http.Client{Transport: tr, Timeout: 20 * time.Second}}
}

// loggedIn is a client logged in as the default account.
func loggedIn(t *testing.T, s *Server) *client {
	t.Helper()
	c := newClient(t, s)
	if a := c.login(DefaultUser, DefaultPassword, "clu1/red"); a.Status != 200 {
		t.Fatalf("login: %d %s", a.Status, a.Title)
	}
	return c
}

// login logs in and keeps the token on success.
func (c *client) login(user, password, level string) answer {
	c.t.Helper()
	h := map[string]string{}
	for k, v := range map[string]string{"user_id": user, "password": password, "level": level} {
		if v != "" {
			h[k] = v
		}
	}
	a := c.req("GET", "/redapi/v1/auth_user", nil, h)
	if a.Status == 200 {
		var d struct{ Token string }
		a.decode(c.t, &d)
		c.token = d.Token
	}
	return a
}

// call sends a request with the client's token; body is JSON-encoded
// unless it is a string (sent as is).
func (c *client) call(method, path string, body any, hdr ...string) answer {
	c.t.Helper()
	h := map[string]string{}
	if c.token != "" {
		h["Authorization"] = "Bearer " + c.token
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		h[hdr[i]] = hdr[i+1]
	}
	return c.req(method, path, body, h)
}

func (c *client) req(method, path string, body any, hdr map[string]string) answer {
	c.t.Helper()
	a, err := c.try(method, path, body, hdr)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	return a
}

func (c *client) try(method, path string, body any, hdr map[string]string) (answer, error) {
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			return answer{}, err
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, c.s.URL()+path, rd)
	if err != nil {
		return answer{}, err
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return answer{}, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return answer{}, err
	}
	var env struct {
		Title *string         `json:"title"`
		Data  json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(raw, &env); err != nil || env.Title == nil {
		c.t.Fatalf("%s %s: answer %d is not an envelope: %q", method, path, resp.StatusCode, raw)
	}
	return answer{Status: resp.StatusCode, Title: *env.Title, Data: env.Data}, nil
}

// must fails the test unless the answer has status want.
func (a answer) must(t *testing.T, want int) answer {
	t.Helper()
	if a.Status != want {
		t.Fatalf("status %d (%s), want %d", a.Status, a.Title, want)
	}
	return a
}

// volBody is a volume creation body.
func volBody(name string, nblocks int64, target string) map[string]any {
	return map[string]any{"volumeName": name, "nblocks": nblocks, "block_size": 4096, "nvmfTarget": target,
		"nvmfProp": map[string]any{"transport": "TCP"}, "xattrs": map[string]any{"pvc": name}}
}

// mkVolume makes subsystem name and volume name in it (the driver's
// CreateVolume sequence without the exposes).
func (c *client) mkVolume(name string, nblocks int64) {
	c.t.Helper()
	c.call("POST", pathP+"/subsystems/"+name, map[string]any{"transport": "TCP", "reqInstances": []int{1, 2, 3}, "port": 4420}).must(c.t, 201)
	c.call("POST", pathD+"/volumes", volBody(name, nblocks, name)).must(c.t, 201)
}

// recordingTarget records Target calls and fails on demand.
type recordingTarget struct {
	mu      sync.Mutex
	applied []Subsystem
	removed []string
	fail    bool
}

func (r *recordingTarget) Apply(s Subsystem) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.applied = append(r.applied, s)
	if r.fail {
		return io.ErrUnexpectedEOF
	}
	return nil
}

func (r *recordingTarget) Remove(nqn string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.removed = append(r.removed, nqn)
	if r.fail {
		return io.ErrUnexpectedEOF
	}
	return nil
}

// take returns and forgets the recorded calls.
func (r *recordingTarget) take() ([]Subsystem, []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	a, rm := r.applied, r.removed
	r.applied, r.removed = nil, nil
	return a, rm
}

func (r *recordingTarget) setFail(f bool) {
	r.mu.Lock()
	r.fail = f
	r.mu.Unlock()
}
