package truenas

import (
	"errors"
	"fmt"
	"log/slog"

	"github.com/switchyard-csi/switchyard/simulators/kernel"
	"github.com/switchyard-csi/switchyard/simulators/truenas/middleware"
	"github.com/switchyard-csi/switchyard/simulators/zfsmodel"
)

// Options configure a Server.
type Options struct {
	// Version is the release simulated (required): one of middleware.Supported or a
	// later patch of one of them, e.g. {25, 4, 2} or {25, 4, 3}.
	Version middleware.Version
	// StateDir holds everything that persists across New/Close: the ZFS
	// model (StateDir/zfs, unless Model is given), the services' objects,
	// API key revocations, the TLS certificate and the host id. Required.
	StateDir string
	// Pools are created in the model when absent; default one pool "tank"
	// of 100 GiB. Ignored when Model is given.
	Pools []zfsmodel.PoolSpec
	// Model shares an existing model (e.g. with a zfsssh server); the
	// server then does not close it. Either way, pools whose mountpoint is
	// the default get /mnt/<pool>, as TrueNAS imports pools with
	// altroot=/mnt.
	Model *zfsmodel.Model
	// Users are the local accounts that may log in with a password (user ->
	// password). When Users and APIKeys are both empty, the only account is
	// root with password "secret".
	Users map[string]string
	// APIKeys are root's API keys, name -> key "<id>-<64 alphanumerics>".
	APIKeys map[string]string
	// TLS makes Start serve https/wss with a self-signed ECDSA certificate
	// for 127.0.0.1, ::1, localhost and Hostname (see CertPEM). StartTLS
	// serves TLS whatever this says, so a server can listen on both a
	// plain and a TLS port, as a real TrueNAS does on 80 and 443.
	TLS bool
	// MaxConcurrentCalls bounds the calls in flight on one JSON-RPC
	// connection (default 20, middlewared's hard limit); one more is
	// answered -32000. Half of it (middlewared's soft limit, 10) run at
	// once, the others wait for a slot.
	MaxConcurrentCalls int
	// Hostname is what system.info and the SSH endpoint report (default
	// "truenas").
	Hostname string
	// Logger receives connection and call logs (never parameters or
	// credentials); nil discards them.
	Logger *slog.Logger
	// FaultSeed seeds Faults' random error rates (default 1).
	FaultSeed uint64
	// MaxRecords bounds Calls() (default 10000, the most recent are kept).
	MaxRecords int
	// Kernel, when set, makes the NFS and SMB shares and the iSCSI and
	// NVMe-oF targets real (package kernel; the lab's storage VM), as owner
	// "truenas-<Hostname>"; the SSH endpoint's targetcli/nvmetcli and
	// sharenfs/sharesmb too, as "truenas-<Hostname>-ssh".
	Kernel *kernel.Reconciler
}

// defaultPool is the pool a fresh state gets when Options.Pools is empty.
var defaultPool = zfsmodel.PoolSpec{Name: "tank", Size: 100 << 30}

// validate checks o and fills in the defaults.
func (o *Options) validate() error {
	if o.Version == (middleware.Version{}) {
		return errors.New("truenas: Options.Version is required (one of 24.10.2, 25.04.2, 25.10.1, 26.04.0)")
	}
	if err := checkVersion(o.Version); err != nil {
		return err
	}
	if o.StateDir == "" {
		return errors.New("truenas: Options.StateDir is required: the model, the shares and the API key state persist there")
	}
	if len(o.Pools) == 0 {
		o.Pools = []zfsmodel.PoolSpec{defaultPool}
	}
	if len(o.Users) == 0 && len(o.APIKeys) == 0 {
		o.Users = map[string]string{"root": "secret"}
	}
	for u, p := range o.Users {
		if u == "" || p == "" {
			return fmt.Errorf("truenas: Options.Users: user %q needs a non-empty name and password", u)
		}
	}
	if o.MaxConcurrentCalls <= 0 {
		o.MaxConcurrentCalls = 20
	}
	if o.Hostname == "" {
		o.Hostname = "truenas"
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.FaultSeed == 0 {
		o.FaultSeed = 1
	}
	if o.MaxRecords <= 0 {
		o.MaxRecords = 10000
	}
	return nil
}

// checkVersion accepts the releases of middleware.Supported at their patch level
// or later: an earlier patch (25.04.1) would behave differently (API key
// revocation arrived in 25.04.2), which the simulator does not model.
func checkVersion(v middleware.Version) error {
	for _, s := range middleware.Supported {
		if s.Year == v.Year && s.Month == v.Month {
			if v.Patch < s.Patch {
				return fmt.Errorf("truenas: version %s is not simulated: %s.x starts at %s", v, v.Release(), s)
			}
			return nil
		}
	}
	names := make([]string, len(middleware.Supported))
	for i, s := range middleware.Supported {
		names[i] = s.String()
	}
	return fmt.Errorf("truenas: version %s is not simulated (simulated: %v, or a later patch)", v, names)
}
