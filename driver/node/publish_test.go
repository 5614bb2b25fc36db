package node

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	mount "k8s.io/mount-utils"

	"github.com/switchyard-csi/switchyard/driver/volumecontext"
)

func TestPublishBindsFromStaging(t *testing.T) {
	tests := []struct {
		name   string
		mode   csi.VolumeCapability_AccessMode_Mode
		ro     bool
		wantRO bool
	}{
		{"read-write", snw, false, false},
		{"readonly flag", snw, true, true},
		{"reader-only mode", snro, false, true},
		{"multi-node reader-only mode", mnro, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			f.stage(t, mountCap(tt.mode))
			f.publish(t, f.target, mountCap(tt.mode), tt.ro)
			mp, ok := f.mountAt(f.target)
			if !ok {
				t.Fatal("target not mounted")
			}
			// The fake, like the kernel, shows a bind of a bind as the
			// original source.
			if mp.Device != f.src || !slices.Contains(mp.Opts, "bind") {
				t.Fatalf("target mount %+v, want a bind from the staging of %s", mp, f.src)
			}
			if got := slices.Contains(mp.Opts, "ro"); got != tt.wantRO {
				t.Fatalf("ro=%t, want %t (opts %v)", got, tt.wantRO, mp.Opts)
			}
			if fi, err := os.Stat(f.target); err != nil || !fi.IsDir() {
				t.Fatalf("target dir not created: %v", err)
			}
		})
	}
}

func TestPublishIdempotent(t *testing.T) {
	f := newFixture(t)
	f.stage(t, mountCap(snw))
	f.publish(t, f.target, mountCap(snw), true)
	f.publish(t, f.target, mountCap(snw), true)
	if n := f.countActions(mount.FakeActionMount, f.target); n != 1 {
		t.Fatalf("%d mounts at target, want 1", n)
	}
}

func TestPublishSameTargetDifferentArguments(t *testing.T) {
	tests := []struct {
		name string
		cap  *csi.VolumeCapability
		ro   bool
	}{
		{"readonly differs", mountCap(snmw), true},
		{"access mode differs", mountCap(mnmw), false},
		{"mount flags differ", &csi.VolumeCapability{
			AccessType: &csi.VolumeCapability_Mount{Mount: &csi.VolumeCapability_MountVolume{MountFlags: []string{"noexec"}}},
			AccessMode: &csi.VolumeCapability_AccessMode{Mode: snmw},
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			f.stage(t, mountCap(snmw))
			f.publish(t, f.target, mountCap(snmw), false)
			_, err := f.svc.NodePublishVolume(context.Background(), f.publishReq(f.target, tt.cap, tt.ro))
			wantCode(t, err, codes.AlreadyExists)
			if !strings.Contains(err.Error(), f.target) {
				t.Fatalf("error %q does not name the target", err)
			}
		})
	}
}

// The CSI spec's second-NodePublishVolume table for a plugin with
// SINGLE_NODE_MULTI_WRITER: a different target path is refused for
// single-writer and single-node reader-only volumes.
func TestPublishSecondTargetByAccessMode(t *testing.T) {
	tests := []struct {
		first, second csi.VolumeCapability_AccessMode_Mode
		want          codes.Code
	}{
		{snsw, snsw, codes.FailedPrecondition},
		{snro, snro, codes.FailedPrecondition},
		{snsw, snmw, codes.FailedPrecondition}, // the first was promised exclusivity
		{snmw, snsw, codes.FailedPrecondition}, // the second asks for it
		{snmw, snmw, codes.OK},
		{snw, snw, codes.OK}, // Kubernetes ReadWriteOnce: pods on one node share it
		{mnmw, mnmw, codes.OK},
		{mnro, mnro, codes.OK},
	}
	for _, tt := range tests {
		t.Run(tt.first.String()+"_then_"+tt.second.String(), func(t *testing.T) {
			f := newFixture(t)
			f.stage(t, mountCap(tt.first))
			f.publish(t, f.target, mountCap(tt.first), false)
			other := filepath.Join(f.root, "pods", "other_target")
			_, err := f.svc.NodePublishVolume(context.Background(), f.publishReq(other, mountCap(tt.second), false))
			wantCode(t, err, tt.want)
			_, mounted := f.mountAt(other)
			if mounted != (tt.want == codes.OK) {
				t.Fatalf("second target mounted=%t after %v", mounted, err)
			}
			if tt.want == codes.FailedPrecondition && !strings.Contains(err.Error(), f.target) {
				t.Fatalf("error %q does not name the existing target", err)
			}
		})
	}
}

