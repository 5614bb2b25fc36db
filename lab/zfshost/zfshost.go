// Package zfshost starts a simulated ZFS storage host in-process: the ZFS
// model (simulators/zfsmodel) behind the ZFS-over-SSH server
// (simulators/zfsssh) on 127.0.0.1. Tests, benchmarks and the demo point
// zfs-generic-* configs at it exactly as they would at a real host.
package zfshost

import (
	"fmt"
	"log/slog"
	"net"
	"path/filepath"
	"time"

	"github.com/switchyard-csi/switchyard/simulators/kernel"
	"github.com/switchyard-csi/switchyard/simulators/zfsmodel"
	"github.com/switchyard-csi/switchyard/simulators/zfsssh"
)

// Defaults of Options.
const (
	DefaultPool     = "tank"
	DefaultPoolSize = 100 << 30
	DefaultUser     = "root"
	DefaultPassword = "switchyard-lab"
)

// Options tune the host.
type Options struct {
	Dir         string // state directory (required)
	Pool        string
	PoolSize    int64
	User        string
	Password    string
	MaxSessions int           // per connection; default 10 like OpenSSH
	Latency     time.Duration // added to every command (the host's work)
	// RTTLatency is added once per SSH exec whatever its command line runs:
	// a network round trip (faults.Set.SetRoundTripLatency).
	RTTLatency time.Duration
	// Shell is the login shell of User (default /bin/sh): bad-input tests
	// give one that is not POSIX.
	Shell string
	// Addr is where to listen (default 127.0.0.1:0, a free port). A host
	// restarted on the same Dir and Addr is the same host to a client: the
	// state and the SSH host key are kept in Dir.
	Addr   string
	Logger *slog.Logger
	// Kernel makes the host's targets and shares real (the storage VM).
	Kernel *kernel.Reconciler
}

// Host is a running simulated host.
type Host struct {
	Model    *zfsmodel.Model
	Server   *zfsssh.Server
	Addr     string // 127.0.0.1:<port>
	Port     int
	User     string
	Password string
	Pool     string
}

// Start opens the model in o.Dir and serves SSH on a free port.
func Start(o Options) (*Host, error) {
	if o.Dir == "" {
		return nil, fmt.Errorf("zfshost: Options.Dir is required")
	}
	if o.Pool == "" {
		o.Pool = DefaultPool
	}
	if o.PoolSize == 0 {
		o.PoolSize = DefaultPoolSize
	}
	if o.User == "" {
		o.User = DefaultUser
	}
	if o.Password == "" {
		o.Password = DefaultPassword
	}
	m, err := zfsmodel.Open(zfsmodel.Options{StateDir: filepath.Join(o.Dir, "zfs"),
		Pools: []zfsmodel.PoolSpec{{Name: o.Pool, Size: o.PoolSize}}})
	if err != nil {
		return nil, err
	}
	srv, err := zfsssh.New(zfsssh.Options{
		Host:        m,
		Users:       map[string]zfsssh.User{o.User: {Password: o.Password, Sudo: true, Shell: o.Shell}},
		MaxSessions: o.MaxSessions,
		StateDir:    filepath.Join(o.Dir, "ssh"),
		Files:       map[string]string{"/var/run/nvmet-config-loaded": ""},
		NVMetPorts:  []zfsssh.NVMetPort{{ID: 1, Trtype: "tcp", Adrfam: "ipv4", Traddr: "127.0.0.1", Trsvcid: "4420"}},
		Logger:      o.Logger,
		Kernel:      o.Kernel,
	})
	if err != nil {
		m.Close()
		return nil, err
	}
	if o.Latency > 0 {
		srv.Faults().SetLatency("", o.Latency)
	}
	if o.RTTLatency > 0 {
		srv.Faults().SetRoundTripLatency(o.RTTLatency)
	}
	if o.Addr == "" {
		o.Addr = "127.0.0.1:0"
	}
	addr, err := srv.Start(o.Addr)
	if err != nil {
		srv.Close()
		m.Close()
		return nil, err
	}
	return &Host{Model: m, Server: srv, Addr: addr.String(), Port: addr.(*net.TCPAddr).Port,
		User: o.User, Password: o.Password, Pool: o.Pool}, nil
}

// Close stops the server and closes the model (its state stays in Dir).
func (h *Host) Close() error {
	err := h.Server.Close()
	if cerr := h.Model.Close(); err == nil {
		err = cerr
	}
	return err
}

// SSHConnection is the sshConnection section of a driver config that
// reaches this host, indented for the top level of a YAML file.
func (h *Host) SSHConnection() string {
	return fmt.Sprintf("sshConnection:\n  host: 127.0.0.1\n  port: %d\n  username: %s\n  password: %s\n", h.Port, h.User, h.Password)
}
