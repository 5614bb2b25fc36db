package node

import (
	"context"
	"log/slog"
	"path/filepath"

	"github.com/container-storage-interface/spec/lib/go/csi"
	mount "k8s.io/mount-utils"
)

// KeyAttachDriver is the volume_context key that selects the attacher
// (democratic-csi convention).
const KeyAttachDriver = "node_attach_driver"

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

// Host is what attachers use to touch the node: the one exec seam, and a
// mounter whose formatting commands run through that seam.
type Host struct {
	Exec    *Exec
	Mounter *mount.SafeFormatAndMount
	Log     *slog.Logger
}

// Volume is what an attacher knows about one volume, taken from the
// request (Stage) or from the node record (Unstage, Expand).
type Volume struct {
	ID             string
	Context        map[string]string // volume_context
	PublishContext map[string]string
	// Secrets are the request's secrets, set for Stage only. They are never
	// logged or persisted; pass them to commands via Command.Sensitive.
	Secrets     map[string]string
	Capability  *csi.VolumeCapability
	StagingPath string
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
		slog.String("attacher", v.Context[KeyAttachDriver]),
		slog.String("staging", v.StagingPath),
		slog.Bool("block", v.IsBlock()),
	)
}
