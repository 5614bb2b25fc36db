package infinia_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	_ "github.com/switchyard-csi/switchyard/driver/allbackends"
	"github.com/switchyard-csi/switchyard/driver/assembly"
	csisrv "github.com/switchyard-csi/switchyard/driver/csi"
	"github.com/switchyard-csi/switchyard/lab/csiclient"
	"github.com/switchyard-csi/switchyard/lab/infiniahost"
	"github.com/switchyard-csi/switchyard/simulators/infinia"
)

// The harness of the lifecycle and bad-input tests: the simulator
// in-process, and the driver served over gRPC by driver/assembly from a
// config file, exactly as a user runs it — standalone (switchyard's file
// or DDN's) or as a connection of the proxy.

// hostNQN is the node's /etc/nvme/hostnqn; nodeID is the node id the
// node plugin reports with proxy.nodeId.parts.nqn.
const (
	hostNQN = "nqn.2014-08.org.nvmexpress:uuid:5a4e17e5-0000-4000-8000-00000000a001"
	nodeID  = "n=node-a/v=" + hostNQN
)

// proxyCaps: a proxy with Infinia connections must grant host NQNs at
// ControllerPublishVolume, and Infinia offers no snapshots.
const proxyCaps = `service:
  controller:
    capabilities:
      rpc: [CREATE_DELETE_VOLUME, PUBLISH_UNPUBLISH_VOLUME, LIST_VOLUMES, GET_CAPACITY, EXPAND_VOLUME, SINGLE_NODE_MULTI_WRITER, GET_VOLUME]
`

// mode is how the driver is deployed.
type mode struct {
	name  string
	proxy bool // a connection file "infinia" behind driver: proxy
	ddn   bool // standalone with DDN's file (no driver: line)
}

var (
	direct  = mode{name: "direct"}
	ddnFile = mode{name: "ddn-file", ddn: true}
	proxied = mode{name: "proxy", proxy: true}
)

// rig is one simulator and one plugin serving a driver for it.
type rig struct {
	t    testing.TB
	m    mode
	h    *infiniahost.Host
	ctl  csi.ControllerClient
	rest *restClient
}

