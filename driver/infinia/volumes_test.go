package infinia

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"

	"github.com/switchyard-csi/switchyard/driver/infinia/api"
)

func TestCreateVolumeMakesSubsystemVolumeAndListeners(t *testing.T) {
	f := newFake(t)
	d := newTestDriver(t, accountYAML(f.url, `owneruid: "1000"`, `groupuid: "2000"`, `perms: "0750"`), nil)
	v := mustCreate(t, d, "pvc-red-1", 1_000_000)

	if v.GetVolumeId() != "clu1/red/csiAccount:red/csiService/pvc-red-1" {
		t.Fatalf("volume id %q", v.GetVolumeId())
	}
	if v.GetCapacityBytes() != 1_003_520 { // 245 blocks of 4096
		t.Fatalf("capacity %d, want 1000000 rounded up to 4096-byte blocks", v.GetCapacityBytes())
	}
	vc := v.GetVolumeContext()
	want := map[string]string{
		"node_attach_driver": "nvmeof", "provisioner_driver": "infinia-nvmeof",
		"nqn": "nqn.2023-03.com.ddn:red:clu1:red:red:pvc-red-1", "nsid": "1",
		"uuid": "00000000-0000-4000-8000-000000000001", "owneruid": "1000", "groupuid": "2000", "perms": "0750",
	}
	// The exposes go at once, and this server keeps listeners in the
	// order they came: every listener is a path, the first one any of them.
	trs := strings.Split(vc["transports"], ",")
	slices.Sort(trs)
	if got := strings.Join(trs, ","); got != "tcp://127.0.0.1:4420,tcp://127.0.0.2:4420" {
		t.Errorf("volume_context[transports] = %q, want both instances' listeners", vc["transports"])
	}
	if !slices.Contains(trs, vc["transport"]) {
		t.Errorf("volume_context[transport] = %q, not one of transports %q", vc["transport"], vc["transports"])
	}
	want["transport"], want["transports"] = vc["transport"], vc["transports"]
	for k, w := range want {
		if vc[k] != w {
			t.Errorf("volume_context[%s] = %q, want %q", k, vc[k], w)
		}
	}
	if len(vc) != len(want) {
		t.Errorf("volume_context has extra keys: %v", vc)
	}
	if v.GetAccessibleTopology() != nil {
		t.Errorf("no zone configured, yet topology %v", v.GetAccessibleTopology())
	}
	s := f.subsystem("red", "pvc-red-1")
	if s == nil || len(s.Listeners) != 2 || len(s.Namespaces) != 1 {
		t.Fatalf("subsystem on the server: %+v", s)
	}
}

func TestCreateVolumeIsIdempotent(t *testing.T) {
	f := newFake(t)
	d := newTestDriver(t, accountYAML(f.url), nil)
	a := mustCreate(t, d, "pvc-1", 1<<20)
	b := mustCreate(t, d, "pvc-1", 1<<20)
	if a.GetVolumeId() != b.GetVolumeId() || a.GetVolumeContext()["uuid"] != b.GetVolumeContext()["uuid"] {
		t.Fatalf("second create returned another volume: %v vs %v", a, b)
	}
	if n := len(f.volumeNames("red", "csiService")); n != 1 {
		t.Fatalf("%d volumes on the server, want 1", n)
	}
	_, err := d.CreateVolume(context.Background(), createReq("pvc-1", 2<<20, nil))
	wantCode(t, err, codes.AlreadyExists, "pvc-1", "1048576")
}

func TestCreateVolumeRefusals(t *testing.T) {
	f := newFake(t)
	d := newTestDriver(t, accountYAML(f.url, "zone: zone-a"), nil)
	ctx := context.Background()

	req := createReq("pvc-src", 1<<20, nil)
	req.VolumeContentSource = &csi.VolumeContentSource{Type: &csi.VolumeContentSource_Volume{Volume: &csi.VolumeContentSource_VolumeSource{VolumeId: "x"}}}
	_, err := d.CreateVolume(ctx, req)
	wantCode(t, err, codes.InvalidArgument, "snapshots and clones are not offered")

	req = createReq("pvc-rwx", 1<<20, nil)
	req.VolumeCapabilities = []*csi.VolumeCapability{mountRWX}
	_, err = d.CreateVolume(ctx, req)
	wantCode(t, err, codes.InvalidArgument, "volumeMode: Block")

	req = createReq("pvc-zone", 1<<20, nil)
	req.AccessibilityRequirements = &csi.TopologyRequirement{Requisite: []*csi.Topology{{Segments: map[string]string{zoneKey: "zone-b"}}}}
	_, err = d.CreateVolume(ctx, req)
	wantCode(t, err, codes.InvalidArgument, `"zone-a"`, `"zone-b"`)

	_, err = d.CreateVolume(ctx, createReq("pvc-x", 1<<20, map[string]string{"service": "red/nope"}))
	wantCode(t, err, codes.InvalidArgument, "parameter service", "red/nope")

	_, err = d.CreateVolume(ctx, createReq("pvc-x", 1<<20, map[string]string{"service": "red/csiService", "instances": "9"}))
	wantCode(t, err, codes.InvalidArgument, "instance 9")
	if n := len(f.volumeNames("red", "csiService")); n != 0 || f.subsystem("red", "pvc-x") != nil {
		t.Fatalf("a refused expose left the volume or its subsystem behind (%d volumes)", n)
	}

	_, err = d.CreateVolume(ctx, createReq("pvc_bad/name", 1<<20, nil))
	wantCode(t, err, codes.InvalidArgument, "invalid characters")
}

