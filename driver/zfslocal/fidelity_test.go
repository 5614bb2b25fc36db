package zfslocal_test

import (
	"context"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"

	"github.com/switchyard-csi/switchyard/driver/backend"
	"github.com/switchyard-csi/switchyard/driver/config"
	"github.com/switchyard-csi/switchyard/driver/node"
	"github.com/switchyard-csi/switchyard/driver/zfslocal"
	"github.com/switchyard-csi/switchyard/lab/testtier"
	"github.com/switchyard-csi/switchyard/simulators/zfsmodel/fidelity"
)

// TestDatasetOnRealZFS drives zfs-local-dataset with the local zfs command
// line against a real pool (zfs-fuse): create, write through the node's
// staged and published paths, expand, unpublish, unstage. Snapshots and
// DeleteVolume are not tried here: the engine reads datasets with `zfs list -p`,
// which zfs-fuse (an old zfs) lacks; nor are zvols: zfs-fuse has no
// /dev/zvol devices. The simulated host covers both (simhost_test.go).
func TestDatasetOnRealZFS(t *testing.T) {
	tools, ok, why := fidelity.FindTools()
	testtier.Need(t, testtier.Fidelity, ok, why)
	dir := t.TempDir()
	pool, err := fidelity.CreatePool(tools, fidelity.PoolName(), dir, 128<<20, filepath.Join(dir, "mnt"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := pool.Destroy(); err != nil {
			t.Error(err)
		}
	})
	tree, err := config.Parse([]byte("driver: zfs-local-dataset\nzfs:\n  cli:\n    paths:\n      zfs: " + tools.ZFS + "\n      zpool: " + tools.Zpool +
		"\n  datasetParentName: " + pool.Name + "/k8s/v\n  detachedSnapshotsDatasetParentName: " + pool.Name + "/k8s/s\n  datasetEnableQuotas: true\n"))
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	d, err := zfslocal.New(backend.Options{File: "test.yaml", Config: tree, NodeName: "node-a", Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if out, err := exec.Command(tools.ZFS, "create", "-p", pool.Name+"/k8s/v").CombinedOutput(); err != nil {
		t.Fatalf("zfs create parent: %v %s", err, out)
	}

	vol, err := d.CreateVolume(ctx, &csi.CreateVolumeRequest{Name: "pvc-1", VolumeCapabilities: caps(false, ""), CapacityRange: &csi.CapacityRange{RequiredBytes: 32 << 20}})
	if err != nil {
		t.Fatalf("CreateVolume: %v", err)
	}
	id := vol.GetVolume().GetVolumeId()

	// The node stages and publishes the dataset (zfs mount, bind mounts).
	svc, err := node.NewService(node.Options{StateDir: filepath.Join(dir, "state"), Logger: log,
		NodeInfo: func(ctxx context.Context) (*csi.NodeGetInfoResponse, error) {
			return &csi.NodeGetInfoResponse{NodeId: "node-a"}, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	staging, target := filepath.Join(dir, "staging"), filepath.Join(dir, "target")
	c := caps(false, "")[0]
	if _, err := svc.NodeStageVolume(ctx, &csi.NodeStageVolumeRequest{VolumeId: id, StagingTargetPath: staging, VolumeCapability: c, VolumeContext: vol.GetVolume().GetVolumeContext()}); err != nil {
		t.Fatalf("NodeStageVolume: %v", err)
	}
	if _, err := svc.NodePublishVolume(ctx, &csi.NodePublishVolumeRequest{VolumeId: id, StagingTargetPath: staging, TargetPath: target, VolumeCapability: c, VolumeContext: vol.GetVolume().GetVolumeContext()}); err != nil {
		t.Fatalf("NodePublishVolume: %v", err)
	}
	if err := os.WriteFile(filepath.Join(target, "data"), []byte("on zfs"), 0o644); err != nil {
		t.Fatal(err)
	}
	mp, _ := exec.Command(tools.ZFS, "get", "-H", "-o", "value", "mountpoint", pool.Name+"/k8s/v/pvc-1").Output()
	if b, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(mp)), "data")); err != nil || string(b) != "on zfs" {
		t.Fatalf("the published path is not the dataset: %q %v", b, err)
	}

	if _, err := d.ControllerExpandVolume(ctx, &csi.ControllerExpandVolumeRequest{VolumeId: id, CapacityRange: &csi.CapacityRange{RequiredBytes: 64 << 20}}); err != nil {
		t.Fatalf("expand: %v", err)
	}
	if q, _ := exec.Command(tools.ZFS, "get", "-Hp", "-o", "value", "refquota", pool.Name+"/k8s/v/pvc-1").Output(); strings.TrimSpace(string(q)) != "67108864" {
		t.Errorf("refquota after expansion %q", q)
	}
	if _, err := svc.NodeUnpublishVolume(ctx, &csi.NodeUnpublishVolumeRequest{VolumeId: id, TargetPath: target}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.NodeUnstageVolume(ctx, &csi.NodeUnstageVolumeRequest{VolumeId: id, StagingTargetPath: staging}); err != nil {
		t.Fatal(err)
	}
	// DeleteVolume reads the dataset with `zfs list -p` first, which
	// zfs-fuse lacks; the pool's destruction removes the volume.
}
