// Package shareclient is the nfs-client, smb-client and lustre-client
// backends: a volume is a subdirectory of a share that already exists on a
// server switchyard does not manage. The controller works on the share
// through a mount of it (controllerBasePath, mounted by whoever deploys the
// controller, as with democratic-csi); nodes mount
// <shareHost>:<shareBasePath>/v/<volume id> themselves.
//
// The layout is democratic-csi's (v/<volume id>, s/<snapshot>), so volumes
// and snapshots democratic-csi made are found, plus small JSON metadata
// files of switchyard's own under .switchyard/ (requested capacity, content
// source, creation times). Snapshots and clones are directory copies made
// in Go, reflinked where the share's file system can (FICLONE), built in a
// temporary directory and renamed into place when complete.
//
// Before touching the share every call checks that controllerBasePath is a
// writable directory on the kind's file system (nfs, cifs, lustre), so an
// unmounted share never makes volumes on the controller's own disk.
package shareclient

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"syscall"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/driver/backend"
	"github.com/switchyard-csi/switchyard/driver/config"
	"github.com/switchyard-csi/switchyard/driver/dirvol"
	"github.com/switchyard-csi/switchyard/driver/volumecontext"
)

// kind is one client driver type.
type kind struct {
	name    string // nfs-client, smb-client, lustre-client
	section string // config section: nfs, smb, lustre
	proto   string // what the share is called in messages: NFS, SMB, Lustre
	// fsTypes are the mount fs_types nodes may be asked for (democratic-csi's getFsTypes).
	fsTypes []string
	// magics are the statfs f_type values of the file system the
	// controller's mount must have.
	magics []int64
	// attach builds the node's attachment for a volume at sharePath.
	attach func(host, sharePath string) volumecontext.Attachment
}

// statfs magics (linux/magic.h and the file systems' own headers).
const (
	nfsMagic    = 0x6969
	cifsMagic   = 0xff534d42
	smb2Magic   = 0xfe534d42
	lustreMagic = 0x0bd00bd0
)

var kinds = []kind{
	{name: "nfs-client", section: "nfs", proto: "NFS", fsTypes: []string{"nfs"}, magics: []int64{nfsMagic},
		attach: func(h, p string) volumecontext.Attachment { return volumecontext.NFS{Server: h, Share: p} }},
	// democratic-csi strips the leading "/": //server/share/v/<id>.
	{name: "smb-client", section: "smb", proto: "SMB", fsTypes: []string{"cifs"}, magics: []int64{cifsMagic, smb2Magic},
		attach: func(h, p string) volumecontext.Attachment {
			return volumecontext.SMB{Server: h, Share: strings.TrimLeft(p, "/")}
		}},
	{name: "lustre-client", section: "lustre", proto: "Lustre", fsTypes: []string{"lustre"}, magics: []int64{lustreMagic},
		attach: func(h, p string) volumecontext.Attachment { return volumecontext.Lustre{Server: h, Share: p} }},
}

func init() {
	for _, k := range kinds {
		backend.Register(backend.Type{
			Name:             k.name,
			ConfigKey:        k.section,
			MaxVolumeIDLen:   MaxIDLen,
			MaxSnapshotIDLen: MaxIDLen,
			Validate:         k.validate,
			New: func(opts backend.Options) (backend.Driver, error) {
				return newDriver(k, opts)
			},
		})
	}
}

// Driver is a configured client backend (the controller service).
type Driver struct {
	*dirvol.Controller
	sh *share
}

// share is what a client backend decides over dirvol: the mount check,
// where nodes mount a volume from, and the capabilities a share serves.
type share struct {
	kind kind
	cfg  settings
	ctl  *dirvol.Controller // for the base directory, which tests move
	// statfs reads the file system type of a path (tests stand in for a
	// mounted share with it).
	statfs func(path string) (int64, error)
}

var _ backend.Driver = (*Driver)(nil)

// MaxIDLen is the longest volume or snapshot id these backends return.
const MaxIDLen = dirvol.MaxIDLen

// flavor: wording that names no one driver type (the file system errors
// say "share"), and reflinked copies (NFS 4.2 and SMB3 servers can).
var flavor = dirvol.Flavor{ErrPrefix: "share", Product: "share clients", Reflink: true}

// New builds a driver of the named type (nfs-client, smb-client,
// lustre-client) from opts.Config.
func New(name string, opts backend.Options) (*Driver, error) {
	for _, k := range kinds {
		if k.name == name {
			return newDriver(k, opts)
		}
	}
	return nil, fmt.Errorf("shareclient: unknown driver type %q", name)
}

func newDriver(k kind, opts backend.Options) (*Driver, error) {
	cfg, problems := parseSettings(k, opts.Config)
	if len(problems) > 0 {
		return nil, config.Problems(problems).InFile(opts.File)
	}
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	log = log.With("driver", k.name)
	if opts.Connection != "" {
		log = log.With("connection", opts.Connection)
	}
	sh := &share{kind: k, cfg: cfg, statfs: fsMagic}
	sh.ctl = dirvol.NewController(flavor, cfg.Settings, sh, log)
	return &Driver{Controller: sh.ctl, sh: sh}, nil
}

