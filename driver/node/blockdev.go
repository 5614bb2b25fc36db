package node

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"golang.org/x/sys/unix"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	mount "k8s.io/mount-utils"

	"github.com/switchyard-csi/switchyard/driver/volumecontext"
)

// DefaultFsType is the filesystem made on a blank block device when the
// capability names none.
const DefaultFsType = "ext4"

// partitioned is what mount-utils' GetDiskFormat reports for a device
// holding a partition table rather than a filesystem.
const partitioned = "unknown data, probably partitions"

// stageDevice makes a block device the staged volume: for access type
// block it is bound onto <staging>/block_device; for access type mount it
// is formatted when blank (never otherwise), mounted on the staging path,
// and its filesystem grown to the device.
func stageDevice(h *Host, v *Volume, dev string) error {
	if v.IsBlock() {
		return bindDevice(h, v, dev)
	}
	return mountDevice(h, v, dev)
}

func bindDevice(h *Host, v *Volume, dev string) error {
	tgt := v.StagedPath()
	mounted, err := isMountPoint(h.Mounter, tgt)
	if err != nil {
		return status.Errorf(codes.Internal, "volume %s: %s: %v", v.ID, tgt, err)
	}
	if mounted {
		if sameDevice(h, dev, tgt, true) {
			return nil
		}
		return status.Errorf(codes.AlreadyExists, "volume %s: %s is already bound to another device than %s", v.ID, tgt, dev)
	}
	f, err := os.OpenFile(tgt, os.O_CREATE|os.O_RDONLY, 0o640)
	if err != nil {
		return status.Errorf(codes.Internal, "volume %s: create %s: %v", v.ID, tgt, err)
	}
	_ = f.Close()
	if err := h.Mounter.Mount(dev, tgt, "", []string{"bind"}); err != nil {
		return status.Errorf(codes.Internal, "volume %s: bind %s on %s: %v", v.ID, dev, tgt, err)
	}
	return nil
}

func mountDevice(h *Host, v *Volume, dev string) error {
	staging := v.StagingPath
	mounted, err := isMountPoint(h.Mounter, staging)
	if err != nil {
		return status.Errorf(codes.Internal, "volume %s: staging path %s: %v", v.ID, staging, err)
	}
	if mounted {
		if sameDevice(h, dev, staging, false) {
			return nil
		}
		return status.Errorf(codes.AlreadyExists, "volume %s: staging path %s already has another device than %s mounted", v.ID, staging, dev)
	}

	requested := v.Capability.GetMount().GetFsType()
	existing, err := h.Mounter.GetDiskFormat(dev)
	if err != nil {
		return status.Errorf(codes.Internal, "volume %s: read the filesystem type of %s: %v", v.ID, dev, err)
	}
	switch {
	case existing == partitioned:
		return status.Errorf(codes.FailedPrecondition,
			"volume %s: device %s holds a partition table, not a filesystem; it is left untouched", v.ID, dev)
	case existing != "" && requested != "" && existing != requested:
		return status.Errorf(codes.FailedPrecondition,
			"volume %s: device %s already has a %s filesystem but fs_type %s was requested; it is not reformatted (the data stays intact)",
			v.ID, dev, existing, requested)
	}
	fstype := firstNonEmpty(requested, existing, DefaultFsType)

	plain, sensitive := mountFlags(v)
	plain = without(plain, "defaults") // SafeFormatAndMount adds it
	ro := readerOnly(v.Capability.GetAccessMode().GetMode()) || hasFlag("ro", plain, sensitive)
	if ro && !hasFlag("ro", plain, sensitive) {
		// Several nodes may mount a reader-only volume: none may replay
		// a journal or otherwise write.
		plain = append(plain, "ro")
	}
	if fstype == "xfs" && !hasFlag("nouuid", plain, sensitive) {
		// A clone carries its source's XFS UUID; without nouuid the two
		// cannot be mounted on one node.
		plain = append(plain, "nouuid")
	}
	if err := h.Mounter.FormatAndMountSensitiveWithFormatOptions(dev, staging, fstype, plain, sensitive, nil); err != nil {
		return status.Errorf(codes.Internal, "volume %s: format (when blank) and mount %s as %s on %s: %v", v.ID, dev, fstype, staging, err)
	}
	if existing == "" {
		if err := applyOwnership(v, staging); err != nil {
			return status.Errorf(codes.Internal, "volume %s: set owner and permissions of the new filesystem: %v", v.ID, err)
		}
		return nil
	}
	if ro {
		return nil
	}
	if err := growFs(h, fstype, dev, staging); err != nil {
		// Unmount so that a retry grows it again rather than finding the
		// volume staged.
		if uerr := h.Mounter.Unmount(staging); uerr != nil {
			h.Log.Warn("cannot unmount after a failed filesystem resize", "volume", v, "error", uerr)
		}
		return status.Errorf(codes.Internal, "volume %s: grow the %s filesystem on %s to the device size: %v", v.ID, fstype, dev, err)
	}
	return nil
}

