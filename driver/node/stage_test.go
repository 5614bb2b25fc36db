package node

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	mount "k8s.io/mount-utils"
	utilexec "k8s.io/utils/exec"
	testingexec "k8s.io/utils/exec/testing"

	"github.com/switchyard-csi/switchyard/driver/volumecontext"
)

func TestStageBindsHostPath(t *testing.T) {
	f := newFixture(t)
	f.stage(t, mountCap(snw))

	mp, ok := f.mountAt(f.staging)
	if !ok {
		t.Fatalf("nothing mounted at %s: %v", f.staging, f.mounter.MountPoints)
	}
	if mp.Device != f.src || !slices.Contains(mp.Opts, "bind") {
		t.Fatalf("staging mount %+v, want a bind of %s", mp, f.src)
	}
	if fi, err := os.Stat(f.staging); err != nil || !fi.IsDir() {
		t.Fatalf("staging dir not created: %v", err)
	}
	rec, err := f.svc.store.load(volID)
	if err != nil || rec == nil {
		t.Fatalf("record: %v %v", rec, err)
	}
	if !rec.Staged || rec.StagingPath != f.staging || rec.Attacher != "hostpath" || rec.Context[volumecontext.KeyPath] != f.src {
		t.Fatalf("record %+v", rec)
	}
}

func TestStageIdempotent(t *testing.T) {
	f := newFixture(t)
	f.stage(t, mountCap(snw))
	f.stage(t, mountCap(snw))
	if n := f.countActions(mount.FakeActionMount, f.staging); n != 1 {
		t.Fatalf("%d mounts at staging path, want 1", n)
	}
}

func TestStageIncompatibleWhileStaged(t *testing.T) {
	tests := []struct {
		name    string
		mut     func(f *fixture, r *csi.NodeStageVolumeRequest)
		mention string
	}{
		{"other access mode", func(_ *fixture, r *csi.NodeStageVolumeRequest) { r.VolumeCapability = mountCap(mnro) }, "volume_capability"},
		{"other fs type", func(_ *fixture, r *csi.NodeStageVolumeRequest) {
			r.VolumeCapability.GetMount().FsType = "xfs"
		}, "volume_capability"},
		{"other directory", func(f *fixture, r *csi.NodeStageVolumeRequest) {
			other := filepath.Join(f.root, "other")
			if err := os.Mkdir(other, 0o755); err != nil {
				t.Fatal(err)
			}
			r.VolumeContext[volumecontext.KeyPath] = other
		}, "volume_context"},
		{"other staging path", func(f *fixture, r *csi.NodeStageVolumeRequest) {
			r.StagingTargetPath = filepath.Join(f.root, "staging2")
		}, "already staged at"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			f.stage(t, mountCap(snw))
			r := f.stageReq(mountCap(snw))
			tt.mut(f, r)
			_, err := f.svc.NodeStageVolume(context.Background(), r)
			wantCode(t, err, codes.AlreadyExists)
			if !strings.Contains(err.Error(), tt.mention) {
				t.Fatalf("error %q does not mention %q", err, tt.mention)
			}
			if len(f.mounter.GetLog()) != 1 { // only the first stage's mount
				t.Fatalf("mount table changed: %v", f.mounter.GetLog())
			}
		})
	}
}

func TestStageHostPathProblems(t *testing.T) {
	tests := []struct {
		name    string
		prep    func(f *fixture) string // returns the path to put in volume_context
		want    codes.Code
		mention func(f *fixture) string
	}{
		{"missing directory", func(f *fixture) string { return filepath.Join(f.root, "gone") }, codes.NotFound, func(f *fixture) string { return filepath.Join(f.root, "gone") }},
		{"not a directory", func(f *fixture) string {
			p := filepath.Join(f.root, "file")
			if err := os.WriteFile(p, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			return p
		}, codes.FailedPrecondition, func(*fixture) string { return "not a directory" }},
		{"foreign mount at staging path", func(f *fixture) string {
			if err := os.MkdirAll(f.staging, 0o755); err != nil {
				t.Fatal(err)
			}
			f.mounter.MountPoints = append(f.mounter.MountPoints, mount.MountPoint{Device: "/dev/sdz", Path: f.staging, Type: "ext4"})
			return f.src
		}, codes.AlreadyExists, func(f *fixture) string { return f.staging }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			r := f.stageReq(mountCap(snw))
			r.VolumeContext[volumecontext.KeyPath] = tt.prep(f)
			_, err := f.svc.NodeStageVolume(context.Background(), r)
			wantCode(t, err, tt.want)
			if mention := tt.mention(f); !strings.Contains(err.Error(), mention) {
				t.Fatalf("error %q does not mention %q", err, mention)
			}
			// A failed stage leaves an unstaged record: publish is refused,
			// and unstage cleans it up.
			_, err = f.svc.NodePublishVolume(context.Background(), f.publishReq(f.target, mountCap(snw), false))
			wantCode(t, err, codes.FailedPrecondition)
			if _, err := f.svc.NodeUnstageVolume(context.Background(), &csi.NodeUnstageVolumeRequest{VolumeId: volID, StagingTargetPath: f.staging}); err != nil {
				t.Fatalf("unstage after failed stage: %v", err)
			}
			if rec, _ := f.svc.store.load(volID); rec != nil {
				t.Fatalf("record left after unstage: %+v", rec)
			}
		})
	}
}

func TestStageAgainAfterMountLost(t *testing.T) {
	f := newFixture(t)
	f.stage(t, mountCap(snw))
	if err := f.mounter.Unmount(f.staging); err != nil { // e.g. a node reboot
		t.Fatal(err)
	}
	// A lost mount is restaged even with a different capability: nothing
	// live is incompatible.
	f.stage(t, mountCap(snmw))
	if _, ok := f.mountAt(f.staging); !ok {
		t.Fatal("staging path not mounted again")
	}
	rec, _ := f.svc.store.load(volID)
	if got := rec.Capability.GetAccessMode().GetMode(); got != snmw {
		t.Fatalf("record keeps access mode %v, want the new %v", got, snmw)
	}
}

