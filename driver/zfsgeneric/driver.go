// Package zfsgeneric is the zfs-generic-{nfs,smb,iscsi,nvmeof} backend: any
// ZFS host driven over SSH (or locally) with the zfs command line, sharing
// volumes with dataset properties (sharenfs/sharesmb), targetcli (LIO
// iSCSI) or nvmetcli (kernel NVMe-oF target). The controller is
// driver/zfs/engine's; this package brings the config keys of the share
// strategies and the sharers. Datasets, user properties and volume_context
// are democratic-csi's, so volumes made by democratic-csi are found and
// managed, and the other way round.
package zfsgeneric

import (
	"net"
	"strconv"
	"sync"

	"github.com/switchyard-csi/switchyard/driver/backend"
	"github.com/switchyard-csi/switchyard/driver/config"
	"github.com/switchyard-csi/switchyard/driver/zfs/engine"
)

// Driver names, as democratic-csi spells them.
const (
	DriverNFS    = "zfs-generic-nfs"
	DriverSMB    = "zfs-generic-smb"
	DriverISCSI  = "zfs-generic-iscsi"
	DriverNVMeoF = "zfs-generic-nvmeof"
)

func init() {
	for _, name := range []string{DriverNFS, DriverSMB, DriverISCSI, DriverNVMeoF} {
		backend.Register(backend.Type{
			Name:             name,
			ConfigKey:        "zfs",
			MaxVolumeIDLen:   engine.MaxVolumeIDLen,
			MaxSnapshotIDLen: engine.MaxSnapshotIDLen,
			Validate:         Validate,
			Warnings:         engine.SSHWarnings,
			New:              backend.Constructor(New),
		})
	}
}

// New builds a driver from opts.Config. Nothing is contacted until the
// first call.
func New(opts backend.Options) (*engine.Engine, error) {
	s, problems := parseSettings(opts.Config)
	if len(problems) > 0 {
		return nil, config.Problems(problems).InFile(opts.File)
	}
	host, err := engine.NewCLIHost(opts, s.driver, s.cli)
	if err != nil {
		return nil, err
	}
	p := &platform{CLIHost: host, cfg: s, cliLock: hostLock(hostKey(s.cli))}
	p.sharer = newSharer(p)
	return engine.New(engine.Options{Options: opts, Driver: s.driver, Block: s.block(), FSTypes: s.fsTypes(), Platform: p})
}

// platform is a zfs-generic host: the zfs command line to it, and the
// sharer of the configured protocol.
type platform struct {
	*engine.CLIHost
	cfg    settings
	sharer engine.Sharer
	// cliLock serialises targetcli/nvmetcli on the storage host: they keep
	// no locks of their own and concurrent saveconfig runs corrupt the
	// saved configuration (democratic-csi issue #504). It is shared by
	// every driver that talks to the same host. A channel rather than a
	// mutex: a call waiting for it gives up when its context ends.
	cliLock chan struct{}
}

var _ engine.Platform = (*platform)(nil)

func (p *platform) Sharer() engine.Sharer { return p.sharer }

// MinQuota: zfs takes any refquota.
func (*platform) MinQuota() int64 { return 0 }

var (
	hostLocksMu sync.Mutex
	hostLocks   = map[string]chan struct{}{}
)

// hostKey names the storage host a config drives.
func hostKey(c engine.CLIConfig) string {
	if c.SSH == nil {
		return "local"
	}
	port := c.SSH.Port
	if port == 0 {
		port = 22
	}
	return "ssh://" + net.JoinHostPort(c.SSH.Host, strconv.Itoa(port))
}

// hostLock returns the process-wide lock for one storage host.
func hostLock(key string) chan struct{} {
	hostLocksMu.Lock()
	defer hostLocksMu.Unlock()
	m := hostLocks[key]
	if m == nil {
		m = make(chan struct{}, 1)
		hostLocks[key] = m
	}
	return m
}