// growFs grows a mounted filesystem to its device (a no-op when it already
// fills it). Filesystems mount-utils cannot grow are left as they are.
func growFs(h *Host, fstype, dev, mountPath string) error {
	switch fstype {
	case "ext3", "ext4", "xfs", "btrfs":
	default:
		return nil
	}
	rfs := mount.NewResizeFs(h.Exec)
	need, err := rfs.NeedResize(dev, mountPath)
	if err != nil || !need {
		return err
	}
	_, err = rfs.Resize(dev, mountPath)
	return err
}

// sameDevice reports whether path shows dev: mounted from it (or, with
// bind, the device node itself bound there). The mount table's source is
// checked first; then the kernel's device numbers, since /proc/mounts names
// a bound device node by its filesystem ("devtmpfs"), not by the device.
func sameDevice(h *Host, dev, path string, bind bool) bool {
	if src, _, err := mountedSource(h, path); err == nil && src != "" && samePath(src, dev) {
		return true
	}
	var ds, ps unix.Stat_t
	if unix.Stat(dev, &ds) != nil || ds.Mode&unix.S_IFMT != unix.S_IFBLK || unix.Stat(path, &ps) != nil {
		return false
	}
	if bind {
		return ps.Mode&unix.S_IFMT == unix.S_IFBLK && ps.Rdev == ds.Rdev
	}
	return ps.Dev == ds.Rdev
}

// samePath compares two paths after resolving symlinks (/dev/disk/by-*
// links, /dev/mapper names).
func samePath(a, b string) bool {
	return resolved(a) == resolved(b)
}

func resolved(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return filepath.Clean(p)
}

// ownership reads owneruid, groupuid (numbers) and perms (octal).
func ownership(v *Volume) (volumecontext.Ownership, error) {
	var o volumecontext.Ownership
	if err := o.Decode(v.Context); err != nil {
		return o, invalidContext(v, err)
	}
	return o, nil
}

// validateOwnership checks owneruid, groupuid and perms.
func validateOwnership(v *Volume) error {
	_, err := ownership(v)
	return err
}

// applyOwnership gives a freshly made filesystem's root the owner, group
// and permissions asked for in the volume_context (validated before).
func applyOwnership(v *Volume, root string) error {
	o, err := ownership(v)
	if err != nil {
		return err
	}
	if uid, gid := o.UID(), o.GID(); uid >= 0 || gid >= 0 {
		if err := os.Chown(root, uid, gid); err != nil {
			return err
		}
	}
	if mode, ok := o.Mode(); ok {
		if err := unix.Chmod(root, mode); err != nil {
			return &os.PathError{Op: "chmod", Path: root, Err: err}
		}
	}
	return nil
}

// firstNonEmpty returns the first non-empty string.
func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

// deviceSize is a block device's size in bytes.
func deviceSize(dev string) (int64, error) {
	n, err := blockDeviceSize(dev)
	if err != nil {
		return 0, fmt.Errorf("size of %s: %w", dev, err)
	}
	return n, nil
}

// exists reports whether a path exists (following symlinks).
func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// validateBlockVolume checks what every block-device attacher accepts: a
// filesystem on a block device is mounted on one node at a time (several
// nodes writing one ext4 or xfs destroy it; use access type block), and
// the ownership keys must parse.
func validateBlockVolume(v *Volume) error {
	if !v.IsBlock() {
		switch m := v.Capability.GetAccessMode().GetMode(); m {
		case csi.VolumeCapability_AccessMode_MULTI_NODE_MULTI_WRITER, csi.VolumeCapability_AccessMode_MULTI_NODE_SINGLE_WRITER:
			return status.Errorf(codes.InvalidArgument,
				"volume %s: access mode %s with access type mount is not supported by node_attach_driver %s: a filesystem on a block device is mounted on one node at a time (use access type block)",
				v.ID, m, volumecontext.AttachDriver(v.Context))
		}
	}
	return validateOwnership(v)
}
