package engine

import (
	"context"
	"encoding/json"
	"maps"
	"strings"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

var ctx = context.Background()

func mountCaps() []*csi.VolumeCapability {
	return []*csi.VolumeCapability{{
		AccessType: &csi.VolumeCapability_Mount{Mount: &csi.VolumeCapability_MountVolume{}},
		AccessMode: &csi.VolumeCapability_AccessMode{Mode: csi.VolumeCapability_AccessMode_SINGLE_NODE_WRITER},
	}}
}

// TestVolumeLifecycle follows one filesystem volume through the engine
// over a fake platform: the dataset, democratic-csi's user properties, the
// volume_context, idempotent create, get, list, expand and delete.
func TestVolumeLifecycle(t *testing.T) {
	e, p := newFakeEngine(t, "zfs-generic-nfs", false, "  datasetParentName: tank/v\n  datasetEnableQuotas: true\n  datasetPermissionsMode: \"0770\"\n")
	e.cfg.instanceID = "i-1"
	req := &csi.CreateVolumeRequest{Name: "pvc-1", VolumeCapabilities: mountCaps(), CapacityRange: &csi.CapacityRange{RequiredBytes: 1 << 20}}
	resp, err := e.CreateVolume(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	v := resp.GetVolume()
	want := map[string]string{"node_attach_driver": "nfs", "server": "192.0.2.1", "share": "/mnt/tank/v/pvc-1",
		"provisioner_driver": "zfs-generic-nfs", "provisioner_driver_instance_id": "i-1"}
	if v.GetVolumeId() != "pvc-1" || v.GetCapacityBytes() != 1<<20 || !maps.Equal(v.GetVolumeContext(), want) {
		t.Fatalf("volume %+v", v)
	}
	props := p.ds.sets["tank/v/pvc-1"]
	for k, want := range map[string]string{
		propManaged: "true", propSuccess: "true", propVolumeName: "pvc-1", propProvisionerDriver: "zfs-generic-nfs",
		propProvisionerID: "i-1", "refquota": "1048576", "fake:share_name": "pvc-1",
	} {
		if props[k].Value != want {
			t.Errorf("%s = %q, want %q", k, props[k].Value, want)
		}
	}
	var stored map[string]string
	if err := json.Unmarshal([]byte(props[propShareContext].Value), &stored); err != nil || stored["share"] != "/mnt/tank/v/pvc-1" {
		t.Errorf("%s = %q (%v)", propShareContext, props[propShareContext].Value, err)
	}
	if len(p.perms) != 1 || p.perms[0].Mode != "0770" {
		t.Errorf("SetPermissions calls %+v", p.perms)
	}

	again, err := e.CreateVolume(ctx, req)
	if err != nil || !maps.Equal(again.GetVolume().GetVolumeContext(), want) {
		t.Fatalf("repeated create: %v %v", again, err)
	}
	bigger := &csi.CreateVolumeRequest{Name: "pvc-1", VolumeCapabilities: mountCaps(), CapacityRange: &csi.CapacityRange{RequiredBytes: 2 << 20}}
	if _, err := e.CreateVolume(ctx, bigger); status.Code(err) != codes.AlreadyExists {
		t.Fatalf("create with another size: %v, want ALREADY_EXISTS", err)
	}

	got, err := e.ControllerGetVolume(ctx, &csi.ControllerGetVolumeRequest{VolumeId: "pvc-1"})
	if err != nil || !maps.Equal(got.GetVolume().GetVolumeContext(), want) {
		t.Fatalf("get: %v %v", got, err)
	}
	list, err := e.ListVolumes(ctx, &csi.ListVolumesRequest{})
	if err != nil || len(list.GetEntries()) != 1 || list.GetEntries()[0].GetVolume().GetVolumeId() != "pvc-1" {
		t.Fatalf("list: %v %v", list, err)
	}
	exp, err := e.ControllerExpandVolume(ctx, &csi.ControllerExpandVolumeRequest{VolumeId: "pvc-1", CapacityRange: &csi.CapacityRange{RequiredBytes: 4 << 20}})
	if err != nil || exp.GetCapacityBytes() != 4<<20 || exp.GetNodeExpansionRequired() || p.ds.sets["tank/v/pvc-1"]["refquota"].Value != "4194304" {
		t.Fatalf("expand: %v %v", exp, err)
	}

	if _, err := e.DeleteVolume(ctx, &csi.DeleteVolumeRequest{VolumeId: "pvc-1"}); err != nil {
		t.Fatal(err)
	}
	if _, ok := p.ds.sets["tank/v/pvc-1"]; ok || p.share.shared["tank/v/pvc-1"] {
		t.Fatal("the dataset or its share is left after DeleteVolume")
	}
	if _, err := e.DeleteVolume(ctx, &csi.DeleteVolumeRequest{VolumeId: "pvc-1"}); err != nil {
		t.Fatalf("repeated delete: %v", err)
	}
	if _, err := e.ControllerGetVolume(ctx, &csi.ControllerGetVolumeRequest{VolumeId: "pvc-1"}); status.Code(err) != codes.NotFound {
		t.Fatalf("get after delete: %v, want NOT_FOUND", err)
	}
	if err := e.Close(); err != nil || !p.closed {
		t.Fatalf("Close: %v, platform closed %v", err, p.closed)
	}
}

// TestCreateRollsBack: a share the platform refuses leaves no dataset.
func TestCreateRollsBack(t *testing.T) {
	e, p := newFakeEngine(t, "zfs-generic-nfs", false, "  datasetParentName: tank/v\n")
	p.share.fail = status.Error(codes.InvalidArgument, "bad share name")
	_, err := e.CreateVolume(ctx, &csi.CreateVolumeRequest{Name: "pvc-1", VolumeCapabilities: mountCaps()})
	if status.Code(err) != codes.InvalidArgument {
		t.Fatalf("create: %v", err)
	}
	if _, ok := p.ds.sets["tank/v/pvc-1"]; ok {
		t.Fatal("the dataset is left after a refused share")
	}
	// A dropped connection keeps it for the retry to finish.
	p.share.fail = status.Error(codes.Unavailable, "connection lost")
	if _, err := e.CreateVolume(ctx, &csi.CreateVolumeRequest{Name: "pvc-1", VolumeCapabilities: mountCaps()}); status.Code(err) != codes.Unavailable {
		t.Fatalf("create: %v", err)
	}
	if props, ok := p.ds.sets["tank/v/pvc-1"]; !ok || props[propSuccess].IsSet() {
		t.Fatalf("want a half-made dataset, got %v", props)
	}
	p.share.fail = nil
	if _, err := e.CreateVolume(ctx, &csi.CreateVolumeRequest{Name: "pvc-1", VolumeCapabilities: mountCaps()}); err != nil {
		t.Fatalf("retry: %v", err)
	}
	if p.ds.sets["tank/v/pvc-1"][propSuccess].Value != "true" {
		t.Fatal("the retry did not finish the volume")
	}
}

// TestZvolNameLimit: the platform's limit refuses a too-long device name
// before anything is made, naming the host.
func TestZvolNameLimit(t *testing.T) {
	e, p := newFakeEngine(t, "zfs-generic-iscsi", true, "  datasetParentName: tank/a-rather-long-parent-dataset-name\n")
	p.maxZvol = 63
	_, err := e.CreateVolume(ctx, &csi.CreateVolumeRequest{Name: "pvc-0123456789abcdef0123456789", VolumeCapabilities: mountCaps()})
	if status.Code(err) != codes.FailedPrecondition || !strings.Contains(err.Error(), "fake host allows 63") {
		t.Fatalf("create: %v", err)
	}
	if _, ok := p.ds.sets["tank/a-rather-long-parent-dataset-name/pvc-0123456789abcdef0123456789"]; ok {
		t.Fatal("the zvol was made")
	}
}

func TestNewRefusesBadConfig(t *testing.T) {
	_, err := New(Options{Driver: "zfs-generic-nfs", Platform: newFakePlatform()})
	if err == nil || !strings.Contains(err.Error(), "zfs.datasetParentName") {
		t.Fatalf("New without datasetParentName: %v", err)
	}
}
