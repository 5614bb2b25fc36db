package truenas_test

import (
	"context"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/lab/truenashost"
)

// TestCloneCutShortBeforeItsLabels: the API clones a snapshot, then sets
// the new dataset's properties in a second call. When that call fails, the
// retried CreateVolume finds an unlabelled clone of exactly its source: it
// must label and finish it (it answered ALREADY_EXISTS "was not made for
// volume", and the clone leaked; found by the chaos soak, lab/soak).
func TestCloneCutShortBeforeItsLabels(t *testing.T) {
	for _, driver := range []string{"freenas-api-nfs", "freenas-api-iscsi"} {
		t.Run(driver, func(t *testing.T) {
			h := startHost(t, truenashost.Options{Version: "25.10"})
			d := newDriver(t, h.DriverConfig(driver, "vols", ""))
			ctx := context.Background()
			block := driver == "freenas-api-iscsi"
			src, err := d.CreateVolume(ctx, createReq("pvc-src", block))
			if err != nil {
				t.Fatal(err)
			}
			snap, err := d.CreateSnapshot(ctx, &csi.CreateSnapshotRequest{Name: "snap-1", SourceVolumeId: src.GetVolume().GetVolumeId()})
			if err != nil {
				t.Fatal(err)
			}
			req := createReq("pvc-clone", block)
			req.VolumeContentSource = &csi.VolumeContentSource{Type: &csi.VolumeContentSource_Snapshot{
				Snapshot: &csi.VolumeContentSource_SnapshotSource{SnapshotId: snap.GetSnapshot().GetSnapshotId()}}}
			h.Server.Faults().SetErrorRate("pool.dataset.update", 1)
			if _, err := d.CreateVolume(ctx, req); err == nil {
				t.Fatal("CreateVolume succeeded although labelling the clone failed")
			}
			h.Server.Faults().SetErrorRate("pool.dataset.update", 0)
			if got := volumeDatasets(h, "tank/k8s/vols"); len(got) != 2 {
				t.Fatalf("datasets %v: the clone should be there, unlabelled", got)
			}
			clone, err := d.CreateVolume(ctx, req)
			if err != nil {
				t.Fatalf("the retried CreateVolume: %v", err)
			}
			if _, err := d.DeleteVolume(ctx, &csi.DeleteVolumeRequest{VolumeId: clone.GetVolume().GetVolumeId()}); err != nil {
				t.Fatal(err)
			}
			if _, err := d.DeleteSnapshot(ctx, &csi.DeleteSnapshotRequest{SnapshotId: snap.GetSnapshot().GetSnapshotId()}); err != nil {
				t.Fatal(err)
			}
			if _, err := d.DeleteVolume(ctx, &csi.DeleteVolumeRequest{VolumeId: src.GetVolume().GetVolumeId()}); err != nil {
				t.Fatal(err)
			}
			if got := volumeDatasets(h, "tank/k8s/vols"); len(got) != 0 {
				t.Errorf("datasets %v left", got)
			}
			if msg := countSharing(h).check(nil); msg != "" {
				t.Errorf("%s: %+v", msg, h.Server.Sharing().State())
			}
		})
	}
}

// TestSubsystemLookupFailsAfterExists: a subsystem an earlier call made
// exists, and looking it up after "already exists" fails: CreateVolume
// must answer the lookup's retryable error, not the create's
// INVALID_ARGUMENT, which ends the CO's retries (found by the chaos soak).
func TestSubsystemLookupFailsAfterExists(t *testing.T) {
	h := startHost(t, truenashost.Options{Version: "25.10"})
	d := newDriver(t, h.DriverConfig("freenas-api-nvmeof", "vols", ""))
	ctx := context.Background()
	inProcess(t, h, "nvmet.subsys.create", nil, map[string]any{"name": "pvc-1", "allow_any_host": true})
	h.Server.Faults().SetErrorRate("nvmet.subsys.query", 1)
	_, err := d.CreateVolume(ctx, createReq("pvc-1", true))
	if err == nil || status.Code(err) == codes.InvalidArgument {
		t.Fatalf("CreateVolume with the lookup failing: %v, want a retryable error", err)
	}
	h.Server.Faults().SetErrorRate("nvmet.subsys.query", 0)
	vol, err := d.CreateVolume(ctx, createReq("pvc-1", true))
	if err != nil {
		t.Fatalf("the retry: %v", err)
	}
	if _, err := d.DeleteVolume(ctx, &csi.DeleteVolumeRequest{VolumeId: vol.GetVolume().GetVolumeId()}); err != nil {
		t.Fatal(err)
	}
	if msg := countSharing(h).check(nil); msg != "" {
		t.Errorf("%s: %+v", msg, h.Server.Sharing().State())
	}
}
