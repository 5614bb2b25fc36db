package node

import (
	"context"
	"fmt"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/driver/volumecontext"
)

// ZFSLocal is the "zfs-local" attacher for datasets and zvols on this
// node (volume_context zfs_asset_name). A zvol is the block device
// /dev/zvol/<name>, formatted and mounted or bound like any block volume.
// A dataset with a mountpoint is mounted by ZFS (`zfs mount` when it is
// not) and bound onto the staging path; one with mountpoint=legacy (as
// democratic-csi leaves them) is mounted with mount -t zfs.
type ZFSLocal struct{}

// Name implements Attacher.
func (ZFSLocal) Name() string { return "zfs-local" }

// Validate implements Attacher.
func (ZFSLocal) Validate(v *Volume) error {
	if _, err := zfsAssetName(v); err != nil {
		return err
	}
	return validateBlockVolume(v)
}

// zfsAssetName is the volume's dataset or zvol (volume_context
// zfs_asset_name).
func zfsAssetName(v *Volume) (string, error) {
	var c volumecontext.ZFSLocal
	if err := c.Decode(v.Context); err != nil {
		return c.AssetName, invalidContext(v, err)
	}
	return c.AssetName, nil
}

// zfsAsset is what `zfs get` says about the volume.
type zfsAsset struct {
	name, typ, mountpoint, mounted string
}

func getZFSAsset(ctx context.Context, h *Host, v *Volume, name string) (zfsAsset, error) {
	a := zfsAsset{name: name}
	out, err := h.Exec.Run(ctx, Command{Name: "zfs", Args: []string{"get", "-H", "-o", "property,value", "type,mountpoint,mounted", name}})
	if err != nil {
		if strings.Contains(string(out), "dataset does not exist") {
			return a, status.Errorf(codes.NotFound, "volume %s: ZFS dataset %s does not exist on this node", v.ID, name)
		}
		return a, fmt.Errorf("zfs get %s: %w", name, err)
	}
	for _, line := range strings.Split(string(out), "\n") {
		k, val, _ := strings.Cut(strings.TrimSpace(line), "\t")
		switch k {
		case "type":
			a.typ = val
		case "mountpoint":
			a.mountpoint = val
		case "mounted":
			a.mounted = val
		}
	}
	return a, nil
}

// Stage implements Attacher.
func (ZFSLocal) Stage(ctx context.Context, h *Host, v *Volume) error {
	name, _ := zfsAssetName(v) // validated before
	a, err := getZFSAsset(ctx, h, v, name)
	if err != nil {
		return err
	}
	switch a.typ {
	case "volume":
		dev, err := h.waitDevice(ctx, h.dev("zvol", name))
		if err != nil {
			return fmt.Errorf("zvol %s: %w", name, err)
		}
		return stageDevice(h, v, dev)
	case "filesystem":
		if v.IsBlock() {
			return status.Errorf(codes.InvalidArgument, "volume %s: %s is a ZFS dataset (a filesystem); access type block needs a zvol", v.ID, name)
		}
		return stageDataset(ctx, h, v, a)
	}
	return status.Errorf(codes.FailedPrecondition, "volume %s: ZFS %s is a %s, not a filesystem or volume", v.ID, name, a.typ)
}

func stageDataset(ctx context.Context, h *Host, v *Volume, a zfsAsset) error {
	switch a.mountpoint {
	case "legacy":
		plain, sensitive := mountFlags(v)
		return share{name: "zfs-local", fsTypes: []string{"zfs"}}.mount(ctx, h, v, a.name, "zfs", plain, sensitive)
	case "none", "-", "":
		return status.Errorf(codes.FailedPrecondition,
			"volume %s: ZFS dataset %s has mountpoint=%s; give it a mountpoint or mountpoint=legacy", v.ID, a.name, a.mountpoint)
	}
	if a.mounted != "yes" {
		out, err := h.Exec.Run(ctx, Command{Name: "zfs", Args: []string{"mount", a.name}})
		if err != nil && !strings.Contains(string(out), "already mounted") {
			return fmt.Errorf("zfs mount %s: %w", a.name, err)
		}
	}
	mounted, err := isMountPoint(h.Mounter, v.StagingPath)
	if err != nil {
		return status.Errorf(codes.Internal, "volume %s: staging path %s: %v", v.ID, v.StagingPath, err)
	}
	if mounted {
		// A bind shows the dataset's root itself.
		if sameFile(a.mountpoint, v.StagingPath) {
			return nil
		}
		return status.Errorf(codes.AlreadyExists, "volume %s: staging path %s already has a mount that is not %s", v.ID, v.StagingPath, a.mountpoint)
	}
	if err := h.Mounter.Mount(a.mountpoint, v.StagingPath, "", []string{"bind"}); err != nil {
		return status.Errorf(codes.Internal, "volume %s: bind-mount %s (dataset %s) on %s: %v", v.ID, a.mountpoint, a.name, v.StagingPath, err)
	}
	return nil
}

// Unstage implements Attacher: the mount was all; the dataset stays
// mounted where ZFS mounts it.
func (ZFSLocal) Unstage(context.Context, *Host, *Volume) error { return nil }

// Expand implements Expander: a zvol's device follows volsize at once, so
// only its filesystem grows; a dataset's quota needs nothing on the node.
func (ZFSLocal) Expand(ctx context.Context, h *Host, v *Volume, volumePath string, requiredBytes int64) (int64, error) {
	name, err := zfsAssetName(v)
	if err != nil {
		return 0, err
	}
	a, err := getZFSAsset(ctx, h, v, name)
	if err != nil {
		return 0, err
	}
	if a.typ != "volume" {
		return requiredBytes, nil
	}
	dev := h.dev("zvol", name)
	if !exists(dev) {
		return 0, status.Errorf(codes.NotFound, "volume %s: zvol device %s does not exist", v.ID, dev)
	}
	return expandDevice(ctx, h, v, resolved(dev), volumePath, requiredBytes, func(context.Context, string) error { return nil })
}