func TestPublishSingleWriterMovesAfterUnpublish(t *testing.T) {
	for _, how := range []string{"unpublished", "mount vanished"} {
		t.Run(how, func(t *testing.T) {
			f := newFixture(t)
			f.stage(t, mountCap(snsw))
			f.publish(t, f.target, mountCap(snsw), false)
			if how == "unpublished" {
				if _, err := f.svc.NodeUnpublishVolume(context.Background(), &csi.NodeUnpublishVolumeRequest{VolumeId: volID, TargetPath: f.target}); err != nil {
					t.Fatal(err)
				}
			} else if err := f.mounter.Unmount(f.target); err != nil { // the CO cleaned it up
				t.Fatal(err)
			}
			f.publish(t, filepath.Join(f.root, "pods", "next"), mountCap(snsw), false)
		})
	}
}

func TestPublishNeedsLiveStaging(t *testing.T) {
	tests := []struct {
		name    string
		prep    func(t *testing.T, f *fixture) *csi.NodePublishVolumeRequest
		mention string
	}{
		{"never staged", func(t *testing.T, f *fixture) *csi.NodePublishVolumeRequest {
			return f.publishReq(f.target, mountCap(snw), false)
		}, "not staged"},
		{"staged elsewhere", func(t *testing.T, f *fixture) *csi.NodePublishVolumeRequest {
			f.stage(t, mountCap(snw))
			r := f.publishReq(f.target, mountCap(snw), false)
			r.StagingTargetPath = filepath.Join(f.root, "wrong")
			return r
		}, "is staged at"},
		{"staging mount gone", func(t *testing.T, f *fixture) *csi.NodePublishVolumeRequest {
			f.stage(t, mountCap(snw))
			if err := f.mounter.Unmount(f.staging); err != nil {
				t.Fatal(err)
			}
			return f.publishReq(f.target, mountCap(snw), false)
		}, "no longer mounted"},
		{"staged as block, published as mount", func(t *testing.T, f *fixture) *csi.NodePublishVolumeRequest {
			f.svc = f.newService(t, withBlockAttacher(f))
			r := f.stageReq(blockCap(snw))
			r.VolumeContext = map[string]string{volumecontext.KeyAttachDriver: "fakeblock"}
			if _, err := f.svc.NodeStageVolume(context.Background(), r); err != nil {
				t.Fatal(err)
			}
			p := f.publishReq(f.target, mountCap(snw), false)
			p.VolumeContext = r.VolumeContext
			return p
		}, "access type block"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			r := tt.prep(t, f)
			_, err := f.svc.NodePublishVolume(context.Background(), r)
			wantCode(t, err, codes.FailedPrecondition)
			if !strings.Contains(err.Error(), tt.mention) {
				t.Fatalf("error %q does not mention %q", err, tt.mention)
			}
			if _, ok := f.mountAt(f.target); ok {
				t.Fatal("target mounted")
			}
		})
	}
}

func TestPublishForeignMountAtTarget(t *testing.T) {
	f := newFixture(t)
	f.stage(t, mountCap(snw))
	if err := os.MkdirAll(f.target, 0o755); err != nil {
		t.Fatal(err)
	}
	f.mounter.MountPoints = append(f.mounter.MountPoints, mount.MountPoint{Device: "/dev/sdz", Path: f.target, Type: "ext4"})
	_, err := f.svc.NodePublishVolume(context.Background(), f.publishReq(f.target, mountCap(snw), false))
	wantCode(t, err, codes.AlreadyExists)
	if rec, _ := f.svc.store.load(volID); len(rec.Targets) != 0 {
		t.Fatalf("foreign target recorded: %+v", rec.Targets)
	}
}

func TestPublishHostPathAsBlock(t *testing.T) {
	f := newFixture(t)
	f.stage(t, mountCap(snw))
	_, err := f.svc.NodePublishVolume(context.Background(), f.publishReq(f.target, blockCap(snw), false))
	wantCode(t, err, codes.InvalidArgument)
	if !strings.Contains(status.Convert(err).Message(), "block") {
		t.Fatalf("message %q does not explain block", err)
	}
}

func TestUnpublish(t *testing.T) {
	f := newFixture(t)
	f.stage(t, mountCap(snmw))
	second := filepath.Join(f.root, "pods", "second")
	f.publish(t, f.target, mountCap(snmw), false)
	f.publish(t, second, mountCap(snmw), false)
	req := &csi.NodeUnpublishVolumeRequest{VolumeId: volID, TargetPath: f.target}
	for i := range 2 {
		if _, err := f.svc.NodeUnpublishVolume(context.Background(), req); err != nil {
			t.Fatalf("unpublish #%d: %v", i+1, err)
		}
	}
	if _, ok := f.mountAt(f.target); ok {
		t.Fatal("target still mounted")
	}
	if _, err := os.Stat(f.target); !os.IsNotExist(err) {
		t.Fatalf("target not removed: %v", err)
	}
	if _, ok := f.mountAt(second); !ok {
		t.Fatal("the other target was unmounted")
	}
	rec, _ := f.svc.store.load(volID)
	if _, ok := rec.Targets[f.target]; ok || len(rec.Targets) != 1 {
		t.Fatalf("recorded targets %v, want only %s", rec.Targets, second)
	}
}