func TestUnstage(t *testing.T) {
	f := newFixture(t)
	f.stage(t, mountCap(snw))
	req := &csi.NodeUnstageVolumeRequest{VolumeId: volID, StagingTargetPath: f.staging}
	for i := range 2 { // the second call finds nothing to do
		if _, err := f.svc.NodeUnstageVolume(context.Background(), req); err != nil {
			t.Fatalf("unstage #%d: %v", i+1, err)
		}
	}
	if _, ok := f.mountAt(f.staging); ok {
		t.Fatal("staging path still mounted")
	}
	if n := f.countActions(mount.FakeActionUnmount, f.staging); n != 1 {
		t.Fatalf("%d unmounts, want 1", n)
	}
	if _, err := os.Stat(f.staging); !os.IsNotExist(err) {
		t.Fatalf("empty staging dir not removed: %v", err)
	}
	if rec, _ := f.svc.store.load(volID); rec != nil {
		t.Fatalf("record left: %+v", rec)
	}
}

func TestUnstageUnknownVolume(t *testing.T) {
	f := newFixture(t)
	_, err := f.svc.NodeUnstageVolume(context.Background(), &csi.NodeUnstageVolumeRequest{VolumeId: "never-staged", StagingTargetPath: f.staging})
	if err != nil {
		t.Fatalf("unstage of an unknown volume: %v", err)
	}
	if len(f.mounter.GetLog()) != 0 {
		t.Fatalf("mount table touched: %v", f.mounter.GetLog())
	}
}

func TestUnstageOtherPathLeavesStagingAlone(t *testing.T) {
	f := newFixture(t)
	f.stage(t, mountCap(snw))
	other := filepath.Join(f.root, "elsewhere")
	if _, err := f.svc.NodeUnstageVolume(context.Background(), &csi.NodeUnstageVolumeRequest{VolumeId: volID, StagingTargetPath: other}); err != nil {
		t.Fatalf("unstage at a path the volume is not staged at: %v", err)
	}
	if _, ok := f.mountAt(f.staging); !ok {
		t.Fatal("the real staging was unmounted")
	}
}

func TestUnstageWhilePublished(t *testing.T) {
	f := newFixture(t)
	f.stage(t, mountCap(snw))
	f.publish(t, f.target, mountCap(snw), false)
	req := &csi.NodeUnstageVolumeRequest{VolumeId: volID, StagingTargetPath: f.staging}
	_, err := f.svc.NodeUnstageVolume(context.Background(), req)
	wantCode(t, err, codes.FailedPrecondition)
	if !strings.Contains(err.Error(), f.target) {
		t.Fatalf("error %q does not name the target", err)
	}
	if _, err := f.svc.NodeUnpublishVolume(context.Background(), &csi.NodeUnpublishVolumeRequest{VolumeId: volID, TargetPath: f.target}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.NodeUnstageVolume(context.Background(), req); err != nil {
		t.Fatalf("unstage after unpublish: %v", err)
	}
}

// A stale (ESTALE) mount whose umount fails is detached with
// umount --force --lazy through the exec seam.
func TestUnstageBrokenMountIsForceDetached(t *testing.T) {
	f := newFixture(t)
	f.stage(t, mountCap(snw))
	f.mounter.MountCheckErrors = map[string]error{f.staging: &os.PathError{Op: "stat", Path: f.staging, Err: syscall.ESTALE}}
	f.mounter.UnmountFunc = func(string) error { return syscall.EBUSY }
	var ran []string
	f.exec.CommandScript = []testingexec.FakeCommandAction{
		func(cmd string, args ...string) utilexec.Cmd {
			ran = append([]string{cmd}, args...)
			fc := &testingexec.FakeCmd{CombinedOutputScript: []testingexec.FakeAction{func() ([]byte, []byte, error) {
				// What the kernel does on a lazy unmount.
				f.mounter.UnmountFunc = nil
				if err := f.mounter.Unmount(f.staging); err != nil {
					return nil, nil, err
				}
				return nil, nil, nil
			}}}
			return testingexec.InitFakeCmd(fc, cmd, args...)
		},
	}
	_, err := f.svc.NodeUnstageVolume(context.Background(), &csi.NodeUnstageVolumeRequest{VolumeId: volID, StagingTargetPath: f.staging})
	if err != nil {
		t.Fatalf("unstage: %v", err)
	}
	if want := []string{"umount", "--force", "--lazy", f.staging}; !slices.Equal(ran, want) {
		t.Fatalf("ran %v, want %v", ran, want)
	}
	if _, ok := f.mountAt(f.staging); ok {
		t.Fatal("still mounted")
	}
}

func TestUnstageUnmountFailureIsReported(t *testing.T) {
	f := newFixture(t)
	f.stage(t, mountCap(snw))
	f.mounter.UnmountFunc = func(string) error { return syscall.EBUSY }
	_, err := f.svc.NodeUnstageVolume(context.Background(), &csi.NodeUnstageVolumeRequest{VolumeId: volID, StagingTargetPath: f.staging})
	wantCode(t, err, codes.Internal)
	if msg := status.Convert(err).Message(); !strings.Contains(msg, f.staging) || !strings.Contains(msg, "busy") {
		t.Fatalf("message %q should name the path and the cause", msg)
	}
	if rec, _ := f.svc.store.load(volID); rec == nil {
		t.Fatal("record dropped although the volume is still mounted")
	}
}
