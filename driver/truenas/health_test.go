package truenas_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/lab/truenashost"
	"github.com/switchyard-csi/switchyard/simulators/truenas/middleware"
)

// Volume health through the TrueNAS API: a healthy pool gives no entries
// (a pool.query that failed would give PoolHealthUnknown: the simulator's
// pools are always ONLINE, so a degraded pool cannot be shown here);
// a dataset removed behind the driver's back is NOT_FOUND.
func TestVolumeHealthAPI(t *testing.T) {
	h := startHost(t, truenashost.Options{Version: "25.10"})
	d := newDriver(t, h.DriverConfig("freenas-api-nfs", "vols", ""))
	ctx := context.Background()
	vol, err := d.CreateVolume(ctx, &csi.CreateVolumeRequest{Name: "pvc-1", VolumeCapabilities: caps(false),
		CapacityRange: &csi.CapacityRange{RequiredBytes: 1 << 30}})
	if err != nil {
		t.Fatal(err)
	}
	id := vol.GetVolume().GetVolumeId()
	resp, err := d.ControllerGetVolumeHealth(ctx, &csi.ControllerGetVolumeHealthRequest{VolumeId: id})
	if err != nil || resp.GetVolumeHealth().GetVolumeId() != id || len(resp.GetVolumeHealth().GetHealthStatuses()) != 0 {
		t.Fatalf("health: %v %v", resp, err)
	}
	list, err := d.ControllerListVolumeHealth(ctx, &csi.ControllerListVolumeHealthRequest{})
	if err != nil || len(list.GetEntries()) != 1 {
		t.Fatalf("list health: %v %v", list, err)
	}
	if _, err := d.DeleteVolume(ctx, &csi.DeleteVolumeRequest{VolumeId: id}); err != nil {
		t.Fatal(err)
	}
	_, err = d.ControllerGetVolumeHealth(ctx, &csi.ControllerGetVolumeHealthRequest{VolumeId: id})
	if status.Code(err) != codes.NotFound {
		t.Errorf("health of a deleted volume: %v", err)
	}
}

// An NFS share deleted behind the driver's back: the volume's health says
// INACCESSIBLE/ShareMissing naming the share and the dataset.
func TestVolumeHealthShareMissingAPI(t *testing.T) {
	h := startHost(t, truenashost.Options{Version: "25.10"})
	d := newDriver(t, h.DriverConfig("freenas-api-nfs", "vols", ""))
	ctx := context.Background()
	vol, err := d.CreateVolume(ctx, &csi.CreateVolumeRequest{Name: "pvc-1", VolumeCapabilities: caps(false),
		CapacityRange: &csi.CapacityRange{RequiredBytes: 1 << 30}})
	if err != nil {
		t.Fatal(err)
	}
	shares := h.Server.Sharing().State().NFSShares
	if len(shares) != 1 {
		t.Fatalf("NFS shares: %+v", shares)
	}
	m, ok := h.Server.Registry().Lookup("sharing.nfs.delete")
	if !ok {
		t.Fatal("no sharing.nfs.delete")
	}
	id, _ := json.Marshal(shares[0].ID)
	if _, err := m.Handler(&middleware.Call{Ctx: ctx, Version: h.Version, User: "root", Progress: func(float64, string) {}}, []json.RawMessage{id}); err != nil {
		t.Fatal(err)
	}
	resp, err := d.ControllerGetVolumeHealth(ctx, &csi.ControllerGetVolumeHealthRequest{VolumeId: vol.GetVolume().GetVolumeId()})
	if err != nil {
		t.Fatal(err)
	}
	st := resp.GetVolumeHealth().GetHealthStatuses()
	if len(st) != 1 || st[0].GetStatus() != csi.VolumeHealthErrorType_INACCESSIBLE || st[0].GetReason() != "ShareMissing" ||
		!strings.Contains(st[0].GetMessage(), "tank/k8s/vols/"+vol.GetVolume().GetVolumeId()) {
		t.Errorf("health after the share was removed: %v", st)
	}
}
