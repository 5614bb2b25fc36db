// Package zfsgeneric is the zfs-generic-{nfs,smb,iscsi,nvmeof} backend: any
// ZFS host driven over SSH (or locally) with the zfs command line, sharing
// volumes with dataset properties (sharenfs/sharesmb), targetcli (LIO
// iSCSI) or nvmetcli (kernel NVMe-oF target). Datasets, user properties and
// volume_context are democratic-csi's, so volumes made by democratic-csi
// are found and managed, and the other way round.
package zfsgeneric

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"sync"

	"github.com/container-storage-interface/spec/lib/go/csi"

	"github.com/switchyard-csi/switchyard/driver/backend"
	"github.com/switchyard-csi/switchyard/driver/config"
	"github.com/switchyard-csi/switchyard/driver/zfs"
)

// Driver names, as democratic-csi spells them.
const (
	DriverNFS    = "zfs-generic-nfs"
	DriverSMB    = "zfs-generic-smb"
	DriverISCSI  = "zfs-generic-iscsi"
	DriverNVMeoF = "zfs-generic-nvmeof"
)

// Id limits: volume ids are at most MaxVolumeIDLen bytes and snapshot ids
// (<volume id>@<name>) at most MaxSnapshotIDLen, so that a proxy handle
// (`s:<connection>/<id>`) fits CSI's 128 bytes with connection names of up
// to 29 characters. Kubernetes names (pvc-<uuid>, snapshot-<uuid>) are never
// shortened.
const (
	MaxVolumeIDLen   = 64
	MaxSnapshotIDLen = 96
)

func init() {
	for _, name := range []string{DriverNFS, DriverSMB, DriverISCSI, DriverNVMeoF} {
		backend.Register(backend.Type{
			Name:             name,
			ConfigKey:        "zfs",
			MaxVolumeIDLen:   MaxVolumeIDLen,
			MaxSnapshotIDLen: MaxSnapshotIDLen,
			Validate:         Validate,
			New:              backend.Constructor(New),
		})
	}
}

// Driver is one configured zfs-generic backend (the controller service).
type Driver struct {
	csi.UnimplementedControllerServer

	cfg   settings
	exec  zfs.Executor
	zfs   zfs.Datasets
	share Sharer
	plat  Platform
	host  *hostInfo
	log   *slog.Logger
	// cliLock serialises targetcli/nvmetcli on the storage host: they keep
	// no locks of their own and concurrent saveconfig runs corrupt the
	// saved configuration (democratic-csi issue #504). It is shared by
	// every driver that talks to the same host.
	cliLock *sync.Mutex
}

var _ backend.Driver = (*Driver)(nil)

// New builds a driver from opts.Config. Nothing is contacted until the
// first call.
func New(opts backend.Options) (*Driver, error) {
	cfg, problems := parseSettings(opts.Config)
	if len(problems) > 0 {
		return nil, config.Problems(problems).InFile(opts.File)
	}
	d, err := newCLIDriver(opts, cfg)
	if err != nil {
		return nil, err
	}
	d.share = newSharer(d)
	d.plat.Sharer = d.share
	return d, nil
}

// newCLIDriver builds a driver that runs the zfs command line over SSH
// (or locally); the caller sets its sharer.
func newCLIDriver(opts backend.Options, cfg settings) (*Driver, error) {
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	log = log.With("driver", cfg.driver)
	if opts.Connection != "" {
		log = log.With("connection", opts.Connection)
	}
	var (
		exec    zfs.Executor
		hostKey string
	)
	if cfg.ssh != nil {
		ssh, err := zfs.NewSSH(*cfg.ssh, log)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", opts.File, err)
		}
		exec = ssh
		port := cfg.ssh.Port
		if port == 0 {
			port = 22
		}
		hostKey = "ssh://" + net.JoinHostPort(cfg.ssh.Host, strconv.Itoa(port))
	} else {
		exec = zfs.NewLocal("", log)
		hostKey = "local"
	}
	d := &Driver{
		cfg:     cfg,
		exec:    exec,
		zfs:     &zfs.CLI{Exec: exec, Paths: cfg.paths, Sudo: cfg.sudo},
		host:    &hostInfo{},
		log:     log,
		cliLock: hostLock(hostKey),
	}
	d.plat = Platform{Driver: cfg.driver, Block: cfg.kind == volume, Datasets: d.zfs,
		MaxZvolName: d.cliMaxZvolName, SetPermissions: d.cliSetPermissions, Close: exec.Close}
	return d, nil
}

// Close closes the connection to the host.
func (d *Driver) Close() error {
	if d.plat.Close == nil {
		return nil
	}
	return d.plat.Close()
}

var (
	hostLocksMu sync.Mutex
	hostLocks   = map[string]*sync.Mutex{}
)

// hostLock returns the process-wide lock for one storage host.
func hostLock(key string) *sync.Mutex {
	hostLocksMu.Lock()
	defer hostLocksMu.Unlock()
	m := hostLocks[key]
	if m == nil {
		m = &sync.Mutex{}
		hostLocks[key] = m
	}
	return m
}

// ControllerGetCapabilities lists what this backend implements.
func (d *Driver) ControllerGetCapabilities(context.Context, *csi.ControllerGetCapabilitiesRequest) (*csi.ControllerGetCapabilitiesResponse, error) {
	rpcs := []csi.ControllerServiceCapability_RPC_Type{
		csi.ControllerServiceCapability_RPC_CREATE_DELETE_VOLUME,
		csi.ControllerServiceCapability_RPC_CREATE_DELETE_SNAPSHOT,
		csi.ControllerServiceCapability_RPC_CLONE_VOLUME,
		csi.ControllerServiceCapability_RPC_EXPAND_VOLUME,
		csi.ControllerServiceCapability_RPC_GET_CAPACITY,
		csi.ControllerServiceCapability_RPC_LIST_VOLUMES,
		csi.ControllerServiceCapability_RPC_LIST_SNAPSHOTS,
		csi.ControllerServiceCapability_RPC_GET_SNAPSHOT,
		csi.ControllerServiceCapability_RPC_GET_VOLUME,
		csi.ControllerServiceCapability_RPC_SINGLE_NODE_MULTI_WRITER,
	}
	return backend.Capabilities(rpcs...), nil
}
