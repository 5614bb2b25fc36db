package zfsgeneric

import (
	"context"
	"log/slog"

	"github.com/switchyard-csi/switchyard/driver/backend"
	"github.com/switchyard-csi/switchyard/driver/config"
	"github.com/switchyard-csi/switchyard/driver/zfs"
)

// Platform is what differs between the ZFS hosts this package's controller
// drives. zfs-generic-* builds one from the zfs command line over SSH;
// driver/truenas builds one from the TrueNAS API. Everything else (ids,
// user properties, volume_context, snapshots, clones, listing, resuming
// half-made volumes) is the same, so volumes move between them.
type Platform struct {
	Driver   string // driver name, as in the config's driver key
	Block    bool   // volumes are zvols (iscsi, nvmeof), not filesystems
	Datasets zfs.Datasets
	Sharer   Sharer
	// MaxZvolName is the longest "zvol/<dataset>" device name the host
	// allows, and how to name the host in the error; nil means 255.
	MaxZvolName func(ctx context.Context) (limit int, host string, err error)
	// MinQuota is the smallest refquota the platform accepts (TrueNAS's API:
	// 1 GiB); smaller filesystem volumes are made this large. 0: no minimum.
	MinQuota int64
	// SetPermissions applies zfs.datasetPermissions* to a new filesystem's
	// mountpoint; nil when the config sets none.
	SetPermissions func(ctx context.Context, mountpoint string, p Permissions) error
	// Close releases the connections; may be nil.
	Close func() error
}

// Permissions are the zfs.datasetPermissions* keys.
type Permissions struct {
	Mode, User, Group string
	ACLs              []string
	ACLBinary         string
}

// IsZero reports whether no permission key is set.
func (p Permissions) IsZero() bool {
	return p.Mode == "" && p.User == "" && p.Group == "" && len(p.ACLs) == 0
}

// ValidateCommon reports the problems in the keys every ZFS backend shares
// (zfs.*, _private.csi.volume.*, instance_id).
func ValidateCommon(cfg config.Tree) []config.Problem {
	r := config.NewReader(cfg)
	var s settings
	parseCommon(r, &s)
	return r.Problems()
}

// NewEngine builds the controller for a platform. opts.Config supplies the
// common keys; the platform's own keys are its builder's business.
func NewEngine(opts backend.Options, p Platform) (*Driver, error) {
	r := config.NewReader(opts.Config)
	s := settings{driver: p.Driver, kind: filesystem}
	if p.Block {
		s.kind = volume
	}
	parseCommon(r, &s)
	if len(r.Problems()) > 0 {
		return nil, config.Problems(r.Problems()).InFile(opts.File)
	}
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	log = log.With("driver", p.Driver)
	if opts.Connection != "" {
		log = log.With("connection", opts.Connection)
	}
	d := &Driver{cfg: s, zfs: p.Datasets, share: p.Sharer, plat: p, host: &hostInfo{}, log: log}
	return d, nil
}

// Permissions returns the configured zfs.datasetPermissions* keys.
func (d *Driver) Permissions() Permissions {
	return Permissions{Mode: d.cfg.permMode, User: d.cfg.permUser, Group: d.cfg.permGroup, ACLs: d.cfg.acls, ACLBinary: d.cfg.aclBinary}
}

// maxZvolName asks the platform for the zvol device name limit.
func (d *Driver) maxZvolName(ctx context.Context) (int, string, error) {
	if d.plat.MaxZvolName == nil {
		return 255, d.cfg.driver, nil
	}
	return d.plat.MaxZvolName(ctx)
}

// NewSSHEngine builds the controller for a ZFS host reached over
// sshConnection (or locally without it) whose volumes are shared by
// sharer (closers run at Close, after the SSH connection's): the freenas-*/truenas-* SSH backends run zfs over SSH and share
// through the TrueNAS API. The zfs.cli.* and sshConnection.* keys are read
// here.
func NewSSHEngine(opts backend.Options, driver string, block bool, sharer Sharer, closers ...func() error) (*Driver, error) {
	r := config.NewReader(opts.Config)
	s := settings{driver: driver, kind: filesystem}
	if block {
		s.kind = volume
	}
	if v, ok := opts.Config.Lookup("sshConnection"); ok && v != nil {
		s.ssh = parseSSH(r)
	}
	s.sudo = r.Bool("zfs.cli.sudoEnabled", false)
	s.paths = zfs.Paths{ZFS: r.Str("zfs.cli.paths.zfs"), Zpool: r.Str("zfs.cli.paths.zpool"),
		Sudo: r.Str("zfs.cli.paths.sudo"), Chroot: r.Str("zfs.cli.paths.chroot")}
	parseCommon(r, &s)
	if len(r.Problems()) > 0 {
		return nil, config.Problems(r.Problems()).InFile(opts.File)
	}
	d, err := newCLIDriver(opts, s)
	if err != nil {
		return nil, err
	}
	d.share = sharer
	d.plat.Sharer = sharer
	sshClose := d.plat.Close
	d.plat.Close = func() error {
		err := sshClose()
		for _, c := range closers {
			if cerr := c(); err == nil {
				err = cerr
			}
		}
		return err
	}
	return d, nil
}

// ValidateSSH reports the problems in sshConnection.* and zfs.cli.* keys.
func ValidateSSH(cfg config.Tree) []config.Problem {
	r := config.NewReader(cfg)
	if v, ok := cfg.Lookup("sshConnection"); ok && v != nil {
		parseSSH(r)
	} else {
		r.Add("sshConnection", "required: this driver runs zfs on the storage host over SSH")
	}
	r.Bool("zfs.cli.sudoEnabled", false)
	return r.Problems()
}
