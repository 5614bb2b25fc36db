package node

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	mount "k8s.io/mount-utils"
	testingexec "k8s.io/utils/exec/testing"

	"github.com/switchyard-csi/switchyard/driver/volumecontext"
)

// fixture is a Service over the mount-utils fake mounter and a scripted
// exec (no scripts: any host command fails the test by panicking).
type fixture struct {
	svc     *Service
	mounter *mount.FakeMounter
	exec    *testingexec.FakeExec
	state   string // StateDir
	src     string // a hostpath volume's directory
	staging string // not created: the Service makes it
	target  string // not created: the Service makes it
	root    string
}

func newFixture(t *testing.T, mods ...func(*Options)) *fixture {
	t.Helper()
	root := t.TempDir()
	f := &fixture{
		mounter: mount.NewFakeMounter(nil),
		exec:    &testingexec.FakeExec{},
		state:   filepath.Join(root, "state"),
		src:     filepath.Join(root, "src"),
		staging: filepath.Join(root, "staging"),
		target:  filepath.Join(root, "pods", "target"),
		root:    root,
	}
	if err := os.Mkdir(f.src, 0o755); err != nil {
		t.Fatal(err)
	}
	f.svc = f.newService(t, mods...)
	return f
}

// newService builds another Service over the same state and mounter, as
// after a plugin restart.
func (f *fixture) newService(t *testing.T, mods ...func(*Options)) *Service {
	t.Helper()
	opts := Options{
		Exec:     f.exec,
		Mounter:  f.mounter,
		StateDir: f.state,
		NodeInfo: func(context.Context) (*csi.NodeGetInfoResponse, error) {
			return &csi.NodeGetInfoResponse{NodeId: "node-1"}, nil
		},
		Logger: quietLogger(),
	}
	for _, m := range mods {
		m(&opts)
	}
	s, err := NewService(opts)
	if err != nil {
		t.Fatalf("NewService: %v", err)
	}
	return s
}

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func hostCtx(path string) map[string]string {
	return map[string]string{volumecontext.KeyAttachDriver: "hostpath", volumecontext.KeyPath: path, "provisioner_driver": "local-hostpath"}
}

func mountCap(mode csi.VolumeCapability_AccessMode_Mode) *csi.VolumeCapability {
	return &csi.VolumeCapability{
		AccessType: &csi.VolumeCapability_Mount{Mount: &csi.VolumeCapability_MountVolume{}},
		AccessMode: &csi.VolumeCapability_AccessMode{Mode: mode},
	}
}

func blockCap(mode csi.VolumeCapability_AccessMode_Mode) *csi.VolumeCapability {
	return &csi.VolumeCapability{
		AccessType: &csi.VolumeCapability_Block{Block: &csi.VolumeCapability_BlockVolume{}},
		AccessMode: &csi.VolumeCapability_AccessMode{Mode: mode},
	}
}

const (
	snw  = csi.VolumeCapability_AccessMode_SINGLE_NODE_WRITER
	snsw = csi.VolumeCapability_AccessMode_SINGLE_NODE_SINGLE_WRITER
	snmw = csi.VolumeCapability_AccessMode_SINGLE_NODE_MULTI_WRITER
	snro = csi.VolumeCapability_AccessMode_SINGLE_NODE_READER_ONLY
	mnro = csi.VolumeCapability_AccessMode_MULTI_NODE_READER_ONLY
	mnmw = csi.VolumeCapability_AccessMode_MULTI_NODE_MULTI_WRITER
)

// proxy-style id: "/" and ":" must not leak into state file names.
const volID = "v:conn/pvc-123"

func (f *fixture) stageReq(c *csi.VolumeCapability) *csi.NodeStageVolumeRequest {
	return &csi.NodeStageVolumeRequest{
		VolumeId:          volID,
		StagingTargetPath: f.staging,
		VolumeCapability:  c,
		VolumeContext:     hostCtx(f.src),
	}
}

func (f *fixture) publishReq(tgt string, c *csi.VolumeCapability, ro bool) *csi.NodePublishVolumeRequest {
	return &csi.NodePublishVolumeRequest{
		VolumeId:          volID,
		StagingTargetPath: f.staging,
		TargetPath:        tgt,
		VolumeCapability:  c,
		Readonly:          ro,
		VolumeContext:     hostCtx(f.src),
	}
}

func (f *fixture) stage(t *testing.T, c *csi.VolumeCapability) {
	t.Helper()
	if _, err := f.svc.NodeStageVolume(context.Background(), f.stageReq(c)); err != nil {
		t.Fatalf("NodeStageVolume: %v", err)
	}
}

func (f *fixture) publish(t *testing.T, tgt string, c *csi.VolumeCapability, ro bool) {
	t.Helper()
	if _, err := f.svc.NodePublishVolume(context.Background(), f.publishReq(tgt, c, ro)); err != nil {
		t.Fatalf("NodePublishVolume(%s): %v", tgt, err)
	}
}

// mountAt returns the fake mount table's entry for path.
func (f *fixture) mountAt(path string) (mount.MountPoint, bool) {
	mps, _ := f.mounter.List()
	for _, mp := range slices.Backward(mps) {
		if mp.Path == path {
			return mp, true
		}
	}
	return mount.MountPoint{}, false
}

func (f *fixture) countActions(action, target string) int {
	n := 0
	for _, a := range f.mounter.GetLog() {
		if a.Action == action && a.Target == target {
			n++
		}
	}
	return n
}

func wantCode(t *testing.T, err error, want codes.Code) {
	t.Helper()
	if got := status.Code(err); got != want {
		t.Fatalf("got code %v (%v), want %v", got, err, want)
	}
}