func TestUnpublishUnknownVolume(t *testing.T) {
	f := newFixture(t)
	_, err := f.svc.NodeUnpublishVolume(context.Background(), &csi.NodeUnpublishVolumeRequest{VolumeId: "unknown", TargetPath: f.target})
	if err != nil {
		t.Fatalf("unpublish of an unknown volume: %v", err)
	}
}

func TestUnpublishKeepsUnmountedData(t *testing.T) {
	f := newFixture(t)
	if err := os.MkdirAll(f.target, 0o755); err != nil {
		t.Fatal(err)
	}
	precious := filepath.Join(f.target, "precious")
	if err := os.WriteFile(precious, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := f.svc.NodeUnpublishVolume(context.Background(), &csi.NodeUnpublishVolumeRequest{VolumeId: volID, TargetPath: f.target})
	wantCode(t, err, codes.FailedPrecondition)
	if _, err := os.Stat(precious); err != nil {
		t.Fatalf("data in an unmounted target was deleted: %v", err)
	}
}

// fakeBlock is an attacher for access type block, standing in for iSCSI
// and NVMe-oF: it binds a "device" onto <staging>/block_device.
type fakeBlock struct{ dev string }

func (fakeBlock) Name() string           { return "fakeblock" }
func (fakeBlock) Validate(*Volume) error { return nil }
func (b fakeBlock) Stage(_ context.Context, h *Host, v *Volume) error {
	if err := os.WriteFile(v.StagedPath(), nil, 0o600); err != nil {
		return err
	}
	return h.Mounter.Mount(b.dev, v.StagedPath(), "", []string{"bind"})
}
func (fakeBlock) Unstage(context.Context, *Host, *Volume) error { return nil }

func withBlockAttacher(f *fixture) func(*Options) {
	return func(o *Options) {
		o.Attachers = []Attacher{HostPath{}, fakeBlock{dev: filepath.Join(f.root, "dev-sdq")}}
	}
}

func TestBlockVolumeLifecycle(t *testing.T) {
	f := newFixture(t)
	f.svc = f.newService(t, withBlockAttacher(f))
	ctx := context.Background()
	dev := filepath.Join(f.root, "dev-sdq")
	vc := map[string]string{volumecontext.KeyAttachDriver: "fakeblock"}
	if _, err := f.svc.NodeStageVolume(ctx, &csi.NodeStageVolumeRequest{
		VolumeId: volID, StagingTargetPath: f.staging, VolumeCapability: blockCap(snw), VolumeContext: vc,
	}); err != nil {
		t.Fatal(err)
	}
	staged := filepath.Join(f.staging, StagedBlockDevice)
	if _, err := f.svc.NodePublishVolume(ctx, &csi.NodePublishVolumeRequest{
		VolumeId: volID, StagingTargetPath: f.staging, TargetPath: f.target, VolumeCapability: blockCap(snw), VolumeContext: vc,
	}); err != nil {
		t.Fatal(err)
	}
	mp, ok := f.mountAt(f.target)
	if !ok || mp.Device != dev {
		t.Fatalf("target mount %+v, want the device %s bound from %s", mp, dev, staged)
	}
	if fi, err := os.Stat(f.target); err != nil || !fi.Mode().IsRegular() {
		t.Fatalf("block target should be a file: %v %v", fi, err)
	}
	if _, err := f.svc.NodeUnpublishVolume(ctx, &csi.NodeUnpublishVolumeRequest{VolumeId: volID, TargetPath: f.target}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(f.target); !os.IsNotExist(err) {
		t.Fatalf("block target file not removed: %v", err)
	}
	if _, err := f.svc.NodeUnstageVolume(ctx, &csi.NodeUnstageVolumeRequest{VolumeId: volID, StagingTargetPath: f.staging}); err != nil {
		t.Fatal(err)
	}
	if _, ok := f.mountAt(staged); ok {
		t.Fatal("block_device still mounted")
	}
	if _, err := os.Stat(f.staging); !os.IsNotExist(err) {
		t.Fatalf("staging dir (with block_device) not cleaned up: %v", err)
	}
}
