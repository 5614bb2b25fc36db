package node

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"golang.org/x/sys/unix"

	"github.com/switchyard-csi/switchyard/driver/volumecontext"
	"github.com/switchyard-csi/switchyard/lab/testtier"
)

// These tests make the faults for real on this host's kernel: a
// filesystem remounted read-only, a bind mount made read-only, a mount
// whose FUSE server is gone (ENOTCONN, what a stale network mount
// returns), a loop device detached under a staged raw block volume.

func run(t *testing.T, name string, args ...string) {
	t.Helper()
	if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v: %s", name, strings.Join(args, " "), err, out)
	}
}

func healthOf(t *testing.T, s *Service, publish string) []*csi.VolumeHealth_VolumeHealthEntry {
	t.Helper()
	resp, err := s.NodeGetVolumeHealth(context.Background(), &csi.NodeGetVolumeHealthRequest{VolumeId: volID, VolumePublishPath: publish})
	if err != nil {
		t.Fatalf("NodeGetVolumeHealth: %v", err)
	}
	return resp.GetVolumeHealth().GetHealthStatuses()
}

func loopService(t *testing.T, root string) *Service {
	t.Helper()
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
	return svc
}

// loopVolume stages dev with capability c and publishes it read-write at
// <root>/pod/target; cleanup unpublishes and unstages.
func loopVolume(t *testing.T, svc *Service, root, dev string, c *csi.VolumeCapability) (stg, tgt string) {
	t.Helper()
	ctx := context.Background()
	stg, tgt = filepath.Join(root, "globalmount"), filepath.Join(root, "pod", "target")
	vc := map[string]string{volumecontext.KeyAttachDriver: "loop", "device": dev}
	if _, err := svc.NodeStageVolume(ctx, &csi.NodeStageVolumeRequest{VolumeId: volID, StagingTargetPath: stg, VolumeCapability: c, VolumeContext: vc}); err != nil {
		t.Fatalf("stage: %v", err)
	}
	t.Cleanup(func() {
		if _, err := svc.NodeUnpublishVolume(ctx, &csi.NodeUnpublishVolumeRequest{VolumeId: volID, TargetPath: tgt}); err != nil {
			t.Errorf("unpublish: %v", err)
		}
		if _, err := svc.NodeUnstageVolume(ctx, &csi.NodeUnstageVolumeRequest{VolumeId: volID, StagingTargetPath: stg}); err != nil {
			t.Errorf("unstage: %v", err)
		}
	})
	if _, err := svc.NodePublishVolume(ctx, &csi.NodePublishVolumeRequest{VolumeId: volID, StagingTargetPath: stg, TargetPath: tgt, VolumeCapability: c, VolumeContext: vc}); err != nil {
		t.Fatalf("publish: %v", err)
	}
	return stg, tgt
}

func TestRealNodeHealthExt4RemountedReadOnly(t *testing.T) {
	dev, _ := loopDevice(t, 64<<20)
	root := t.TempDir()
	t.Cleanup(func() { checkNoMountsUnder(t, root) })
	svc := loopService(t, root)
	stg, tgt := loopVolume(t, svc, root, dev, mountCap(snw))
	wantHealth(t, healthOf(t, svc, tgt), "")

	// What ext4's errors=remount-ro does after an I/O error: the
	// superblock goes read-only, under every bind of it.
	run(t, "mount", "-o", "remount,ro", stg)
	got := healthOf(t, svc, tgt)
	wantHealth(t, got, "", "DEGRADED/ReadOnlyRemount")
	for _, p := range []string{stg, tgt} {
		if !strings.Contains(got[0].GetMessage(), p) {
			t.Fatalf("message %q does not name %s", got[0].GetMessage(), p)
		}
	}
	run(t, "mount", "-o", "remount,rw", stg)
	wantHealth(t, healthOf(t, svc, tgt), "")
}

func TestRealNodeHealthBindMountMadeReadOnly(t *testing.T) {
	f := newRealFixture(t)
	tgt := filepath.Join(f.root, "pods", "a", "mount")
	f.stage(t, mountCap(snw))
	f.publish(t, tgt, mountCap(snw), false)
	t.Cleanup(func() { f.unpublish(t, tgt); f.unstage(t) })
	wantHealth(t, healthOf(t, f.svc, tgt), "")
	run(t, "mount", "-o", "remount,ro,bind", tgt)
	wantHealth(t, healthOf(t, f.svc, tgt), tgt, "DEGRADED/ReadOnlyRemount")
}

