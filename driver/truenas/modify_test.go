package truenas_test

import (
	"context"
	"strings"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/lab/truenashost"
)

// ModifyVolume through the TrueNAS API: pool.dataset.update on the
// simulated middleware changes the property; a property the API cannot set
// is INVALID_ARGUMENT listing what it can.
func TestModifyVolumeAPI(t *testing.T) {
	h := startHost(t, truenashost.Options{Version: "25.10"})
	d := newDriver(t, h.DriverConfig("freenas-api-nfs", "vols", ""))
	ctx := context.Background()
	vol, err := d.CreateVolume(ctx, &csi.CreateVolumeRequest{Name: "pvc-1", VolumeCapabilities: caps(false),
		CapacityRange: &csi.CapacityRange{RequiredBytes: 1 << 30}})
	if err != nil {
		t.Fatal(err)
	}
	id := vol.GetVolume().GetVolumeId()
	if _, err := d.ControllerModifyVolume(ctx, &csi.ControllerModifyVolumeRequest{VolumeId: id,
		MutableParameters: map[string]string{"compression": "zstd", "atime": "off", "sync": "always"}}); err != nil {
		t.Fatalf("modify: %v", err)
	}
	rows, err := h.Query("pool.dataset.query")
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, r := range rows {
		if r["id"] != "tank/k8s/vols/"+id {
			continue
		}
		found = true
		for field, want := range map[string]string{"compression": "ZSTD", "atime": "OFF", "sync": "ALWAYS"} {
			p, _ := r[field].(map[string]any)
			if got, _ := p["value"].(string); got != want {
				t.Errorf("%s = %v, want %s", field, r[field], want)
			}
		}
	}
	if !found {
		t.Fatal("volume dataset not found")
	}
	// logbias is a zfs property the dataset API cannot set.
	_, err = d.ControllerModifyVolume(ctx, &csi.ControllerModifyVolumeRequest{VolumeId: id, MutableParameters: map[string]string{"logbias": "throughput"}})
	if status.Code(err) != codes.InvalidArgument || !strings.Contains(status.Convert(err).Message(), "logbias") ||
		!strings.Contains(status.Convert(err).Message(), "compression") {
		t.Errorf("modify of logbias: %v", err)
	}
	if _, err := d.DeleteVolume(ctx, &csi.DeleteVolumeRequest{VolumeId: id}); err != nil {
		t.Fatal(err)
	}
}

// The API drivers serve no group controller: TrueNAS snapshots one dataset
// per call, so a group would not be atomic.
func TestNoGroupControllerAPI(t *testing.T) {
	h := startHost(t, truenashost.Options{Version: "25.10", SSH: true})
	api := newDriver(t, h.DriverConfig("freenas-api-nfs", "vols", ""))
	if g := api.(interface {
		GroupController() csi.GroupControllerServer
	}).GroupController(); g != nil {
		t.Errorf("freenas-api-nfs serves a group controller")
	}
	ssh := newDriver(t, h.DriverConfig("freenas-nfs", "vols2", ""))
	if g := ssh.(interface {
		GroupController() csi.GroupControllerServer
	}).GroupController(); g == nil {
		t.Errorf("freenas-nfs (zfs over SSH) serves no group controller")
	}
}
