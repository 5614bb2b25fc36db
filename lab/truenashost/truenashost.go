// Package truenashost starts a simulated TrueNAS in-process: the
// middleware simulator (simulators/truenas) at a chosen release on
// 127.0.0.1, with TLS from 25.04 on, an API key, an NVMe-oF TCP port where
// the release has NVMe-oF, and optionally its SSH endpoint. Tests, the
// demo and benchmarks point freenas-api-*/freenas-* configs at it exactly
// as they would at a real TrueNAS.
package truenashost

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"strconv"
	"time"

	"github.com/switchyard-csi/switchyard/simulators/kernel"
	"github.com/switchyard-csi/switchyard/simulators/truenas"
	"github.com/switchyard-csi/switchyard/simulators/truenas/middleware"
	"github.com/switchyard-csi/switchyard/simulators/zfsmodel"
	"github.com/switchyard-csi/switchyard/simulators/zfsssh"
)

// Defaults of Options.
const (
	DefaultPool     = "tank"
	DefaultPoolSize = 100 << 30
	DefaultPassword = "switchyard-lab"
)

// Options tune the host.
type Options struct {
	Dir      string // state directory (required)
	Version  string // "24.10", "25.04", "25.10", "26.04" (default 25.10)
	PoolSize int64
	// Plain serves http/ws instead of https/wss (REST clients of 24.10
	// use http by default).
	Plain   bool
	SSH     bool          // also serve the SSH endpoint (freenas-* drivers)
	Latency time.Duration // added to every API call
	// Addr and SSHAddr are where to listen (default 127.0.0.1:0, a free
	// port); APIKey is root's key (default: a new one). A host restarted
	// on the same Dir, addresses and key is the same host to a client.
	Addr, SSHAddr string
	APIKey        string
	Logger        *slog.Logger
	// Kernel makes the host's shares and targets real (the storage VM).
	Kernel *kernel.Reconciler
}

// Host is a running simulated TrueNAS.
type Host struct {
	Server   *truenas.Server
	Version  middleware.Version
	Protocol string // http or https
	Host     string // 127.0.0.1
	Port     int
	APIKey   string
	User     string // root
	Password string
	CertPEM  []byte // the server's certificate (https)
	SSHPort  int    // 0 without Options.SSH
	Pool     string
}

// Start builds the server in o.Dir and serves it on a free port.
func Start(o Options) (*Host, error) {
	if o.Dir == "" {
		return nil, fmt.Errorf("truenashost: Options.Dir is required")
	}
	if o.Version == "" {
		o.Version = "25.10"
	}
	v, err := middleware.ParseVersion(o.Version)
	if err != nil {
		return nil, err
	}
	if o.PoolSize == 0 {
		o.PoolSize = DefaultPoolSize
	}
	key := o.APIKey
	if key == "" {
		key = apiKey()
	}
	if o.Addr == "" {
		o.Addr = "127.0.0.1:0"
	}
	if o.SSHAddr == "" {
		o.SSHAddr = "127.0.0.1:0"
	}
	srv, err := truenas.New(truenas.Options{
		Version:  v,
		StateDir: o.Dir,
		Pools:    []zfsmodel.PoolSpec{{Name: DefaultPool, Size: o.PoolSize}},
		Users:    map[string]string{"root": DefaultPassword},
		APIKeys:  map[string]string{"switchyard-lab": key},
		TLS:      !o.Plain,
		Hostname: "truenas-lab",
		Logger:   o.Logger,
		Kernel:   o.Kernel,
	})
	if err != nil {
		return nil, err
	}
	if err := srv.Start(o.Addr); err != nil {
		srv.Close()
		return nil, err
	}
	if o.Latency > 0 {
		srv.Faults().SetLatency("", o.Latency)
	}
	u, _ := url.Parse(srv.URL())
	port, _ := strconv.Atoi(u.Port())
	h := &Host{Server: srv, Version: v, Protocol: u.Scheme, Host: u.Hostname(), Port: port, APIKey: key,
		User: "root", Password: DefaultPassword, Pool: DefaultPool}
	if !o.Plain {
		h.CertPEM = srv.CertPEM()
	}
	if err := h.Prepare(); err != nil {
		srv.Close()
		return nil, err
	}
	if o.SSH {
		addr, err := srv.StartSSH(o.SSHAddr, map[string]zfsssh.User{"root": {Password: DefaultPassword, Sudo: true}})
		if err != nil {
			srv.Close()
			return nil, err
		}
		_, p, _ := net.SplitHostPort(addr)
		h.SSHPort, _ = strconv.Atoi(p)
	}
	return h, nil
}

// Prepare makes the host look like a TrueNAS its admin has configured for
// CSI, as a real one has to be: iSCSI portal 1 on every address and
// initiator group 1 admitting every initiator (a fresh TrueNAS has
// neither; the configs of DriverConfig name both), and an NVMe-oF TCP port
// on releases that have NVMe-oF (the simulator mounts pools under /mnt
// itself). A host restarted on its state finds them there already.
func (h *Host) Prepare() error {
	if err := h.ensure("iscsi.portal", map[string]any{"listen": []any{map[string]any{"ip": "0.0.0.0"}},
		"comment": "switchyard-lab"}); err != nil {
		return err
	}
	if err := h.ensure("iscsi.initiator", map[string]any{"comment": "switchyard-lab: every initiator"}); err != nil {
		return err
	}
	// and the services that serve them, started and enabled
	for _, svc := range []string{"nfs", "cifs", "iscsitarget", "nvmet"} {
		h.Server.SetServiceRunning(svc) // a release without the service ignores it
	}
	if !h.Version.AtLeast(25, 10, 0) {
		return nil
	}
	return h.ensure("nvmet.port", map[string]any{"addr_trtype": "TCP",
		"addr_traddr": "127.0.0.1", "addr_trsvcid": 4420})
}

// ensure creates one object in namespace ns unless it has some already.
func (h *Host) ensure(ns string, create map[string]any) error {
	var rows []map[string]any
	if err := h.call(ns+".query", &rows); err != nil {
		return err
	}
	if len(rows) > 0 {
		return nil
	}
	return h.call(ns+".create", nil, create)
}

// call runs a method in-process, as root (lab set-up and inspection).
func (h *Host) call(method string, out any, params ...any) error {
	m, ok := h.Server.Registry().Lookup(method)
	if !ok {
		return fmt.Errorf("truenashost: %s has no method %s", h.Version, method)
	}
	raw := make([]json.RawMessage, len(params))
	for i, p := range params {
		b, err := json.Marshal(p)
		if err != nil {
			return err
		}
		raw[i] = b
	}
	res, err := m.Handler(&middleware.Call{Ctx: context.Background(), Version: h.Version, User: "root", Progress: func(float64, string) {}}, raw)
	if err != nil {
		return fmt.Errorf("truenashost: %s: %w", method, err)
	}
	if out == nil {
		return nil
	}
	b, err := json.Marshal(res)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, out)
}

// Query runs a query method in-process and returns its rows.
func (h *Host) Query(method string) ([]map[string]any, error) {
	var rows []map[string]any
	err := h.call(method, &rows)
	return rows, err
}

// Close stops the server.
func (h *Host) Close() error { return h.Server.Close() }

// URL is the server's base URL.
func (h *Host) URL() string { return h.Server.URL() }

// apiKey makes a key in TrueNAS's form: "<id>-<64 alphanumerics>".
func apiKey() string {
	const chars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	b := make([]byte, 64)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = chars[int(b[i])%len(chars)]
	}
	return "1-" + string(b)
}
