package node

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	mount "k8s.io/mount-utils"
)

// devName is a device's kernel name (sdb, nvme0n1, dm-0) after resolving
// /dev/disk/by-* and /dev/mapper links.
func devName(dev string) string { return filepath.Base(resolved(dev)) }

func isDM(name string) bool { return strings.HasPrefix(name, "dm-") }

// dmHolders lists the device-mapper devices stacked on a device
// (/sys/block/<name>/holders/dm-*).
func (h *Host) dmHolders(name string) []string {
	ents, _ := os.ReadDir(h.sys("block", name, "holders"))
	var out []string
	for _, e := range ents {
		if isDM(e.Name()) {
			out = append(out, e.Name())
		}
	}
	return out
}

// dmSlaves lists the devices under a device-mapper device.
func (h *Host) dmSlaves(dm string) []string {
	ents, _ := os.ReadDir(h.sys("block", dm, "slaves"))
	out := make([]string, 0, len(ents))
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

// multipathOf returns the one device-mapper device that holds every given
// path device, "" when there is none (yet).
func (h *Host) multipathOf(devs []string) (string, error) {
	var common []string
	for i, d := range devs {
		holders := h.dmHolders(devName(d))
		if i == 0 {
			common = holders
			continue
		}
		common = slices.DeleteFunc(common, func(dm string) bool { return !slices.Contains(holders, dm) })
	}
	switch len(common) {
	case 0:
		return "", nil
	case 1:
		return h.dev(common[0]), nil
	}
	return "", fmt.Errorf("paths %s have several device-mapper holders (%s)", strings.Join(devs, ", "), strings.Join(common, ", "))
}

// anyHeld reports whether a device-mapper device holds any of devs: then
// multipathd has claimed them and the map, not a path, is the volume.
func (h *Host) anyHeld(devs []string) bool {
	return slices.ContainsFunc(devs, func(d string) bool { return len(h.dmHolders(devName(d))) > 0 })
}

// waitMultipath waits for the multipath device over the given paths.
func (h *Host) waitMultipath(ctx context.Context, devs []string) (string, error) {
	var dm string
	err := h.waitFor(ctx, "a multipath device over "+strings.Join(devs, ", ")+" (is multipathd running?)", func() (bool, error) {
		var err error
		dm, err = h.multipathOf(devs)
		return dm != "", err
	})
	return dm, err
}

// pickDevice turns the devices found over every path into the volume's
// device: the one device, or the multipath map over several (or over one
// that multipathd has claimed).
func (h *Host) pickDevice(ctx context.Context, devs []string, paths int) (string, error) {
	devs = slices.Compact(slices.Sorted(slices.Values(devs)))
	switch {
	case len(devs) == 0:
		return "", errors.New("no device found")
	case len(devs) == 1 && paths <= 1 && !h.anyHeld(devs):
		return devs[0], nil
	}
	return h.waitMultipath(ctx, devs)
}

// rescanSCSI makes the kernel re-read a SCSI disk's capacity. Devices that
// cannot be rescanned (no device/rescan) are skipped.
func (h *Host) rescanSCSI(name string) error {
	p := h.sys("block", name, "device", "rescan")
	if _, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err := os.WriteFile(p, []byte("1"), 0); err != nil {
		return fmt.Errorf("rescan %s: %w", name, err)
	}
	return nil
}

// resizeMultipath lets multipathd grow a map after its paths grew.
func (h *Host) resizeMultipath(ctx context.Context, dm string) error {
	name := readSys(h.sys("block", dm, "dm", "name"))
	if name == "" {
		name = dm
	}
	_, err := h.Exec.Run(ctx, Command{Name: "multipathd", Args: []string{"resize", "map", name}})
	return err
}

// expandDevice is NodeExpandVolume for a block device: rescan (how is up
// to the attacher), let a multipath map follow its paths, wait until the
// device shows at least the requested size, grow the filesystem when the
// volume is mounted, and report the device's size.
func expandDevice(ctx context.Context, h *Host, v *Volume, dev, volumePath string, required int64, rescan func(ctx context.Context, name string) error) (int64, error) {
	name := devName(dev)
	paths := []string{name}
	if isDM(name) {
		paths = h.dmSlaves(name)
	}
	for _, p := range paths {
		if err := rescan(ctx, p); err != nil {
			return 0, status.Errorf(codes.Internal, "volume %s: %v", v.ID, err)
		}
	}
	if isDM(name) {
		if err := h.resizeMultipath(ctx, name); err != nil {
			return 0, status.Errorf(codes.Internal, "volume %s: resize the multipath device %s: %v", v.ID, name, err)
		}
	}
	var size int64
	err := h.waitFor(ctx, fmt.Sprintf("device %s to grow to %d bytes", dev, required), func() (bool, error) {
		var err error
		size, err = deviceSize(dev)
		return size >= required, err
	})
	if err != nil {
		return 0, status.Errorf(codes.Internal, "volume %s: %v (device size %d); has the storage system grown the volume?", v.ID, err, size)
	}
	if v.IsBlock() {
		return size, nil
	}
	if _, err := mount.NewResizeFs(h.Exec).Resize(dev, volumePath); err != nil {
		return 0, status.Errorf(codes.Internal, "volume %s: grow the filesystem on %s: %v", v.ID, dev, err)
	}
	return size, nil
}

// waitDevice waits for a device path (a udev link or a node) to exist and
// returns it resolved to the device node.
func (h *Host) waitDevice(ctx context.Context, path string) (string, error) {
	err := h.waitFor(ctx, "device "+path, func() (bool, error) {
		_, err := os.Stat(path)
		return err == nil, nil
	})
	if err != nil {
		return "", err
	}
	return resolved(path), nil
}
