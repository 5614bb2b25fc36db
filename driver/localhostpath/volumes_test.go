package localhostpath

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	"github.com/switchyard-csi/switchyard/driver/config"
	"github.com/switchyard-csi/switchyard/driver/dirvol/dirvoltest"
)

var ctx = context.Background()

func TestCreateVolume(t *testing.T) {
	d, base := newTestDriver(t, func(cfg config.Tree) {
		section(cfg)["dirPermissionsMode"] = "0777"
		cfg["instance_id"] = "inst-1"
	})
	vol := dirvoltest.MustCreate(t, d, dirvoltest.CreateReq("pvc-1", gib))

	want := &csi.Volume{
		VolumeId:      "pvc-1",
		CapacityBytes: gib,
		VolumeContext: map[string]string{
			"node_attach_driver":             "hostpath",
			"path":                           testShare + "/v/pvc-1",
			"provisioner_driver":             "local-hostpath",
			"provisioner_driver_instance_id": "inst-1",
		},
		AccessibleTopology: []*csi.Topology{{Segments: map[string]string{TopologyKey: testNode}}},
	}
	if !proto.Equal(vol, want) {
		t.Fatalf("volume = %v\nwant %v", vol, want)
	}
	fi, err := os.Stat(filepath.Join(base, "v", "pvc-1"))
	if err != nil {
		t.Fatal(err)
	}
	if !fi.IsDir() || fi.Mode().Perm() != 0o777 {
		t.Errorf("volume dir mode = %v, want a 0777 directory (dirPermissionsMode)", fi.Mode())
	}
	if !dirvoltest.Exists(t, filepath.Join(base, ".switchyard", "volumes", "pvc-1.json")) {
		t.Error("no metadata recorded")
	}
	if got := dirvoltest.DirEntries(t, filepath.Join(base, "v")); !slices.Equal(got, []string{"pvc-1"}) {
		t.Errorf("v/ holds %q, want only the volume", got)
	}
}

func TestCreateVolumeRejects(t *testing.T) {
	d, base := newTestDriver(t, nil)
	dirvoltest.MustCreate(t, d, dirvoltest.CreateReq("src", gib))
	req := func(edit func(r *csi.CreateVolumeRequest)) *csi.CreateVolumeRequest {
		r := dirvoltest.CreateReq("pvc-new", gib)
		edit(r)
		return r
	}
	reqTopo := func(segments ...map[string]string) *csi.TopologyRequirement {
		tr := &csi.TopologyRequirement{}
		for _, s := range segments {
			tr.Requisite = append(tr.Requisite, &csi.Topology{Segments: s})
		}
		return tr
	}
	tests := []struct {
		name      string
		req       *csi.CreateVolumeRequest
		code      codes.Code
		fragments []string
	}{
		{name: "no name", req: req(func(r *csi.CreateVolumeRequest) { r.Name = "" }), code: codes.InvalidArgument, fragments: []string{"name is required"}},
		{name: "bad characters", req: req(func(r *csi.CreateVolumeRequest) { r.Name = "pvc 1/2" }), code: codes.InvalidArgument, fragments: []string{`" /"`}},
		{name: "no capabilities", req: req(func(r *csi.CreateVolumeRequest) { r.VolumeCapabilities = nil }), code: codes.InvalidArgument, fragments: []string{"volume_capabilities is required"}},
		{name: "block", req: req(func(r *csi.CreateVolumeRequest) {
			r.VolumeCapabilities = []*csi.VolumeCapability{dirvoltest.BlockCap()}
		}),
			code: codes.InvalidArgument, fragments: []string{"local-hostpath volumes are directories; block access is not supported"}},
		{name: "multi node", req: req(func(r *csi.CreateVolumeRequest) {
			r.VolumeCapabilities = append(dirvoltest.RWO(), dirvoltest.MountCap(csi.VolumeCapability_AccessMode_MULTI_NODE_MULTI_WRITER))
		}), code: codes.InvalidArgument, fragments: []string{"MULTI_NODE_MULTI_WRITER", "one node"}},
		{name: "multi node reader", req: req(func(r *csi.CreateVolumeRequest) {
			r.VolumeCapabilities = []*csi.VolumeCapability{dirvoltest.MountCap(csi.VolumeCapability_AccessMode_MULTI_NODE_READER_ONLY)}
		}), code: codes.InvalidArgument, fragments: []string{"MULTI_NODE_READER_ONLY"}},
		{name: "unknown access mode", req: req(func(r *csi.CreateVolumeRequest) {
			r.VolumeCapabilities = []*csi.VolumeCapability{dirvoltest.MountCap(csi.VolumeCapability_AccessMode_UNKNOWN)}
		}), code: codes.InvalidArgument},
		{name: "fs type", req: req(func(r *csi.CreateVolumeRequest) {
			c := dirvoltest.MountCap(csi.VolumeCapability_AccessMode_SINGLE_NODE_WRITER)
			c.GetMount().FsType = "ext4"
			r.VolumeCapabilities = []*csi.VolumeCapability{c}
		}), code: codes.InvalidArgument, fragments: []string{"ext4"}},
		{name: "unknown source volume", req: req(func(r *csi.CreateVolumeRequest) { r.VolumeContentSource = dirvoltest.FromVolume("nope") }),
			code: codes.NotFound, fragments: []string{`"nope"`}},
		{name: "unknown source snapshot", req: req(func(r *csi.CreateVolumeRequest) { r.VolumeContentSource = dirvoltest.FromSnapshot("nope") }),
			code: codes.NotFound, fragments: []string{`"nope"`}},
		{name: "source snapshot id empty", req: req(func(r *csi.CreateVolumeRequest) { r.VolumeContentSource = dirvoltest.FromSnapshot("") }),
			code: codes.InvalidArgument},
		{name: "restic source snapshot", req: req(func(r *csi.CreateVolumeRequest) {
			r.VolumeContentSource = dirvoltest.FromSnapshot("snapshot_driver=restic&snapshot_id=abc")
		}), code: codes.InvalidArgument, fragments: []string{"restic"}},
		{name: "requisite on other nodes", req: req(func(r *csi.CreateVolumeRequest) {
			r.AccessibilityRequirements = reqTopo(map[string]string{TopologyKey: "node-b"}, map[string]string{TopologyKey: "node-c"}, map[string]string{"zone": "z1"})
		}), code: codes.ResourceExhausted, fragments: []string{`"node-a"`, `"node-b"`, `"node-c"`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := d.CreateVolume(ctx, tc.req)
			dirvoltest.WantCode(t, err, tc.code, tc.fragments...)
			if got := dirvoltest.DirEntries(t, filepath.Join(base, "v")); !slices.Equal(got, []string{"src"}) {
				t.Errorf("v/ holds %q after a failed CreateVolume", got)
			}
		})
	}
}

