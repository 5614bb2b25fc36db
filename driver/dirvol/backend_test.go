package dirvol

import (
	"context"
	"log/slog"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/driver/dirvol/dirvoltest"
)

// Every call that touches the base directory asks the backend first, and
// its refusal is the answer (shareclient's unmounted share must never
// become volumes on the controller's own disk).
func TestReadyGuardsEveryCall(t *testing.T) {
	d, _ := newTestDriver(t, nil)
	dirvoltest.MustCreate(t, d, dirvoltest.CreateReq("pvc-1", gib))
	dirvoltest.MustSnapshot(t, d, "snap-1", "pvc-1")
	d.be = testBackend{share: testShare, notReady: status.Error(codes.FailedPrecondition, "not mounted")}
	ctx := context.Background()
	calls := map[string]func() error{
		"CreateVolume": func() error { _, err := d.CreateVolume(ctx, dirvoltest.CreateReq("pvc-2", gib)); return err },
		"DeleteVolume": func() error {
			_, err := d.DeleteVolume(ctx, &csi.DeleteVolumeRequest{VolumeId: "pvc-1"})
			return err
		},
		"ControllerExpandVolume": func() error {
			_, err := d.ControllerExpandVolume(ctx, &csi.ControllerExpandVolumeRequest{VolumeId: "pvc-1", CapacityRange: &csi.CapacityRange{RequiredBytes: 2 * gib}})
			return err
		},
		"ValidateVolumeCapabilities": func() error {
			_, err := d.ValidateVolumeCapabilities(ctx, &csi.ValidateVolumeCapabilitiesRequest{VolumeId: "pvc-1", VolumeCapabilities: dirvoltest.RWO()})
			return err
		},
		"ControllerGetVolume": func() error {
			_, err := d.ControllerGetVolume(ctx, &csi.ControllerGetVolumeRequest{VolumeId: "pvc-1"})
			return err
		},
		"ListVolumes": func() error { _, err := d.ListVolumes(ctx, &csi.ListVolumesRequest{}); return err },
		"CreateSnapshot": func() error {
			_, err := d.CreateSnapshot(ctx, &csi.CreateSnapshotRequest{Name: "snap-2", SourceVolumeId: "pvc-1"})
			return err
		},
		"DeleteSnapshot": func() error {
			_, err := d.DeleteSnapshot(ctx, &csi.DeleteSnapshotRequest{SnapshotId: "snap-1"})
			return err
		},
		"GetSnapshot": func() error {
			_, err := d.GetSnapshot(ctx, &csi.GetSnapshotRequest{SnapshotId: "snap-1"})
			return err
		},
		"ListSnapshots": func() error { _, err := d.ListSnapshots(ctx, &csi.ListSnapshotsRequest{}); return err },
	}
	for name, call := range calls {
		t.Run(name, func(t *testing.T) { dirvoltest.WantCode(t, call(), codes.FailedPrecondition, "not mounted") })
	}
	// Nothing was touched: the volume and the snapshot are still there.
	d.be = testBackend{share: testShare}
	if _, err := d.ControllerGetVolume(ctx, &csi.ControllerGetVolumeRequest{VolumeId: "pvc-1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := d.GetSnapshot(ctx, &csi.GetSnapshotRequest{SnapshotId: "snap-1"}); err != nil {
		t.Fatal(err)
	}
}

// The backend's capability rules decide: a refused capability is
// INVALID_ARGUMENT on create, a Message on validate, no capacity.
func TestBackendCapabilityRules(t *testing.T) {
	d, _ := newTestDriver(t, nil)
	ctx := context.Background()
	req := dirvoltest.CreateReq("pvc-1", gib)
	req.VolumeCapabilities = []*csi.VolumeCapability{dirvoltest.BlockCap()}
	_, err := d.CreateVolume(ctx, req)
	dirvoltest.WantCode(t, err, codes.InvalidArgument, "test volumes need mount access")
	dirvoltest.MustCreate(t, d, dirvoltest.CreateReq("pvc-1", gib))
	v, err := d.ValidateVolumeCapabilities(ctx, &csi.ValidateVolumeCapabilitiesRequest{VolumeId: "pvc-1", VolumeCapabilities: []*csi.VolumeCapability{dirvoltest.BlockCap()}})
	if err != nil || v.GetConfirmed() != nil || v.GetMessage() != "test volumes need mount access" {
		t.Errorf("validate block: %v %v", v, err)
	}
	c, err := d.GetCapacity(ctx, &csi.GetCapacityRequest{VolumeCapabilities: []*csi.VolumeCapability{dirvoltest.BlockCap()}})
	if err != nil || c.GetAvailableCapacity() != 0 {
		t.Errorf("capacity for block: %v %v", c, err)
	}
	if c, err := d.GetCapacity(ctx, &csi.GetCapacityRequest{VolumeCapabilities: dirvoltest.RWO()}); err != nil || c.GetAvailableCapacity() <= 0 {
		t.Errorf("capacity for mount: %v %v", c, err)
	}
}

// Without the fast paths (shareclient's flavor) an empty volume is built
// and renamed into place, and deleted through .del-: same results.
func TestWithoutFastPaths(t *testing.T) {
	d, base := newTestDriver(t, nil)
	d = NewController(Flavor{ErrPrefix: "share"}, d.Settings(), testBackend{share: testShare}, slog.New(slog.DiscardHandler))
	dirvoltest.MustCreate(t, d, dirvoltest.CreateReq("pvc-1", gib))
	if !dirvoltest.Exists(t, base+"/v/pvc-1") || d.store.cache != nil {
		t.Fatalf("volume missing or cache on")
	}
	if _, err := d.DeleteVolume(context.Background(), &csi.DeleteVolumeRequest{VolumeId: "pvc-1"}); err != nil {
		t.Fatal(err)
	}
	if names := dirvoltest.DirEntries(t, base+"/v"); len(names) != 0 {
		t.Errorf("left in v/: %v", names)
	}
	_, err := d.ControllerGetVolume(context.Background(), &csi.ControllerGetVolumeRequest{VolumeId: "nope/x"})
	dirvoltest.WantCode(t, err, codes.NotFound, "not a volume id of this driver")
}
