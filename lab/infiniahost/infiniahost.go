// Package infiniahost starts a simulated DDN Infinia in-process: the REST
// simulator (simulators/infinia) on a free port of 127.0.0.1, over TLS
// unless asked for plain HTTP, with its default tenant, block service
// and account. Tests, the demo and benchmarks point infinia-nvmeof
// configs (DriverConfig, DDNConfig) at it exactly as they would at a
// real Infinia.
package infiniahost

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/switchyard-csi/switchyard/simulators/infinia"
)

// Options tune the host.
type Options struct {
	Dir     string        // state directory (required)
	Plain   bool          // serve http instead of https
	Latency time.Duration // added to every REST call
	// Addr is where to listen (default 127.0.0.1:0, a free port); a host
	// restarted on the same Dir and Addr is the same host to a client.
	Addr     string
	TokenTTL time.Duration // lifetime of a login token (default 1h)
	Logger   *slog.Logger
	// Target mirrors subsystems into a real NVMe-oF target (nil: none).
	Target infinia.Target
}

// Host is a running simulated Infinia.
type Host struct {
	Server   *infinia.Server
	URL      string // https://127.0.0.1:<port> (http with Options.Plain)
	Account  string // the driver config's account key, "clu1/red/csiAccount"
	Password string
	CertPEM  []byte // the server's self-signed certificate (nil with Plain)
	Service  string // the StorageClass `service` parameter, "red/csiService"

	stop func() bool // unhooks the close on ctx's end
}

// Start builds the simulator in o.Dir and serves it on a free port. The
// host is closed when ctx ends, or by Close.
func Start(ctx context.Context, o Options) (*Host, error) {
	if o.Dir == "" {
		return nil, errors.New("infiniahost: Options.Dir is required")
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	srv, err := infinia.New(infinia.Options{StateDir: o.Dir, Plain: o.Plain, TokenTTL: o.TokenTTL, Logger: o.Logger, Target: o.Target})
	if err != nil {
		return nil, err
	}
	if o.Addr == "" {
		o.Addr = "127.0.0.1:0"
	}
	if err := srv.Start(o.Addr); err != nil {
		srv.Close()
		return nil, err
	}
	srv.Faults().SetLatency("", o.Latency)
	h := &Host{
		Server:   srv,
		URL:      srv.URL(),
		Account:  infinia.DefaultCluster + "/" + infinia.DefaultTenant + "/" + infinia.DefaultUser,
		Password: infinia.DefaultPassword,
		CertPEM:  srv.CertPEM(),
		Service:  infinia.DefaultSubtenant + "/" + infinia.DefaultService,
	}
	h.stop = context.AfterFunc(ctx, func() { srv.Close() })
	return h, nil
}

// Close stops the simulator; its state stays in Options.Dir.
func (h *Host) Close() error {
	h.stop()
	return h.Server.Close()
}
