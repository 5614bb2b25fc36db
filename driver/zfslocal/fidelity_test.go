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
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/driver/backend"
	"github.com/switchyard-csi/switchyard/driver/config"
	"github.com/switchyard-csi/switchyard/driver/node"
	"github.com/switchyard-csi/switchyard/driver/zfslocal"
	"github.com/switchyard-csi/switchyard/lab/testtier"
	"github.com/switchyard-csi/switchyard/simulators/zfsmodel/fidelity"
)

// TestDatasetOnRealZFS drives zfs-local-dataset with the local zfs command
// line against a real pool (zfs-fuse, an old zfs without `zfs list -p`,
// which the engine then reads with `zfs get -p`): create, write through
// the node's staged and published paths, expand, snapshot, restore the
// snapshot and clone the volume (each new volume holds the data, read
// through the node), delete (refused while a clone needs the volume's
// snapshot; then each dataset is gone), unpublish, unstage. zvols are not
// tried: zfs-fuse has no /dev/zvol devices. The simulated host covers them
// (simhost_test.go).
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
	svc, err := node.NewService(node.Options{StateDir: filepath.Join(dir, "state"), Logger: log,
		NodeInfo: func(ctxx context.Context) (*csi.NodeGetInfoResponse, error) {
			return &csi.NodeGetInfoResponse{NodeId: "node-a"}, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	n := &realNode{t: t, svc: svc, dir: dir, live: map[string]bool{}}
	// Before the pool's destruction (cleanups run last first): a failed
	// run leaves no mounts behind.
	t.Cleanup(func() {
		for id := range n.live {
			staging, target := n.paths(id)
			_, _ = svc.NodeUnpublishVolume(ctx, &csi.NodeUnpublishVolumeRequest{VolumeId: id, TargetPath: target})
			_, _ = svc.NodeUnstageVolume(ctx, &csi.NodeUnstageVolumeRequest{VolumeId: id, StagingTargetPath: staging})
		}
	})
	exists := func(ds string) bool { return exec.Command(tools.ZFS, "get", "-H", "type", ds).Run() == nil }

	vol, err := d.CreateVolume(ctx, &csi.CreateVolumeRequest{Name: "pvc-1", VolumeCapabilities: caps(false, ""), CapacityRange: &csi.CapacityRange{RequiredBytes: 32 << 20}})
	if err != nil {
		t.Fatalf("CreateVolume: %v", err)
	}
	id := vol.GetVolume().GetVolumeId()
	ds := pool.Name + "/k8s/v/" + id

	// The node stages and publishes the dataset (zfs mount, bind mounts).
	target := n.publish(vol.GetVolume())
	if err := os.WriteFile(filepath.Join(target, "data"), []byte("on zfs"), 0o644); err != nil {
		t.Fatal(err)
	}
	mp, _ := exec.Command(tools.ZFS, "get", "-H", "-o", "value", "mountpoint", ds).Output()
	if b, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(mp)), "data")); err != nil || string(b) != "on zfs" {
		t.Fatalf("the published path is not the dataset: %q %v", b, err)
	}

	if _, err := d.ControllerExpandVolume(ctx, &csi.ControllerExpandVolumeRequest{VolumeId: id, CapacityRange: &csi.CapacityRange{RequiredBytes: 64 << 20}}); err != nil {
		t.Fatalf("expand: %v", err)
	}
	if q, _ := exec.Command(tools.ZFS, "get", "-Hp", "-o", "value", "refquota", ds).Output(); strings.TrimSpace(string(q)) != "67108864" {
		t.Errorf("refquota after expansion %q", q)
	}

	// A snapshot, found by the listings (zfs get -p on zfs-fuse).
	snap, err := d.CreateSnapshot(ctx, &csi.CreateSnapshotRequest{Name: "snap-1", SourceVolumeId: id})
	if err != nil {
		t.Fatalf("CreateSnapshot: %v", err)
	}
	sid := snap.GetSnapshot().GetSnapshotId()
	if !exists(pool.Name + "/k8s/v/" + sid) {
		t.Fatalf("snapshot %s has no zfs snapshot", sid)
	}
	if again, err := d.CreateSnapshot(ctx, &csi.CreateSnapshotRequest{Name: "snap-1", SourceVolumeId: id}); err != nil || again.GetSnapshot().GetSnapshotId() != sid {
		t.Fatalf("CreateSnapshot again: %v %v", again, err)
	}
	if ls, err := d.ListSnapshots(ctx, &csi.ListSnapshotsRequest{SourceVolumeId: id}); err != nil || len(ls.GetEntries()) != 1 || ls.GetEntries()[0].GetSnapshot().GetSnapshotId() != sid {
		t.Fatalf("ListSnapshots of the volume: %v %v", ls, err)
	}
	// Written after the snapshot: the restored volume must not have it.
	if err := os.WriteFile(filepath.Join(target, "later"), []byte("after"), 0o644); err != nil {
		t.Fatal(err)
	}

	restored, err := d.CreateVolume(ctx, &csi.CreateVolumeRequest{Name: "pvc-2", VolumeCapabilities: caps(false, ""),
		CapacityRange:       &csi.CapacityRange{RequiredBytes: 64 << 20},
		VolumeContentSource: &csi.VolumeContentSource{Type: &csi.VolumeContentSource_Snapshot{Snapshot: &csi.VolumeContentSource_SnapshotSource{SnapshotId: sid}}}})
	if err != nil {
		t.Fatalf("CreateVolume from the snapshot: %v", err)
	}
	rt := n.publish(restored.GetVolume())
	n.has(rt, "data", "on zfs")
	if _, err := os.Stat(filepath.Join(rt, "later")); !os.IsNotExist(err) {
		t.Errorf("the restored volume has a file written after the snapshot (%v)", err)
	}
	cloned, err := d.CreateVolume(ctx, &csi.CreateVolumeRequest{Name: "pvc-3", VolumeCapabilities: caps(false, ""),
		CapacityRange:       &csi.CapacityRange{RequiredBytes: 64 << 20},
		VolumeContentSource: &csi.VolumeContentSource{Type: &csi.VolumeContentSource_Volume{Volume: &csi.VolumeContentSource_VolumeSource{VolumeId: id}}}})
	if err != nil {
		t.Fatalf("CreateVolume from the volume: %v", err)
	}
	ct := n.publish(cloned.GetVolume())
	n.has(ct, "later", "after")

	// The source's snapshots have clones: zfs refuses to destroy it, and
	// so does DeleteVolume, which keeps it.
	_, err = d.DeleteVolume(ctx, &csi.DeleteVolumeRequest{VolumeId: id})
	if status.Code(err) != codes.FailedPrecondition || !exists(ds) {
		t.Fatalf("DeleteVolume of a volume whose snapshots have clones: %v (dataset kept: %v)", err, exists(ds))
	}
	// A snapshot with a clone is destroyed deferred: it goes with the clone.
	if _, err := d.DeleteSnapshot(ctx, &csi.DeleteSnapshotRequest{SnapshotId: sid}); err != nil {
		t.Fatalf("DeleteSnapshot: %v", err)
	}
	for _, v := range []*csi.Volume{restored.GetVolume(), cloned.GetVolume()} {
		n.unpublish(v.GetVolumeId())
		if _, err := d.DeleteVolume(ctx, &csi.DeleteVolumeRequest{VolumeId: v.GetVolumeId()}); err != nil {
			t.Fatalf("DeleteVolume %s: %v", v.GetVolumeId(), err)
		}
		if exists(pool.Name + "/k8s/v/" + v.GetVolumeId()) {
			t.Errorf("dataset of %s is left after DeleteVolume", v.GetVolumeId())
		}
	}
	if exists(pool.Name + "/k8s/v/" + sid) {
		t.Errorf("snapshot %s is left after it and its clone were deleted", sid)
	}
	n.unpublish(id)
	for range 2 { // the second finds nothing, and succeeds
		if _, err := d.DeleteVolume(ctx, &csi.DeleteVolumeRequest{VolumeId: id}); err != nil {
			t.Fatalf("DeleteVolume: %v", err)
		}
	}
	out, _ := exec.Command(tools.ZFS, "list", "-H", "-o", "name", "-r", "-t", "filesystem,snapshot", pool.Name+"/k8s/v").Output()
	if got := strings.TrimSpace(string(out)); got != pool.Name+"/k8s/v" {
		t.Errorf("left under the parent after every delete:\n%s", got)
	}
}

