package node

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"golang.org/x/sys/unix"
	"google.golang.org/grpc/codes"
	mount "k8s.io/mount-utils"

	"github.com/switchyard-csi/switchyard/lab/testtier"
)

// realFixture is a Service with the real exec and mounter over a fresh
// temporary tree; on cleanup it fails the test if any mount is left under
// the tree (and removes it, so the tree can be deleted).
type realFixture struct {
	svc                   *Service
	root, state, src, stg string
}

func newRealFixture(t *testing.T) *realFixture {
	t.Helper()
	testtier.NeedRoot(t)
	root := t.TempDir()
	t.Cleanup(func() { checkNoMountsUnder(t, root) }) // runs before TempDir's removal
	f := &realFixture{
		root:  root,
		state: filepath.Join(root, "state"),
		src:   filepath.Join(root, "hostpath", "pvc-1"),
		stg:   filepath.Join(root, "plugins", "globalmount"),
	}
	if err := os.MkdirAll(f.src, 0o755); err != nil {
		t.Fatal(err)
	}
	f.svc = f.service(t, f.state)
	return f
}

func (f *realFixture) service(t *testing.T, state string) *Service {
	t.Helper()
	s, err := NewService(Options{
		StateDir: state,
		NodeInfo: func(context.Context) (*csi.NodeGetInfoResponse, error) {
			return &csi.NodeGetInfoResponse{NodeId: "n"}, nil
		},
		Logger: quietLogger(),
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func (f *realFixture) stage(t *testing.T, c *csi.VolumeCapability) {
	t.Helper()
	_, err := f.svc.NodeStageVolume(context.Background(), &csi.NodeStageVolumeRequest{
		VolumeId: volID, StagingTargetPath: f.stg, VolumeCapability: c, VolumeContext: hostCtx(f.src),
	})
	if err != nil {
		t.Fatalf("stage: %v", err)
	}
}

func (f *realFixture) publish(t *testing.T, tgt string, c *csi.VolumeCapability, ro bool) {
	t.Helper()
	_, err := f.svc.NodePublishVolume(context.Background(), &csi.NodePublishVolumeRequest{
		VolumeId: volID, StagingTargetPath: f.stg, TargetPath: tgt, VolumeCapability: c, Readonly: ro, VolumeContext: hostCtx(f.src),
	})
	if err != nil {
		t.Fatalf("publish %s: %v", tgt, err)
	}
}

// unpublish and unstage each run twice: the second call must find
// nothing to do and still succeed.
func (f *realFixture) unpublish(t *testing.T, tgt string) {
	t.Helper()
	for i := range 2 {
		if _, err := f.svc.NodeUnpublishVolume(context.Background(), &csi.NodeUnpublishVolumeRequest{VolumeId: volID, TargetPath: tgt}); err != nil {
			t.Fatalf("unpublish %s #%d: %v", tgt, i+1, err)
		}
	}
	if _, err := os.Lstat(tgt); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("target %s not removed: %v", tgt, err)
	}
}

func (f *realFixture) unstage(t *testing.T) {
	t.Helper()
	for i := range 2 {
		if _, err := f.svc.NodeUnstageVolume(context.Background(), &csi.NodeUnstageVolumeRequest{VolumeId: volID, StagingTargetPath: f.stg}); err != nil {
			t.Fatalf("unstage #%d: %v", i+1, err)
		}
	}
	if mountedInTable(t, f.stg) {
		t.Fatalf("staging path %s still mounted", f.stg)
	}
}

func TestRealHostPathLifecycle(t *testing.T) {
	f := newRealFixture(t)
	ctx := context.Background()
	rw := filepath.Join(f.root, "pods", "a", "mount")
	f.stage(t, mountCap(snmw))
	f.stage(t, mountCap(snmw))
	f.publish(t, rw, mountCap(snmw), false)
	f.publish(t, rw, mountCap(snmw), false)
	if !mountedInTable(t, f.stg) || !mountedInTable(t, rw) {
		t.Fatal("staging or target path is not a mount point")
	}
	if err := os.WriteFile(filepath.Join(rw, "hello"), []byte("kept"), 0o644); err != nil {
		t.Fatalf("write through target: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(f.src, "hello")); err != nil || string(b) != "kept" {
		t.Fatalf("write did not reach the hostpath directory: %q %v", b, err)
	}
	resp, err := f.svc.NodeGetVolumeStats(ctx, &csi.NodeGetVolumeStatsRequest{VolumeId: volID, VolumePath: rw})
	if err != nil {
		t.Fatal(err)
	}
	checkUsage(t, resp)

	f.unpublish(t, rw)
	f.unstage(t)
	if _, err := os.Stat(filepath.Join(f.src, "hello")); err != nil {
		t.Fatalf("unstage touched the data: %v", err)
	}

	// Again, from scratch: the data is still there.
	f.stage(t, mountCap(snmw))
	f.publish(t, rw, mountCap(snmw), false)
	if b, err := os.ReadFile(filepath.Join(rw, "hello")); err != nil || string(b) != "kept" {
		t.Fatalf("data after re-stage: %q %v", b, err)
	}
	f.unpublish(t, rw)
	f.unstage(t)
}

func TestRealReadOnlyPublish(t *testing.T) {
	tests := []struct {
		name string
		mode csi.VolumeCapability_AccessMode_Mode
		ro   bool
	}{
		{"readonly flag", snmw, true},
		{"reader-only access mode", snro, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newRealFixture(t)
			if err := os.WriteFile(filepath.Join(f.src, "existing"), []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
			tgt := filepath.Join(f.root, "pods", "ro", "mount")
			f.stage(t, mountCap(tt.mode))
			f.publish(t, tgt, mountCap(tt.mode), tt.ro)
			err := os.WriteFile(filepath.Join(tgt, "new"), []byte("x"), 0o644)
			if !errors.Is(err, syscall.EROFS) {
				t.Fatalf("write to a read-only publish: %v, want EROFS", err)
			}
			if _, err := os.ReadFile(filepath.Join(tgt, "existing")); err != nil {
				t.Fatalf("read from a read-only publish: %v", err)
			}
			// The staging stays writable: read-only applies to the target.
			if err := os.WriteFile(filepath.Join(f.stg, "via-staging"), []byte("x"), 0o644); err != nil {
				t.Fatalf("staging became read-only: %v", err)
			}
			f.unpublish(t, tgt)
			f.unstage(t)
		})
	}
}

// The state directory is lost (a new, empty one): staging and publishing
// again recognise the existing bind mounts instead of stacking new ones.
func TestRealLostRecordsAreRecovered(t *testing.T) {
	f := newRealFixture(t)
	tgt := filepath.Join(f.root, "pods", "a", "mount")
	f.stage(t, mountCap(snw))
	f.publish(t, tgt, mountCap(snw), false)

	f.svc = f.service(t, filepath.Join(f.root, "state2"))
	f.stage(t, mountCap(snw))
	// The existing read-write mount is not what a read-only publish asks.
	_, err := f.svc.NodePublishVolume(context.Background(), &csi.NodePublishVolumeRequest{
		VolumeId: volID, StagingTargetPath: f.stg, TargetPath: tgt, VolumeCapability: mountCap(snw), Readonly: true, VolumeContext: hostCtx(f.src),
	})
	wantCode(t, err, codes.AlreadyExists)
	f.publish(t, tgt, mountCap(snw), false)
	for _, p := range []string{f.stg, tgt} {
		if n := mountCount(t, p); n != 1 {
			t.Fatalf("%d mounts at %s, want 1", n, p)
		}
	}
	f.unpublish(t, tgt)
	f.unstage(t)
}

// A path mounted more than once (a mount that succeeded although its
// caller saw a failure, then was retried) is unmounted completely: the
// fake mounter cannot show this, it drops all mounts at a path at once.
func TestRealStackedMountsAreRemoved(t *testing.T) {
	f := newRealFixture(t)
	tgt := filepath.Join(f.root, "pods", "a", "mount")
	f.stage(t, mountCap(snw))
	f.publish(t, tgt, mountCap(snw), false)
	for _, m := range [][2]string{{f.stg, tgt}, {f.src, f.stg}} {
		if err := unix.Mount(m[0], m[1], "", unix.MS_BIND, ""); err != nil {
			t.Fatalf("stack a bind mount on %s: %v", m[1], err)
		}
		if n := mountCount(t, m[1]); n != 2 {
			t.Fatalf("%d mounts at %s, want 2", n, m[1])
		}
	}
	f.unpublish(t, tgt)
	f.unstage(t)
}

func TestRealBlockDeviceStats(t *testing.T) {
	testtier.NeedRoot(t)
	_, err := os.Stat("/dev/loop-control")
	testtier.Need(t, testtier.Sanity, err == nil, "no loop device support (/dev/loop-control)")
	img := filepath.Join(t.TempDir(), "disk.img")
	const size = 8 << 20
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
	f := newFixture(t) // stats need no mounter
	resp, err := f.svc.NodeGetVolumeStats(context.Background(), &csi.NodeGetVolumeStatsRequest{VolumeId: volID, VolumePath: dev})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.GetUsage()) != 1 || resp.GetUsage()[0].GetUnit() != csi.VolumeUsage_BYTES || resp.GetUsage()[0].GetTotal() != size {
		t.Fatalf("block stats %v, want %d bytes total", resp.GetUsage(), size)
	}
}

func mountInfo(t *testing.T) []mount.MountInfo {
	t.Helper()
	infos, err := mount.ParseMountInfo("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	return infos
}

func mountCount(t *testing.T, p string) int {
	n := 0
	for _, mi := range mountInfo(t) {
		if mi.MountPoint == p {
			n++
		}
	}
	return n
}

func mountedInTable(t *testing.T, p string) bool { return mountCount(t, p) > 0 }

// checkNoMountsUnder fails the test for every mount left under root and
// detaches them, newest first, so the temporary tree can be removed.
func checkNoMountsUnder(t *testing.T, root string) {
	var left []string
	for _, mi := range mountInfo(t) {
		if mi.MountPoint == root || strings.HasPrefix(mi.MountPoint, root+"/") {
			left = append(left, mi.MountPoint)
		}
	}
	if len(left) == 0 {
		return
	}
	t.Errorf("mounts left behind: %v", left)
	for i := len(left) - 1; i >= 0; i-- {
		if err := unix.Unmount(left[i], unix.MNT_DETACH); err != nil {
			t.Errorf("detach %s: %v", left[i], err)
		}
	}
}

// A volume staged by an earlier plugin (democratic-csi, before a node was
// switched in place) has a mount but no record: publishing it to a new pod
// adopts the staging mount, and unpublish/unstage then clean up as usual.
func TestRealAdoptsVolumeStagedByEarlierPlugin(t *testing.T) {
	f := newRealFixture(t)
	if err := os.MkdirAll(f.stg, 0o750); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "--bind", f.src, f.stg).CombinedOutput(); err != nil {
		t.Fatalf("mount --bind: %v: %s", err, out)
	}
	os.WriteFile(filepath.Join(f.src, "data"), []byte("kept"), 0o644)
	tgt := filepath.Join(f.root, "pods", "new", "mount")
	f.publish(t, tgt, mountCap(snw), false)
	if got, err := os.ReadFile(filepath.Join(tgt, "data")); err != nil || string(got) != "kept" {
		t.Fatalf("adopted volume shows %q, %v", got, err)
	}
	f.unpublish(t, tgt)
	f.unstage(t)
}

// Without a mount there is nothing to adopt: publish still demands a stage.
func TestRealNothingToAdopt(t *testing.T) {
	f := newRealFixture(t)
	os.MkdirAll(f.stg, 0o750)
	_, err := f.svc.NodePublishVolume(context.Background(), &csi.NodePublishVolumeRequest{
		VolumeId: volID, StagingTargetPath: f.stg, TargetPath: filepath.Join(f.root, "t"), VolumeCapability: mountCap(snw), VolumeContext: hostCtx(f.src),
	})
	wantCode(t, err, codes.FailedPrecondition)
}