func TestRealNodeHealthUnmountedBehindTheDriversBack(t *testing.T) {
	f := newRealFixture(t)
	tgt := filepath.Join(f.root, "pods", "a", "mount")
	f.stage(t, mountCap(snw))
	f.publish(t, tgt, mountCap(snw), false)
	t.Cleanup(func() { f.unpublish(t, tgt); f.unstage(t) })
	run(t, "umount", tgt)
	wantHealth(t, healthOf(t, f.svc, tgt), tgt, "INACCESSIBLE/NotMounted")
}

// deadFUSEMount mounts a FUSE filesystem at dir and closes its /dev/fuse
// descriptor at once: the kernel aborts the connection, and every call on
// the mount fails with ENOTCONN, as a mount whose server died does.
func deadFUSEMount(t *testing.T, dir string) {
	t.Helper()
	testtier.NeedRoot(t)
	fd, err := unix.Open("/dev/fuse", unix.O_RDWR, 0)
	testtier.Need(t, testtier.Sanity, err == nil, fmt.Sprintf("no FUSE on this host (/dev/fuse: %v)", err))
	opts := fmt.Sprintf("fd=%d,rootmode=40000,user_id=0,group_id=0", fd)
	err = unix.Mount("switchyard-dead", dir, "fuse.switchyard-dead", unix.MS_NOSUID|unix.MS_NODEV, opts)
	_ = unix.Close(fd)
	if err != nil {
		t.Fatalf("mount fuse at %s: %v", dir, err)
	}
	t.Cleanup(func() {
		if err := unix.Unmount(dir, unix.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
}

func TestRealNodeHealthStaleMount(t *testing.T) {
	root := t.TempDir()
	t.Cleanup(func() { checkNoMountsUnder(t, root) })
	tgt := filepath.Join(root, "target")
	if err := os.Mkdir(tgt, 0o750); err != nil {
		t.Fatal(err)
	}
	deadFUSEMount(t, tgt)
	f := newRealFixture(t)
	got := healthOf(t, f.svc, tgt) // no node record: the path alone is checked
	wantHealth(t, got, tgt, "INACCESSIBLE/StaleMount")
	if !strings.Contains(got[0].GetMessage(), "ENOTCONN") {
		t.Fatalf("message %q does not say ENOTCONN", got[0].GetMessage())
	}
	_, err := f.svc.NodeGetVolumeStats(context.Background(), &csi.NodeGetVolumeStatsRequest{VolumeId: volID, VolumePath: tgt})
	if err == nil || !strings.Contains(err.Error(), "stale") {
		t.Fatalf("NodeGetVolumeStats on a stale mount: %v, want an error saying it is stale", err)
	}
}

func TestRealNodeHealthBlockDeviceDetached(t *testing.T) {
	testtier.NeedRoot(t)
	_, err := os.Stat("/dev/loop-control")
	testtier.Need(t, testtier.Sanity, err == nil, "no loop device support (/dev/loop-control)")
	img := filepath.Join(t.TempDir(), "disk.img")
	if err := os.WriteFile(img, make([]byte, 8<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("losetup", "--find", "--show", img).CombinedOutput()
	if err != nil {
		t.Fatalf("losetup: %v: %s", err, out)
	}
	dev := strings.TrimSpace(string(out))
	detached := false
	t.Cleanup(func() {
		if !detached {
			_ = exec.Command("losetup", "--detach", dev).Run()
		}
	})
	root := t.TempDir()
	t.Cleanup(func() { checkNoMountsUnder(t, root) })
	svc := loopService(t, root)
	_, tgt := loopVolume(t, svc, root, dev, blockCap(snw))
	wantHealth(t, healthOf(t, svc, tgt), "")

	run(t, "losetup", "--detach", dev)
	detached = true
	got := healthOf(t, svc, tgt)
	wantHealth(t, got, "", "INACCESSIBLE/DeviceMissing")
	if !strings.Contains(got[0].GetMessage(), tgt) {
		t.Fatalf("message %q does not name %s", got[0].GetMessage(), tgt)
	}
}