// startHost starts a simulator in a temporary directory for t.
func startHost(t testing.TB, o infiniahost.Options) *infiniahost.Host {
	t.Helper()
	if o.Dir == "" {
		o.Dir = t.TempDir()
	}
	h, err := infiniahost.Start(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

// account merges settings into the host account's config section.
func account(h *infiniahost.Host, settings map[string]any) map[string]any {
	return map[string]any{"accounts": map[string]any{h.Account: settings}}
}

// driverConfig is the config file of mode m for h with extra merged in.
func driverConfig(h *infiniahost.Host, m mode, extra map[string]any) string {
	cfg := string(h.DriverConfig(m.name, extra))
	if !m.ddn {
		return cfg
	}
	var out []string
	for _, l := range strings.Split(cfg, "\n") {
		if !strings.HasPrefix(l, "driver:") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// newRig starts a simulator and serves a driver for it in mode m.
func newRig(t testing.TB, m mode, o infiniahost.Options, extra map[string]any) *rig {
	t.Helper()
	h := startHost(t, o)
	r := &rig{t: t, m: m, h: h, rest: newREST(t, h)}
	c, err := serve(t, m, driverConfig(h, m, extra))
	if err != nil {
		t.Fatal(err)
	}
	r.ctl = c.Controller
	return r
}

// serve writes the config (the main file standalone, the connection file
// "infinia" behind a proxy) and serves a controller plugin for it on a
// unix socket. An error is assembly.New's: the config was refused.
func serve(t testing.TB, m mode, cfg string) (*csiclient.Client, error) {
	t.Helper()
	// A short directory: unix socket paths are limited to 108 bytes.
	dir, err := os.MkdirTemp("", "sy-inf")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	main := cfg
	if m.proxy {
		conns := filepath.Join(dir, "connections")
		if err := os.MkdirAll(conns, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(conns, "infinia.yaml"), []byte(cfg), 0o600); err != nil {
			t.Fatal(err)
		}
		main = "driver: proxy\nproxy:\n  configFolder: " + conns + "\n  nodeId:\n    parts:\n      nqn: true\n" + proxyCaps
	}
	mainFile := filepath.Join(dir, "main.yaml")
	if err := os.WriteFile(mainFile, []byte(main), 0o600); err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	if os.Getenv("TEST_LOG") != "" {
		log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	p, err := assembly.New(assembly.Options{ConfigFile: mainFile, CSIName: "org.switchyard.test", NodeName: "node-a",
		StateDir: filepath.Join(dir, "state"), Logger: log, Modes: []string{assembly.ModeController}})
	if err != nil {
		return nil, err
	}
	srv := p.NewServer(log)
	l, err := csisrv.Listen("unix://" + filepath.Join(dir, "csi.sock"))
	if err != nil {
		p.Close()
		t.Fatal(err)
	}
	p.Identity.SetReady(true)
	go srv.Serve(l)
	t.Cleanup(func() { srv.Stop(context.Background()); p.Close() })
	c, err := csiclient.Dial("unix://" + filepath.Join(dir, "csi.sock"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, nil
}

// id is the CSI volume id of an Infinia handle in the rig's mode.
func (r *rig) id(handle string) string {
	if r.m.proxy {
		return "v:infinia/" + handle
	}
	return handle
}

// params are the StorageClass parameters: the service (and the proxy's
// connection) with extra on top; an empty value removes a key.
func (r *rig) params(extra map[string]string) map[string]string {
	p := map[string]string{"service": r.h.Service}
	if r.m.proxy {
		p["connection"] = "infinia"
	}
	for k, v := range extra {
		if v == "" {
			delete(p, k)
		} else {
			p[k] = v
		}
	}
	return p
}

var blockCap = &csi.VolumeCapability{
	AccessType: &csi.VolumeCapability_Block{Block: &csi.VolumeCapability_BlockVolume{}},
	AccessMode: &csi.VolumeCapability_AccessMode{Mode: csi.VolumeCapability_AccessMode_SINGLE_NODE_WRITER},
}

func (r *rig) createReq(name string, size int64, params map[string]string) *csi.CreateVolumeRequest {
	return &csi.CreateVolumeRequest{Name: name, VolumeCapabilities: []*csi.VolumeCapability{blockCap},
		CapacityRange: &csi.CapacityRange{RequiredBytes: size}, Parameters: r.params(params)}
}

// create makes a 1 GiB volume and returns its CSI volume id.
func (r *rig) create(name string) string {
	r.t.Helper()
	v, err := r.ctl.CreateVolume(context.Background(), r.createReq(name, 1<<30, nil))
	if err != nil {
		r.t.Fatalf("create %s: %v", name, err)
	}
	return v.GetVolume().GetVolumeId()
}

// wantCode fails unless err is a status with code whose message holds
// every one of subs and none of the host's secrets.
func (r *rig) wantCode(err error, code codes.Code, subs ...string) {
	r.t.Helper()
	s, _ := status.FromError(err)
	if s.Code() != code {
		r.t.Fatalf("code %v, want %v: %v", s.Code(), code, err)
	}
	for _, sub := range subs {
		if !strings.Contains(s.Message(), sub) {
			r.t.Errorf("message %q does not mention %q", s.Message(), sub)
		}
	}
	noSecret(r.t, s.Message(), r.h.Password)
}

// noSecret fails if msg holds a password or a login token (a JWT: its
// base64url header always starts with `{"`, "eyJ").
func noSecret(t testing.TB, msg string, secrets ...string) {
	t.Helper()
	for _, s := range append(secrets, "eyJ", "Bearer") {
		if s != "" && strings.Contains(msg, s) {
			t.Errorf("message shows a secret (%q): %s", s, msg)
		}
	}
}

// closedPort is a local TCP port that refuses connections.
func closedPort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	return port
}

// restClient talks to the simulator directly, as an Infinia administrator
// (or another program) would, behind the driver's back.
type restClient struct {
	t     testing.TB
	h     *infiniahost.Host
	hc    *http.Client
	token string
}

// prefix is P of the wire contract for the host's subtenant.
const prefix = "/redapi/v1/clusters/" + infinia.DefaultCluster + "/tenants/" + infinia.DefaultTenant +
	"/subtenants/" + infinia.DefaultSubtenant

// dataset holds the volumes of the host's block service.
const dataset = prefix + "/datasets/" + infinia.DefaultService + "/volumes"

func newREST(t testing.TB, h *infiniahost.Host) *restClient {
	tr := &http.Transport{}
	if h.CertPEM != nil {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(h.CertPEM) {
			t.Fatal("CertPEM holds no certificate")
		}
		tr.TLSClientConfig = &tls.Config{RootCAs: pool}
	}
	t.Cleanup(tr.CloseIdleConnections)
	return &restClient{t: t, h: h, hc: &http.Client{Transport: tr, Timeout: 30 * time.Second}}
}

func (c *restClient) login() {
	c.t.Helper()
	parts := strings.Split(c.h.Account, "/")
	req, _ := http.NewRequest(http.MethodGet, c.h.URL+"/redapi/v1/auth_user", nil)
	req.Header.Set("user_id", parts[2])
	req.Header.Set("password", c.h.Password)
	req.Header.Set("level", parts[0]+"/"+parts[1])
	var out struct{ Token string }
	if st := c.send(req, &out); st != http.StatusOK || out.Token == "" {
		c.t.Fatalf("REST login: HTTP %d", st)
	}
	c.token = out.Token
}

// send runs req and decodes the envelope's data into out (if not nil).
func (c *restClient) send(req *http.Request, out any) int {
	c.t.Helper()
	resp, err := c.hc.Do(req)
	if err != nil {
		c.t.Fatalf("REST %s %s: %v", req.Method, req.URL.Path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var env struct {
		Title string
		Data  json.RawMessage
	}
	if err := json.Unmarshal(raw, &env); err != nil {
		c.t.Fatalf("REST %s %s: HTTP %d, not an envelope: %s", req.Method, req.URL.Path, resp.StatusCode, raw)
	}
	if out != nil && resp.StatusCode < 300 {
		if err := json.Unmarshal(env.Data, out); err != nil {
			c.t.Fatalf("REST %s %s: data %s: %v", req.Method, req.URL.Path, env.Data, err)
		}
	}
	return resp.StatusCode
}

// do calls path (under /redapi/v1/…) with a JSON body, logging in when
// there is no token or it was forgotten (401), and returns the status.
func (c *restClient) do(method, path string, body, out any) int {
	c.t.Helper()
	if c.token == "" {
		c.login()
	}
	for try := 0; ; try++ {
		var rd io.Reader
		if body != nil {
			b, _ := json.Marshal(body)
			rd = bytes.NewReader(b)
		}
		req, err := http.NewRequest(method, c.h.URL+path, rd)
		if err != nil {
			c.t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+c.token)
		req.Header.Set("Content-Type", "application/json")
		st := c.send(req, out)
		if st != http.StatusUnauthorized || try > 0 {
			return st
		}
		c.login()
	}
}

// subsystem is what the tests read of one.
type subsystem struct {
	Name       string   `json:"name"`
	NQN        string   `json:"nqn"`
	Hosts      []string `json:"hosts"`
	Namespaces []struct {
		NSID   int    `json:"nsid"`
		Volume string `json:"volume"`
	} `json:"namespaces"`
}

// volume is what the tests read of one.
type volume struct {
	Name      string `json:"name"`
	UUID      string `json:"uuid"`
	NBlocks   int64  `json:"nblocks"`
	BlockSize int64  `json:"block_size"`
}

// getSubsystem reads a subsystem; nil when it does not exist.
func (c *restClient) getSubsystem(name string) *subsystem {
	c.t.Helper()
	var s subsystem
	switch st := c.do("GET", prefix+"/subsystems/"+url.PathEscape(name), nil, &s); st {
	case http.StatusOK:
		return &s
	case http.StatusNotFound:
		return nil
	default:
		c.t.Fatalf("GET subsystem %s: HTTP %d", name, st)
		return nil
	}
}

// getVolume reads a volume of the service; nil when it does not exist.
func (c *restClient) getVolume(name string) *volume {
	c.t.Helper()
	var out struct{ Volume volume }
	switch st := c.do("GET", dataset+"/"+url.PathEscape(name), nil, &out); st {
	case http.StatusOK:
		return &out.Volume
	case http.StatusNotFound:
		return nil
	default:
		c.t.Fatalf("GET volume %s: HTTP %d", name, st)
		return nil
	}
}

// volumes lists the names of the service's volumes.
func (c *restClient) volumes() []string {
	c.t.Helper()
	var vs []volume
	if st := c.do("GET", dataset, nil, &vs); st != http.StatusOK {
		c.t.Fatalf("GET volumes: HTTP %d", st)
	}
	var names []string
	for _, v := range vs {
		names = append(names, v.Name)
	}
	return names
}

// subsystems lists the names of the subtenant's subsystems.
func (c *restClient) subsystems() []string {
	c.t.Helper()
	var out struct {
		Targets []struct{ Subsystems []subsystem }
	}
	if st := c.do("GET", prefix+"/list", nil, &out); st != http.StatusOK {
		c.t.Fatalf("GET list: HTTP %d", st)
	}
	var names []string
	for _, tg := range out.Targets {
		for _, s := range tg.Subsystems {
			names = append(names, s.Name)
		}
	}
	return names
}

// empty fails unless the service has no volume and the subtenant no
// subsystem.
func (c *restClient) empty() {
	c.t.Helper()
	if v, s := c.volumes(), c.subsystems(); len(v)+len(s) != 0 {
		c.t.Errorf("left behind: volumes %v, subsystems %v", v, s)
	}
}

// mustDo is do that fails the test unless the answer is want.
func (c *restClient) mustDo(want int, method, path string, body, out any) {
	c.t.Helper()
	if st := c.do(method, path, body, out); st != want {
		c.t.Fatalf("%s %s: HTTP %d, want %d", method, path, st, want)
	}
}

// staticVolume makes a volume on the simulator the way an administrator
// exports one for DDN's driver: a subsystem of its own name, the volume
// as its namespace, exposed on instance 1. It returns the DDN handle.
func (c *restClient) staticVolume(name, subsys string, size int64) string {
	c.t.Helper()
	c.mustDo(http.StatusCreated, "POST", prefix+"/subsystems/"+subsys,
		map[string]any{"transport": "TCP", "reqInstances": []int{1, 2}, "port": infinia.DefaultPort}, nil)
	c.mustDo(http.StatusCreated, "POST", dataset, map[string]any{"volumeName": name, "nblocks": size / 4096, "block_size": 4096,
		"nvmfTarget": subsys, "nvmfProp": map[string]any{"transport": "TCP"}}, nil)
	c.mustDo(http.StatusOK, "PUT", dataset+"/"+name+"/expose", map[string]any{"nvmf": map[string]any{"transport": "TCP", "instanceId": 1}}, nil)
	return fmt.Sprintf("%s:%s/%s", c.h.Account, c.h.Service, name)
}