func TestCreateVolumeWithZoneReportsTopology(t *testing.T) {
	f := newFake(t)
	d := newTestDriver(t, accountYAML(f.url, "zone: zone-a"), nil)
	req := createReq("pvc-z", 1<<20, nil)
	req.AccessibilityRequirements = &csi.TopologyRequirement{Requisite: []*csi.Topology{
		{Segments: map[string]string{zoneKey: "zone-b"}}, {Segments: map[string]string{zoneKey: "zone-a"}}}}
	resp, err := d.CreateVolume(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	topo := resp.GetVolume().GetAccessibleTopology()
	if len(topo) != 1 || topo[0].GetSegments()[zoneKey] != "zone-a" {
		t.Fatalf("topology %v", topo)
	}
}

func TestCreateVolumeOutOfSpaceRollsBack(t *testing.T) {
	f := newFake(t)
	f.setQuota(1 << 20)
	d := newTestDriver(t, accountYAML(f.url), nil)
	_, err := d.CreateVolume(context.Background(), createReq("pvc-big", 2<<20, nil))
	wantCode(t, err, codes.ResourceExhausted, "insufficient space")
	if f.subsystem("red", "pvc-big") != nil {
		t.Fatal("the subsystem made for a refused volume was left behind")
	}
}

func TestLongNameIsShortenedWithinTheHandleLimit(t *testing.T) {
	f := newFake(t)
	d := newTestDriver(t, accountYAML(f.url), nil)
	name := "pvc-" + strings.Repeat("0123456789", 10)
	v := mustCreate(t, d, name, 1<<20)
	if len(v.GetVolumeId()) > MaxVolumeIDLen {
		t.Fatalf("handle %q is %d bytes", v.GetVolumeId(), len(v.GetVolumeId()))
	}
	again := mustCreate(t, d, name, 1<<20)
	if again.GetVolumeId() != v.GetVolumeId() {
		t.Fatalf("the shortened name is not stable: %s vs %s", v.GetVolumeId(), again.GetVolumeId())
	}
}

func TestDeleteVolume(t *testing.T) {
	f := newFake(t)
	d := newTestDriver(t, accountYAML(f.url), nil)
	ctx := context.Background()
	v := mustCreate(t, d, "pvc-del", 1<<20)
	for range 2 { // the second time there is nothing left: still OK
		if _, err := d.DeleteVolume(ctx, &csi.DeleteVolumeRequest{VolumeId: v.GetVolumeId()}); err != nil {
			t.Fatal(err)
		}
	}
	if len(f.volumeNames("red", "csiService")) != 0 || f.subsystem("red", "pvc-del") != nil {
		t.Fatal("volume or subsystem left on the server")
	}
	if _, err := d.DeleteVolume(ctx, &csi.DeleteVolumeRequest{VolumeId: "not-a-handle"}); err != nil {
		t.Fatalf("a malformed handle must delete as OK: %v", err)
	}
	_, err := d.DeleteVolume(ctx, &csi.DeleteVolumeRequest{VolumeId: "clu9/x/acct:red/csiService/pvc-1"})
	wantCode(t, err, codes.FailedPrecondition, "clu9/x/acct", "not configured", acctKey)
	_, err = d.DeleteVolume(ctx, &csi.DeleteVolumeRequest{})
	wantCode(t, err, codes.InvalidArgument, "volume_id")
}

func TestDeleteKeepsASharedSubsystem(t *testing.T) {
	f := newFake(t)
	d := newTestDriver(t, accountYAML(f.url), nil)
	mustCreate(t, d, "pvc-a", 1<<20)
	// A static volume made outside the driver in pvc-a's subsystem.
	f.mu.Lock()
	s := f.subs["red"].subsystems["pvc-a"]
	s.Namespaces = append(s.Namespaces, api.Namespace{NSID: "2", Volume: "other"})
	f.mu.Unlock()
	if _, err := d.DeleteVolume(context.Background(), &csi.DeleteVolumeRequest{VolumeId: acctKey + ":red/csiService/pvc-a"}); err != nil {
		t.Fatal(err)
	}
	if f.subsystem("red", "pvc-a") == nil {
		t.Fatal("a subsystem still exporting another volume was deleted")
	}
}

func TestExpandVolume(t *testing.T) {
	f := newFake(t)
	d := newTestDriver(t, accountYAML(f.url), nil)
	ctx := context.Background()
	v := mustCreate(t, d, "pvc-grow", 1<<20)
	resp, err := d.ControllerExpandVolume(ctx, &csi.ControllerExpandVolumeRequest{VolumeId: v.GetVolumeId(),
		CapacityRange: &csi.CapacityRange{RequiredBytes: 3<<20 + 1}, VolumeCapability: mountRWO})
	if err != nil {
		t.Fatal(err)
	}
	if resp.GetCapacityBytes() != 3<<20+4096 || !resp.GetNodeExpansionRequired() {
		t.Fatalf("expand answered %v", resp)
	}
	resp, err = d.ControllerExpandVolume(ctx, &csi.ControllerExpandVolumeRequest{VolumeId: v.GetVolumeId(),
		CapacityRange: &csi.CapacityRange{RequiredBytes: 2 << 20}, VolumeCapability: blockRWX})
	if err != nil || resp.GetCapacityBytes() != 3<<20+4096 || resp.GetNodeExpansionRequired() {
		t.Fatalf("a smaller size must keep the volume as it is, without node expansion for block: %v %v", resp, err)
	}
	f.setQuota(4 << 20)
	_, err = d.ControllerExpandVolume(ctx, &csi.ControllerExpandVolumeRequest{VolumeId: v.GetVolumeId(), CapacityRange: &csi.CapacityRange{RequiredBytes: 8 << 20}})
	wantCode(t, err, codes.OutOfRange, "insufficient space")
	_, err = d.ControllerExpandVolume(ctx, &csi.ControllerExpandVolumeRequest{VolumeId: acctKey + ":red/csiService/gone", CapacityRange: &csi.CapacityRange{RequiredBytes: 1}})
	wantCode(t, err, codes.NotFound)
}

func TestValidateVolumeCapabilities(t *testing.T) {
	f := newFake(t)
	d := newTestDriver(t, accountYAML(f.url), nil)
	ctx := context.Background()
	v := mustCreate(t, d, "pvc-v", 1<<20)
	resp, err := d.ValidateVolumeCapabilities(ctx, &csi.ValidateVolumeCapabilitiesRequest{VolumeId: v.GetVolumeId(), VolumeCapabilities: []*csi.VolumeCapability{blockRWX}})
	if err != nil || resp.GetConfirmed() == nil {
		t.Fatalf("block RWX must be confirmed: %v %v", resp, err)
	}
	resp, err = d.ValidateVolumeCapabilities(ctx, &csi.ValidateVolumeCapabilitiesRequest{VolumeId: v.GetVolumeId(), VolumeCapabilities: []*csi.VolumeCapability{mountRWX}})
	if err != nil || resp.GetConfirmed() != nil || !strings.Contains(resp.GetMessage(), "volumeMode: Block") {
		t.Fatalf("mount RWX must not be confirmed: %v %v", resp, err)
	}
	_, err = d.ValidateVolumeCapabilities(ctx, &csi.ValidateVolumeCapabilitiesRequest{VolumeId: acctKey + ":red/csiService/gone", VolumeCapabilities: []*csi.VolumeCapability{mountRWO}})
	wantCode(t, err, codes.NotFound)
	_, err = d.ValidateVolumeCapabilities(ctx, &csi.ValidateVolumeCapabilitiesRequest{VolumeId: "junk", VolumeCapabilities: []*csi.VolumeCapability{mountRWO}})
	wantCode(t, err, codes.NotFound)
	_, err = d.ValidateVolumeCapabilities(ctx, &csi.ValidateVolumeCapabilitiesRequest{VolumeId: v.GetVolumeId()})
	wantCode(t, err, codes.InvalidArgument)
}

func TestControllerGetVolume(t *testing.T) {
	f := newFake(t)
	d := newTestDriver(t, accountYAML(f.url), nil)
	v := mustCreate(t, d, "pvc-g", 1<<20)
	resp, err := d.ControllerGetVolume(context.Background(), &csi.ControllerGetVolumeRequest{VolumeId: v.GetVolumeId()})
	if err != nil {
		t.Fatal(err)
	}
	if resp.GetVolume().GetVolumeContext()["nqn"] != v.GetVolumeContext()["nqn"] || resp.GetVolume().GetCapacityBytes() != 1<<20 {
		t.Fatalf("got %v", resp.GetVolume())
	}
}