func TestCreateVolumeTopology(t *testing.T) {
	d, _ := newTestDriver(t, nil)
	tests := []struct {
		name      string
		requisite []map[string]string
	}{
		{name: "none"},
		{name: "this node among others", requisite: []map[string]string{{TopologyKey: "node-b"}, {TopologyKey: testNode}}},
		{name: "terms without the key", requisite: []map[string]string{{"topology.kubernetes.io/zone": "z1"}}},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := dirvoltest.CreateReq(fmt.Sprintf("pvc-%d", i), gib)
			r.AccessibilityRequirements = &csi.TopologyRequirement{}
			for _, s := range tc.requisite {
				r.AccessibilityRequirements.Requisite = append(r.AccessibilityRequirements.Requisite, &csi.Topology{Segments: s})
			}
			vol := dirvoltest.MustCreate(t, d, r)
			if got := vol.GetAccessibleTopology(); len(got) != 1 || got[0].GetSegments()[TopologyKey] != testNode {
				t.Errorf("accessible topology = %v", got)
			}
		})
	}
}

func TestValidateVolumeCapabilities(t *testing.T) {
	d, _ := newTestDriver(t, nil)
	dirvoltest.MustCreate(t, d, dirvoltest.CreateReq("pvc-1", gib))
	tests := []struct {
		name      string
		id        string
		caps      []*csi.VolumeCapability
		code      codes.Code
		confirmed bool
	}{
		{name: "single node writer", id: "pvc-1", caps: dirvoltest.RWO(), confirmed: true},
		{name: "all single node modes", id: "pvc-1", caps: []*csi.VolumeCapability{
			dirvoltest.MountCap(csi.VolumeCapability_AccessMode_SINGLE_NODE_READER_ONLY),
			dirvoltest.MountCap(csi.VolumeCapability_AccessMode_SINGLE_NODE_SINGLE_WRITER),
			dirvoltest.MountCap(csi.VolumeCapability_AccessMode_SINGLE_NODE_MULTI_WRITER),
		}, confirmed: true},
		{name: "block", id: "pvc-1", caps: []*csi.VolumeCapability{dirvoltest.BlockCap()}},
		{name: "multi node", id: "pvc-1", caps: []*csi.VolumeCapability{dirvoltest.MountCap(csi.VolumeCapability_AccessMode_MULTI_NODE_SINGLE_WRITER)}},
		{name: "unknown volume", id: "nope", caps: dirvoltest.RWO(), code: codes.NotFound},
		{name: "no capabilities", id: "pvc-1", code: codes.InvalidArgument},
		{name: "no id", caps: dirvoltest.RWO(), code: codes.InvalidArgument},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := d.ValidateVolumeCapabilities(ctx, &csi.ValidateVolumeCapabilitiesRequest{VolumeId: tc.id, VolumeCapabilities: tc.caps})
			dirvoltest.WantCode(t, err, tc.code)
			if err != nil {
				return
			}
			if got := resp.GetConfirmed() != nil; got != tc.confirmed {
				t.Fatalf("confirmed = %v, want %v (%v)", got, tc.confirmed, resp)
			}
			if tc.confirmed && len(resp.GetConfirmed().GetVolumeCapabilities()) != len(tc.caps) {
				t.Errorf("confirmed capabilities = %v", resp.GetConfirmed().GetVolumeCapabilities())
			}
			if !tc.confirmed && resp.GetMessage() == "" {
				t.Error("unsupported capabilities without a message")
			}
		})
	}
}

func TestGetCapacity(t *testing.T) {
	d, _ := newTestDriver(t, nil)
	tests := []struct {
		name    string
		req     *csi.GetCapacityRequest
		nonZero bool
	}{
		{name: "plain", req: &csi.GetCapacityRequest{}, nonZero: true},
		{name: "mount on this node", req: &csi.GetCapacityRequest{VolumeCapabilities: dirvoltest.RWO(), AccessibleTopology: &csi.Topology{Segments: map[string]string{TopologyKey: testNode}}}, nonZero: true},
		{name: "block", req: &csi.GetCapacityRequest{VolumeCapabilities: []*csi.VolumeCapability{dirvoltest.BlockCap()}}},
		{name: "another node", req: &csi.GetCapacityRequest{AccessibleTopology: &csi.Topology{Segments: map[string]string{TopologyKey: "node-b"}}}},
	}
	for _, tc := range tests {
		resp, err := d.GetCapacity(ctx, tc.req)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := resp.GetAvailableCapacity() > 0; got != tc.nonZero {
			t.Errorf("%s: available = %d, want non-zero %v", tc.name, resp.GetAvailableCapacity(), tc.nonZero)
		}
	}
}