// name names the share in messages: server:path.
func (sh *share) name() string { return sh.cfg.shareHost + ":" + sh.cfg.ShareBase }

// Ready checks, before a call touches the share, that controllerBasePath
// is a writable directory on the share's file system: an unmounted share
// would otherwise fill the controller's own disk with volumes nodes can
// never mount. FAILED_PRECONDITION names server, share and mount point.
func (sh *share) Ready(call string) error {
	base := sh.ctl.Settings().ControllerBase
	fi, err := os.Stat(base)
	switch {
	case err != nil:
		return status.Errorf(codes.FailedPrecondition, "%s: %s: the %s share %s is not mounted on the controller: controllerBasePath %s: %v (mount the share there, %s.controllerBasePath)",
			call, sh.kind.name, sh.kind.proto, sh.name(), base, errors.Unwrap(err), sh.kind.section)
	case !fi.IsDir():
		return status.Errorf(codes.FailedPrecondition, "%s: %s: controllerBasePath %s is not a directory, so the %s share %s cannot be mounted there",
			call, sh.kind.name, base, sh.kind.proto, sh.name())
	}
	if sh.cfg.mountCheck {
		magic, err := sh.statfs(base)
		if err != nil {
			return status.Errorf(codes.FailedPrecondition, "%s: %s: reading the file system at controllerBasePath %s: %v", call, sh.kind.name, base, err)
		}
		if !slices.Contains(sh.kind.magics, magic) {
			return status.Errorf(codes.FailedPrecondition, "%s: %s: the %s share %s is not mounted on the controller: controllerBasePath %s is on a file system of type 0x%x, not %s (mount the share there; %s.checkControllerMount: false turns this check off)",
				call, sh.kind.name, sh.kind.proto, sh.name(), base, magic, strings.Join(sh.kind.fsTypes, "/"), sh.kind.section)
		}
	}
	if err := syscall.Access(base, 2 /* W_OK */); err != nil {
		return status.Errorf(codes.FailedPrecondition, "%s: %s: the %s share %s mounted at %s is not writable by the controller: %v",
			call, sh.kind.name, sh.kind.proto, sh.name(), base, err)
	}
	return nil
}

// fsMagic is statfs(2)'s f_type for path.
func fsMagic(path string) (int64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(path, &st); err != nil {
		return 0, err
	}
	return int64(st.Type) & 0xffffffff, nil //nolint:unconvert // Statfs_t.Type differs between architectures
}

// VolumeContext is what the node service needs to mount a volume: the
// share's server and the volume's path on it.
func (sh *share) VolumeContext(id string) map[string]string {
	return volumecontext.Context{
		Attach:      sh.kind.attach(sh.cfg.shareHost, sh.cfg.ShareBase+"/"+dirvol.VolumesDir+"/"+id),
		Provisioner: volumecontext.Provisioner{Driver: sh.kind.name, InstanceID: sh.cfg.InstanceID},
	}.Encode()
}

// Topology is nil: every node that can reach the server can mount.
func (sh *share) Topology() []*csi.Topology { return nil }

// CheckRequisite: any topology can reach the server.
func (sh *share) CheckRequisite(*csi.TopologyRequirement) error { return nil }

// CapacityFor counts the share's free space for any topology, once the
// share is mounted.
func (sh *share) CapacityFor(*csi.Topology) (bool, error) {
	if err := sh.Ready("GetCapacity"); err != nil {
		return false, err
	}
	return true, nil
}

// CheckCapability: a share serves every access mode, mount access only.
func (sh *share) CheckCapability(c *csi.VolumeCapability) string {
	if c == nil {
		return "a volume capability is empty"
	}
	if c.GetBlock() != nil {
		return fmt.Sprintf("%s volumes are directories on a share; block access is not supported", sh.kind.name)
	}
	m := c.GetMount()
	if m == nil {
		return fmt.Sprintf("a volume capability has no access type: %s volumes need mount access", sh.kind.name)
	}
	if fs := m.GetFsType(); fs != "" && !slices.Contains(sh.kind.fsTypes, fs) {
		return fmt.Sprintf("%s volumes mount as %s; fs_type %q cannot be applied (use %s or leave it empty)", sh.kind.name, strings.Join(sh.kind.fsTypes, "/"), fs, strings.Join(sh.kind.fsTypes, "/"))
	}
	if c.GetAccessMode() == nil {
		return "a volume capability has no access_mode"
	}
	if c.GetAccessMode().GetMode() == csi.VolumeCapability_AccessMode_UNKNOWN {
		return "access mode UNKNOWN is not supported"
	}
	return ""
}
