package node

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"golang.org/x/sys/unix"
	"google.golang.org/grpc/codes"

	"github.com/switchyard-csi/switchyard/driver/volumecontext"
	"github.com/switchyard-csi/switchyard/lab/testtier"
)

// loopAttacher stages the block device named by volume_context "device"
// with the shared block code: the real-mount tests drive format, refusal,
// growth and raw block through it on a loop device.
type loopAttacher struct{}

func (loopAttacher) Name() string             { return "loop" }
func (loopAttacher) Validate(v *Volume) error { return validateBlockVolume(v) }
func (loopAttacher) Stage(ctx context.Context, h *Host, v *Volume) error {
	return stageDevice(h, v, v.Context["device"])
}
func (loopAttacher) Unstage(context.Context, *Host, *Volume) error { return nil }
func (loopAttacher) Expand(ctx context.Context, h *Host, v *Volume, p string, required int64) (int64, error) {
	return expandDevice(ctx, h, v, v.Context["device"], p, required, func(_ context.Context, name string) error { return h.rescanSCSI(name) })
}

// loopDevice attaches a sparse image of size bytes and returns the device
// and a function that resizes the image and tells the loop driver.
func loopDevice(t *testing.T, size int64) (string, func(int64)) {
	t.Helper()
	testtier.NeedRoot(t)
	_, err := os.Stat("/dev/loop-control")
	testtier.Need(t, testtier.Sanity, err == nil, "no loop device support (/dev/loop-control)")
	_, err = exec.LookPath("mkfs.ext4")
	testtier.Need(t, testtier.Sanity, err == nil, "mkfs.ext4 is not installed (e2fsprogs)")
	img := filepath.Join(t.TempDir(), "disk.img")
	if err := os.WriteFile(img, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(img, size); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("losetup", "--find", "--show", img).CombinedOutput()
	if err != nil {
		t.Fatalf("losetup: %v: %s", err, out)
	}
	dev := strings.TrimSpace(string(out))
	t.Cleanup(func() {
		if out, err := exec.Command("losetup", "--detach", dev).CombinedOutput(); err != nil {
			t.Errorf("losetup --detach %s: %v: %s", dev, err, out)
		}
	})
	return dev, func(n int64) {
		t.Helper()
		if err := os.Truncate(img, n); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command("losetup", "--set-capacity", dev).CombinedOutput(); err != nil {
			t.Fatalf("losetup --set-capacity: %v: %s", err, out)
		}
	}
}

func fsBytes(t *testing.T, p string) int64 {
	t.Helper()
	var st unix.Statfs_t
	if err := unix.Statfs(p, &st); err != nil {
		t.Fatal(err)
	}
	return int64(st.Blocks) * st.Frsize
}

func TestRealBlockDeviceLifecycle(t *testing.T) {
	const mib = 1 << 20
	dev, resize := loopDevice(t, 64*mib)
	root := t.TempDir()
	t.Cleanup(func() { checkNoMountsUnder(t, root) })
	svc, err := NewService(Options{
		StateDir: filepath.Join(root, "state"),
		NodeInfo: func(context.Context) (*csi.NodeGetInfoResponse, error) {
			return &csi.NodeGetInfoResponse{NodeId: "n"}, nil
		},
		Attachers: []Attacher{loopAttacher{}},
		Logger:    quietLogger(),
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	stg := filepath.Join(root, "globalmount")
	vc := map[string]string{volumecontext.KeyAttachDriver: "loop", "device": dev, volumecontext.KeyOwnerUID: "1234", volumecontext.KeyGroupUID: "5678", volumecontext.KeyPerms: "0700"}
	stage := func(c *csi.VolumeCapability) error {
		_, err := svc.NodeStageVolume(ctx, &csi.NodeStageVolumeRequest{VolumeId: volID, StagingTargetPath: stg, VolumeCapability: c, VolumeContext: vc})
		return err
	}
	unstage := func() {
		t.Helper()
		for range 2 {
			if _, err := svc.NodeUnstageVolume(ctx, &csi.NodeUnstageVolumeRequest{VolumeId: volID, StagingTargetPath: stg}); err != nil {
				t.Fatalf("unstage: %v", err)
			}
		}
		if mountedInTable(t, stg) {
			t.Fatal("still mounted")
		}
	}

	// A blank device: formatted ext4, the root given owner and mode.
	if err := stage(mountCap(snw)); err != nil {
		t.Fatalf("stage: %v", err)
	}
	if err := stage(mountCap(snw)); err != nil {
		t.Fatalf("restage: %v", err)
	}
	var st syscall.Stat_t
	if err := syscall.Stat(stg, &st); err != nil {
		t.Fatal(err)
	}
	if st.Uid != 1234 || st.Gid != 5678 || st.Mode&0o7777 != 0o700 {
		t.Fatalf("root owner %d:%d mode %o, want 1234:5678 700", st.Uid, st.Gid, st.Mode&0o7777)
	}
	if err := os.WriteFile(filepath.Join(stg, "data"), []byte("kept"), 0o644); err != nil {
		t.Fatal(err)
	}
	small := fsBytes(t, stg)
	unstage()

	// Another filesystem type is refused, and nothing is mounted.
	_, err = svc.NodeStageVolume(ctx, &csi.NodeStageVolumeRequest{VolumeId: volID, StagingTargetPath: stg, VolumeCapability: fsCap(snw, "ext3"), VolumeContext: vc})
	wantCode(t, err, codes.FailedPrecondition)
	if !strings.Contains(err.Error(), "ext4") || !strings.Contains(err.Error(), "ext3") {
		t.Fatalf("error %q should name both filesystems", err)
	}
	if mountedInTable(t, stg) {
		t.Fatal("mounted after a refusal")
	}
	unstage()

	// The device grew while unstaged: staging grows the filesystem; the
	// data and the mode stay. Online ext4 growth needs CAP_SYS_RESOURCE,
	// which processes on this project's machines lack (the storage VM has
	// it): there the stage must fail cleanly instead, unmounted.
	resize(128 * mib)
	err = stage(fsCap(snw, "ext4"))
	if !hasCapSysResource(t) {
		wantCode(t, err, codes.Internal)
		if !strings.Contains(err.Error(), "resize2fs") || mountedInTable(t, stg) {
			t.Fatalf("failed growth: error %q, mounted %t; want resize2fs' output and no mount", err, mountedInTable(t, stg))
		}
		unstage()
	} else {
		if err != nil {
			t.Fatalf("stage after growth: %v", err)
		}
		if b, err := os.ReadFile(filepath.Join(stg, "data")); err != nil || string(b) != "kept" {
			t.Fatalf("data: %q %v", b, err)
		}
		grown := fsBytes(t, stg)
		if grown < small+48*mib {
			t.Fatalf("filesystem %d bytes after growth, was %d", grown, small)
		}
		// NodeExpandVolume while staged.
		resize(192 * mib)
		resp, err := svc.NodeExpandVolume(ctx, &csi.NodeExpandVolumeRequest{VolumeId: volID, VolumePath: stg, CapacityRange: &csi.CapacityRange{RequiredBytes: 192 * mib}})
		if err != nil {
			t.Fatalf("expand: %v", err)
		}
		if resp.GetCapacityBytes() != 192*mib || fsBytes(t, stg) < grown+48*mib {
			t.Fatalf("expand: capacity %d, filesystem %d bytes (was %d)", resp.GetCapacityBytes(), fsBytes(t, stg), grown)
		}
		unstage()
	}
	resize(192 * mib)

	// Access type block: the device bound onto block_device, idempotently.
	for range 2 {
		if err := stage(blockCap(snw)); err != nil {
			t.Fatalf("stage block: %v", err)
		}
	}
	bd := filepath.Join(stg, StagedBlockDevice)
	if n := mountCount(t, bd); n != 1 {
		t.Fatalf("%d mounts at %s, want 1", n, bd)
	}
	stats, err := svc.NodeGetVolumeStats(ctx, &csi.NodeGetVolumeStatsRequest{VolumeId: volID, VolumePath: bd})
	if err != nil || stats.GetUsage()[0].GetTotal() != 192*mib {
		t.Fatalf("stats of the bound device: %v %v", stats, err)
	}
	unstage()
}

// hasCapSysResource reports whether this process may resize a mounted
// ext4 filesystem (CAP_SYS_RESOURCE, bit 24 of the effective set).
func hasCapSysResource(t *testing.T) bool {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if hex, ok := strings.CutPrefix(line, "CapEff:"); ok {
			caps, err := strconv.ParseUint(strings.TrimSpace(hex), 16, 64)
			if err != nil {
				t.Fatal(err)
			}
			return caps&(1<<unix.CAP_SYS_RESOURCE) != 0
		}
	}
	t.Fatal("no CapEff in /proc/self/status")
	return false
}
