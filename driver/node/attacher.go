package node

import (
	"context"
	"log/slog"
	"path/filepath"

	"github.com/container-storage-interface/spec/lib/go/csi"
	mount "k8s.io/mount-utils"

	"github.com/switchyard-csi/switchyard/driver/keylock"
	"github.com/switchyard-csi/switchyard/driver/volumecontext"
)

// StagedBlockDevice is the file under the staging path onto which an
// attacher binds the device of a volume with access type block; publish
// binds it on to the target file. Volumes with access type mount are
// mounted on the staging path itself.
const StagedBlockDevice = "block_device"

// Attacher makes one kind of volume appear at the staging path and
// releases it again. The Service does everything else (validation of the
// request, records, idempotency checks, publish, unmount), so an attacher
// holds only what is specific to its storage protocol.
type Attacher interface {
	// Name is the node_attach_driver value, e.g. "hostpath".
	Name() string
	// Validate checks v.Context and v.Capability without touching the
	// host. It returns INVALID_ARGUMENT naming the missing or malformed
	// volume_context key, or the unsupported access type.
	Validate(v *Volume) error
	// Stage attaches the volume and mounts it: a filesystem on
	// v.StagingPath (which exists), or for access type block the device
	// bound onto v.StagedPath(). It must be idempotent: when the volume is
	// already there it returns nil; when something else is mounted there
	// it returns ALREADY_EXISTS. Errors are gRPC statuses (NOT_FOUND when
	// the backing volume does not exist); other errors become INTERNAL.
	Stage(ctx context.Context, h *Host, v *Volume) error
	// Unstage releases what Stage attached beyond the mount (an iSCSI
	// session, an NVMe-oF connection). It runs after the Service has
	// unmounted everything at the staging path, with v rebuilt from the
	// record (no secrets). It must be idempotent.
	Unstage(ctx context.Context, h *Host, v *Volume) error
}

// Expander is implemented by attachers whose volumes can grow on the node
// (rescan the device, grow the filesystem). Attachers without it have
// nothing to grow, and NodeExpandVolume reports the requested size.
type Expander interface {
	// Expand grows the volume published or staged at volumePath and
	// returns its new capacity in bytes (0 if unknown).
	Expand(ctx context.Context, h *Host, v *Volume, volumePath string, requiredBytes int64) (int64, error)
}

// Host is what attachers use to touch the node: the one exec seam, a
// mounter whose formatting commands run through that seam, and what the
// node knows about its other volumes.
type Host struct {
	Exec    *Exec
	Mounter *mount.SafeFormatAndMount
	Log     *slog.Logger
	// Volumes lists every volume this node has a record of (staged, or
	// being staged), except those being unstaged. Attachers whose
	// connections are shared between volumes (an NVMe-oF subsystem, an
	// iSCSI target) release a connection only when no other volume in this
	// list uses it. Nil means no other volumes.
	Volumes func() ([]*Volume, error)

	// Where the node's device and sysfs trees are, and how long and how
	// often attachers wait: unit tests point these at temporary trees.
	env hostEnv
	// targets serialises attaching and releasing per shared connection
	// (nqn, iqn+portal), so an unstage never disconnects what a concurrent
	// stage of another volume is about to use.
	targets keylock.Set
	// attaches lets a retried stage join the attach that an earlier,
	// timed-out request started (see attachFlights).
	attaches attachFlights
}

// Volume is what an attacher knows about one volume, taken from the
// request (Stage) or from the node record (Unstage, Expand).
type Volume struct {
	ID string
	// Context holds the attach keys: the volume_context, or for a static
	// PV whose volume_context lacks node_attach_driver, publish_context's
	// keys over it (see attachContext).
	Context        map[string]string
	PublishContext map[string]string
	// Secrets are the request's secrets, set for Stage only. They are never
	// logged or persisted; pass them to commands via Command.Sensitive.
	Secrets     map[string]string
	Capability  *csi.VolumeCapability
	StagingPath string
	// Retry: an earlier stage of this volume started and did not finish
	// (its node record exists, unstaged), so the attacher may find part of
	// its work done and check before redoing it.
	Retry bool
}

// IsBlock reports whether the volume is used with access type block.
func (v *Volume) IsBlock() bool { return v.Capability.GetBlock() != nil }

// StagedPath is where the staged volume appears: the staging path for a
// filesystem, <staging>/block_device for a block device.
func (v *Volume) StagedPath() string {
	if v.IsBlock() {
		return filepath.Join(v.StagingPath, StagedBlockDevice)
	}
	return v.StagingPath
}

// LogValue lets a Volume be logged without its secrets or context values.
func (v *Volume) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("id", v.ID),
		slog.String("attacher", volumecontext.AttachDriver(v.Context)),
		slog.String("staging", v.StagingPath),
		slog.Bool("block", v.IsBlock()),
	)
}