// realNode stages and publishes volumes through the node service, in
// paths named by the volume.
type realNode struct {
	t    *testing.T
	svc  *node.Service
	dir  string
	live map[string]bool // staged, maybe published
}

func (n *realNode) paths(id string) (staging, target string) {
	return filepath.Join(n.dir, "staging-"+id), filepath.Join(n.dir, "target-"+id)
}

func (n *realNode) publish(v *csi.Volume) string {
	n.t.Helper()
	staging, target := n.paths(v.GetVolumeId())
	c := caps(false, "")[0]
	n.live[v.GetVolumeId()] = true
	if _, err := n.svc.NodeStageVolume(ctx, &csi.NodeStageVolumeRequest{VolumeId: v.GetVolumeId(), StagingTargetPath: staging, VolumeCapability: c, VolumeContext: v.GetVolumeContext()}); err != nil {
		n.t.Fatalf("NodeStageVolume %s: %v", v.GetVolumeId(), err)
	}
	if _, err := n.svc.NodePublishVolume(ctx, &csi.NodePublishVolumeRequest{VolumeId: v.GetVolumeId(), StagingTargetPath: staging, TargetPath: target, VolumeCapability: c, VolumeContext: v.GetVolumeContext()}); err != nil {
		n.t.Fatalf("NodePublishVolume %s: %v", v.GetVolumeId(), err)
	}
	return target
}

func (n *realNode) unpublish(id string) {
	n.t.Helper()
	staging, target := n.paths(id)
	if _, err := n.svc.NodeUnpublishVolume(ctx, &csi.NodeUnpublishVolumeRequest{VolumeId: id, TargetPath: target}); err != nil {
		n.t.Fatalf("NodeUnpublishVolume %s: %v", id, err)
	}
	if _, err := n.svc.NodeUnstageVolume(ctx, &csi.NodeUnstageVolumeRequest{VolumeId: id, StagingTargetPath: staging}); err != nil {
		n.t.Fatalf("NodeUnstageVolume %s: %v", id, err)
	}
	delete(n.live, id)
}

// has checks a file's content in a published path.
func (n *realNode) has(target, file, want string) {
	n.t.Helper()
	if b, err := os.ReadFile(filepath.Join(target, file)); err != nil || string(b) != want {
		n.t.Errorf("%s in %s: %q %v, want %q", file, target, b, err, want)
	}
}
