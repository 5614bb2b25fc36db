package engine

// democratic-csi's user properties: switchyard reads and writes the same
// ones, so volumes made by either driver are managed by the other.
const (
	propManaged           = "democratic-csi:managed_resource"
	propSuccess           = "democratic-csi:provision_success"
	propVolumeName        = "democratic-csi:csi_volume_name"
	propShareContext      = "democratic-csi:csi_share_volume_context"
	propSourceType        = "democratic-csi:csi_volume_content_source_type"
	propSourceID          = "democratic-csi:csi_volume_content_source_id"
	propSnapshotName      = "democratic-csi:csi_snapshot_name"
	propSnapshotSource    = "democratic-csi:csi_snapshot_source_volume_id"
	propProvisionerDriver = "democratic-csi:volume_context_provisioner_driver"
	propProvisionerID     = "democratic-csi:volume_context_provisioner_instance_id"

	// propPredictedMount is switchyard's own: the mountpoint a one-exec
	// create predicted for the share context it wrote (oneshot.go). Only a
	// volume that has it, with a value other than its real mountpoint, has
	// its share context corrected; every other volume's stored context is
	// answered as stored, as before.
	propPredictedMount = "switchyard:predicted_mountpoint"

	// Prefixes of the temporary snapshots made for clones and detached
	// copies; a volume whose origin has the first prefix owns it.
	cloneSnapshotPrefix    = "volume-source-for-volume-"
	detachedSnapshotPrefix = "volume-source-for-snapshot-"
)

// createOnlyProps cannot be given to `zfs clone` (they are fixed when a
// filesystem is created); democratic-csi drops them for clones too.
var createOnlyProps = map[string]bool{"aclmode": true, "aclinherit": true, "acltype": true, "casesensitivity": true,
	"normalization": true, "utf8only": true, "volblocksize": true}

// volumeProps are read for every volume: enough to answer CreateVolume
// idempotently, ControllerGetVolume and ListVolumes without more commands.
// The sharer's asset properties are added (Engine.volumeProps).
var baseVolumeProps = []string{"type", "volsize", "refquota", "volblocksize", "mountpoint", "origin",
	propManaged, propSuccess, propVolumeName, propShareContext, propSourceType, propSourceID,
	propProvisionerDriver, propProvisionerID, propPredictedMount}

func (e *Engine) volumeProps() []string {
	return append(append([]string(nil), baseVolumeProps...), e.share.AssetProps()...)
}
