package zfslocal_test

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/driver/backend"
	"github.com/switchyard-csi/switchyard/driver/config"
	"github.com/switchyard-csi/switchyard/driver/volumecontext"
	"github.com/switchyard-csi/switchyard/driver/zfslocal"
	"github.com/switchyard-csi/switchyard/lab/zfshost"
)

var ctx = context.Background()

const topoKey = "org.democratic-csi.topology/node"

// newSimDriver is driver on the simulated ZFS host, as node "node-a".
func newSimDriver(t testing.TB, driver, parent string) (*zfslocal.Driver, *zfshost.Host) {
	t.Helper()
	h, err := zfshost.Start(zfshost.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	yaml := "driver: " + driver + "\n" + h.SSHConnection() + "zfs:\n  datasetParentName: " + parent + "\n  detachedSnapshotsDatasetParentName: tank/k8s/local/s\n  datasetEnableQuotas: true\n"
	tree, err := config.Parse([]byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	d, err := zfslocal.New(backend.Options{File: "test.yaml", Config: tree, NodeName: "node-a", Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d, h
}

func caps(block bool, fsType string) []*csi.VolumeCapability {
	c := &csi.VolumeCapability{AccessMode: &csi.VolumeCapability_AccessMode{Mode: csi.VolumeCapability_AccessMode_SINGLE_NODE_WRITER}}
	if block {
		c.AccessType = &csi.VolumeCapability_Block{Block: &csi.VolumeCapability_BlockVolume{}}
	} else {
		c.AccessType = &csi.VolumeCapability_Mount{Mount: &csi.VolumeCapability_MountVolume{FsType: fsType}}
	}
	return []*csi.VolumeCapability{c}
}

// TestVolumesLiveOnTheNode: each volume is the node's dataset or zvol,
// named in volume_context, with the node as topology; expansion grows it.
func TestVolumesLiveOnTheNode(t *testing.T) {
	for _, tc := range []struct {
		driver, fsType, typ, sizeProp string
	}{
		{zfslocal.DriverDataset, "zfs", "filesystem", "refquota"},
		{zfslocal.DriverZvol, "ext4", "volume", "volsize"},
	} {
		t.Run(tc.driver, func(t *testing.T) {
			d, h := newSimDriver(t, tc.driver, "tank/k8s/local/v")
			resp, err := d.CreateVolume(ctx, &csi.CreateVolumeRequest{Name: "pvc-1", VolumeCapabilities: caps(false, tc.fsType),
				CapacityRange: &csi.CapacityRange{RequiredBytes: 1 << 30}})
			if err != nil {
				t.Fatalf("CreateVolume: %v", err)
			}
			v := resp.GetVolume()
			if len(v.GetAccessibleTopology()) != 1 || v.GetAccessibleTopology()[0].GetSegments()[topoKey] != "node-a" {
				t.Errorf("topology %v, want %s=node-a", v.GetAccessibleTopology(), topoKey)
			}
			vc, err := volumecontext.Decode(v.GetVolumeContext())
			if err != nil {
				t.Fatal(err)
			}
			if vc.Attach != (volumecontext.ZFSLocal{AssetName: "tank/k8s/local/v/pvc-1"}) || vc.Provisioner.Driver != tc.driver {
				t.Errorf("volume_context %+v", vc)
			}
			got, err := prop(h, "tank/k8s/local/v/pvc-1", "type")
			if err != nil || got != tc.typ {
				t.Errorf("type %q %v, want %s", got, err, tc.typ)
			}
			if _, err := d.ControllerExpandVolume(ctx, &csi.ControllerExpandVolumeRequest{VolumeId: v.GetVolumeId(), CapacityRange: &csi.CapacityRange{RequiredBytes: 2 << 30}}); err != nil {
				t.Fatalf("expand: %v", err)
			}
			if got, _ := prop(h, "tank/k8s/local/v/pvc-1", tc.sizeProp); got != "2147483648" {
				t.Errorf("%s after expansion = %q, want 2147483648", tc.sizeProp, got)
			}
			list, err := d.ListVolumes(ctx, &csi.ListVolumesRequest{})
			if err != nil || len(list.GetEntries()) != 1 || list.GetEntries()[0].GetVolume().GetAccessibleTopology()[0].GetSegments()[topoKey] != "node-a" {
				t.Errorf("ListVolumes: %v %v", list, err)
			}
		})
	}
}

func TestRequisiteOfAnotherNodeIsRefused(t *testing.T) {
	d, h := newSimDriver(t, zfslocal.DriverDataset, "tank/k8s/local/v")
	req := &csi.CreateVolumeRequest{Name: "pvc-2", VolumeCapabilities: caps(false, ""),
		AccessibilityRequirements: &csi.TopologyRequirement{Requisite: []*csi.Topology{{Segments: map[string]string{topoKey: "node-b"}}}}}
	_, err := d.CreateVolume(ctx, req)
	if status.Code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), `"node-b"`) {
		t.Fatalf("got %v, want RESOURCE_EXHAUSTED naming node-b", err)
	}
	if h.Model.Exists("tank/k8s/local/v/pvc-2") {
		t.Error("the volume was made anyway")
	}
	capResp, err := d.GetCapacity(ctx, &csi.GetCapacityRequest{AccessibleTopology: &csi.Topology{Segments: map[string]string{topoKey: "node-b"}}})
	if err != nil || capResp.GetAvailableCapacity() != 0 {
		t.Errorf("capacity for another node: %v %v, want 0", capResp, err)
	}
	req.AccessibilityRequirements.Requisite = append(req.AccessibilityRequirements.Requisite, &csi.Topology{Segments: map[string]string{topoKey: "node-a"}})
	if _, err := d.CreateVolume(ctx, req); err != nil {
		t.Errorf("with node-a allowed: %v", err)
	}
}

// TestNodeWithoutThePool: a node whose pool is missing fails with
// FAILED_PRECONDITION naming the node, the key and the pool, for datasets
// and zvols, and makes nothing.
func TestNodeWithoutThePool(t *testing.T) {
	for _, driver := range []string{zfslocal.DriverDataset, zfslocal.DriverZvol} {
		t.Run(driver, func(t *testing.T) {
			d, h := newSimDriver(t, driver, "otherpool/k8s/v")
			_, err := d.CreateVolume(ctx, &csi.CreateVolumeRequest{Name: "pvc-1", VolumeCapabilities: caps(driver == zfslocal.DriverZvol, ""),
				CapacityRange: &csi.CapacityRange{RequiredBytes: 1 << 30}})
			if status.Code(err) != codes.FailedPrecondition {
				t.Fatalf("got %v, want FAILED_PRECONDITION", err)
			}
			for _, want := range []string{`node "node-a"`, "zfs.datasetParentName", "otherpool"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not name %s", err, want)
				}
			}
			if _, err := prop(h, "otherpool/k8s/v/pvc-1", "type"); err == nil {
				t.Error("the volume was made anyway")
			}
			if _, err := prop(h, "tank/k8s/local/v/pvc-1", "type"); err == nil {
				t.Error("the volume was made in another pool")
			}
		})
	}
}

func TestNodeNameRequired(t *testing.T) {
	tree := config.Tree{"driver": "zfs-local-dataset", "zfs": map[string]any{"datasetParentName": "tank/v"}}
	_, err := zfslocal.New(backend.Options{Config: tree})
	if err == nil || !strings.Contains(err.Error(), "CSI_NODE_ID") {
		t.Fatalf("got %v, want an error naming CSI_NODE_ID", err)
	}
	if ps := zfslocal.Validate(config.Tree{"driver": "zfs-local-zvol"}); len(ps) == 0 || ps[0].Key != "zfs.datasetParentName" {
		t.Errorf("missing parent: %v", ps)
	}
}

// prop is one property of a dataset on the simulated host, as zfs get -p.
func prop(h *zfshost.Host, name, p string) (string, error) {
	v, err := h.Model.GetProperty(name, p, true)
	return v.Value, err
}
