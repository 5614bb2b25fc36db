// Package dirvol is the controller of backends whose volumes are
// directories in one base directory, laid out as democratic-csi's
// local-hostpath and client drivers (nfs-client, smb-client, lustre-client)
// lay them out, so that volumes and snapshots democratic-csi made are found:
//
//	v/<volume id>/, s/<snapshot>/   volumes and filecopy snapshots
//	.switchyard/                    switchyard's own JSON metadata
//
// Clones, restores and snapshots are directory copies made in Go (no rsync),
// reflinked where the backend asks for it, built in a temporary directory
// next to the target and renamed into place when complete, so a failure
// never leaves a partial volume or snapshot under its final name.
//
// A backend (driver/localhostpath, driver/shareclient) embeds a Controller
// and supplies, through Backend, only what differs: where nodes find a
// volume, its topology, which capabilities it serves, and any check before
// the base directory is touched. It is a shared package: backends import
// it, it imports no backend.
package dirvol

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"syscall"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/driver/backend"
)

// Backend is what a backend over a Controller decides itself.
type Backend interface {
	// Ready fails (with a status) when the base directory must not be
	// touched now; call names the RPC.
	Ready(call string) error
	// CheckCapability returns why a volume capability cannot be served, or "".
	CheckCapability(c *csi.VolumeCapability) string
	// CheckRequisite fails when CreateVolume's topology requirement
	// excludes where this backend makes volumes.
	CheckRequisite(req *csi.TopologyRequirement) error
	// CapacityFor reports whether GetCapacity for this topology counts the
	// base directory's free space (false: 0), after any preparation.
	CapacityFor(topo *csi.Topology) (bool, error)
	// VolumeContext is what the node service needs to publish volume id.
	VolumeContext(id string) map[string]string
	// Topology is where volumes are accessible (nil: everywhere).
	Topology() []*csi.Topology
}

// Flavor is the wording and the fast paths that differ between backends.
type Flavor struct {
	// ErrPrefix starts every file system error: "local-hostpath", "share".
	ErrPrefix string
	// Family names the ids in NOT_FOUND messages ("not a local-hostpath
	// volume id"); "" says "not a volume id of this driver".
	Family string
	// Product is what CreateSnapshot says does not support another
	// snapshot driver: "switchyard's <Product>".
	Product string
	// Reflink shares file blocks in copies (FICLONE) where the file
	// system can, before copying bytes.
	Reflink bool
	// FastEmpty makes an empty volume with one mkdir (when no permissions
	// are to be applied) and removes it with one rmdir; see empty.go.
	FastEmpty bool
	// CacheMeta keeps volume metadata read, keyed by the file's identity.
	CacheMeta bool
	// CacheLists keeps the sorted listings of the volumes and snapshots
	// directories while their identity and times stay the same
	// (listcache.go). Only for local file systems: an NFS or SMB client
	// answers a stat from attributes cached for seconds, so another
	// node's new volume would stay hidden that long.
	CacheLists bool
}

// Controller serves the CSI controller calls for directory volumes.
type Controller struct {
	csi.UnimplementedControllerServer

	flavor Flavor
	be     Backend
	cfg    Settings
	store  store
	log    *slog.Logger
	locks  keyLocks
	lists  *listCache // nil: every listing reads the directory

	// CopyHook is passed to every copy (tests simulate failures with it).
	CopyHook func(rel string) error
	// Clock, when set, replaces the clock for creation times (tests).
	Clock func() time.Time
}

// NewController builds a controller over the settings' controllerBasePath.
func NewController(f Flavor, cfg Settings, be Backend, log *slog.Logger) *Controller {
	s := store{base: cfg.ControllerBase}
	if f.CacheMeta {
		s.cache = &metaCache{}
	}
	d := &Controller{flavor: f, be: be, cfg: cfg, store: s, log: log}
	if f.CacheLists {
		d.lists = newListCache()
	}
	return d
}

// listChanged tells the listing cache that this driver added or removed
// a volume or snapshot directory (or may have: it is called when a create
// or delete ends, whatever its outcome).
func (d *Controller) listChanged() {
	if d.lists != nil {
		d.lists.changed()
	}
}

// Close releases nothing: the controller holds no connections or open files.
func (d *Controller) Close() error { return nil }

// ControllerGetCapabilities lists what directory volumes implement.
func (d *Controller) ControllerGetCapabilities(context.Context, *csi.ControllerGetCapabilitiesRequest) (*csi.ControllerGetCapabilitiesResponse, error) {
	return backend.Capabilities(
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
	), nil
}

// Settings is the configuration the controller was built with.
func (d *Controller) Settings() Settings { return d.cfg }

// SetBase points the controller at another base directory (tests).
func (d *Controller) SetBase(base string) { d.cfg.ControllerBase, d.store.base = base, base }

// VolumesDir is the directory volumes are in, relative to the base ("v").
const VolumesDir = volumesDir

func (d *Controller) now() time.Time {
	if d.Clock != nil {
		return d.Clock()
	}
	return time.Now().UTC()
}

func (d *Controller) newCopier(ctx context.Context) *copier {
	return &copier{ctx: ctx, hook: d.CopyHook, tolerateChownEPERM: os.Geteuid() != 0, reflink: d.flavor.Reflink}
}

// fsError turns a filesystem failure into a status with the operation and
// path in the message.
func (d *Controller) fsError(op string, err error) error { return FSError(d.flavor.ErrPrefix, op, err) }

// FSError turns a file system failure into a status naming prefix (the
// backend), the operation and the path.
func FSError(prefix, op string, err error) error {
	if _, ok := status.FromError(err); ok {
		return err // already a status, chosen where the cause was known
	}
	code := codes.Internal
	switch {
	case errors.Is(err, context.Canceled):
		code = codes.Canceled
	case errors.Is(err, context.DeadlineExceeded):
		code = codes.DeadlineExceeded
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT):
		code = codes.ResourceExhausted
	case errors.Is(err, fs.ErrPermission), errors.Is(err, syscall.EROFS):
		code = codes.FailedPrecondition
	}
	return status.Errorf(code, "%s: %s: %v", prefix, op, err)
}

// idNoun is how NOT_FOUND messages name a volume or snapshot id.
func (d *Controller) idNoun(kind string) string {
	if d.flavor.Family == "" {
		return "a " + kind + " id of this driver"
	}
	return "a " + d.flavor.Family + " " + kind + " id"
}

// nameNoun is how warnings name a volume or snapshot.
func (d *Controller) nameNoun(kind string) string {
	if d.flavor.Family == "" {
		return "a " + kind
	}
	return "a " + d.flavor.Family + " " + kind
}

func (d *Controller) checkCapabilities(caps []*csi.VolumeCapability) string {
	if len(caps) == 0 {
		return "volume_capabilities is required"
	}
	for _, c := range caps {
		if msg := d.be.CheckCapability(c); msg != "" {
			return msg
		}
	}
	return ""
}
