package truenas_test

import (
	"context"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"

	"github.com/switchyard-csi/switchyard/driver/backend"
	"github.com/switchyard-csi/switchyard/driver/config"
	_ "github.com/switchyard-csi/switchyard/driver/truenas"
	"github.com/switchyard-csi/switchyard/lab/truenashost"
)

func startHost(t testing.TB, o truenashost.Options) *truenashost.Host {
	t.Helper()
	if o.Dir == "" {
		o.Dir = t.TempDir()
	}
	h, err := truenashost.Start(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

func newDriver(t testing.TB, yaml string) backend.Driver {
	t.Helper()
	tree, err := config.Parse([]byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	ty, ok := backend.Lookup(tree["driver"].(string))
	if !ok {
		t.Fatalf("no driver %v", tree["driver"])
	}
	if ps := ty.Validate(tree); len(ps) > 0 {
		t.Fatalf("config problems: %v\n%s", ps, yaml)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if os.Getenv("TEST_LOG") != "" {
		log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	d, err := ty.New(backend.Options{File: "test.yaml", Config: tree, Logger: log, CSIName: "org.switchyard.test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

func caps(block bool) []*csi.VolumeCapability {
	c := &csi.VolumeCapability{AccessMode: &csi.VolumeCapability_AccessMode{Mode: csi.VolumeCapability_AccessMode_SINGLE_NODE_WRITER}}
	if block {
		c.AccessType = &csi.VolumeCapability_Block{Block: &csi.VolumeCapability_BlockVolume{}}
	} else {
		c.AccessType = &csi.VolumeCapability_Mount{Mount: &csi.VolumeCapability_MountVolume{}}
	}
	return []*csi.VolumeCapability{c}
}

// TestLifecycle runs create, snapshot, clone, expand and delete for each
// driver on each release that has it, and checks the host is left empty.
func TestLifecycle(t *testing.T) {
	cases := []struct {
		version, driver string
		block           bool
	}{
		{"24.10", "freenas-api-nfs", false},
		{"25.04", "freenas-api-nfs", false},
		{"25.10", "freenas-api-nfs", false},
		{"26.04", "freenas-api-nfs", false},
		{"25.10", "freenas-api-iscsi", true},
		{"25.10", "freenas-api-smb", false},
		{"25.10", "freenas-api-nvmeof", true},
		{"26.04", "truenas-api-nvmeof", true},
		{"24.10", "freenas-api-iscsi", true},
		{"25.10", "freenas-nfs", false},
		{"25.04", "freenas-iscsi", true},
	}
	for _, c := range cases {
		t.Run(c.version+"/"+c.driver, func(t *testing.T) {
			h := startHost(t, truenashost.Options{Version: c.version, SSH: true})
			d := newDriver(t, h.DriverConfig(c.driver, "vols", ""))
			ctx := context.Background()
			vol, err := d.CreateVolume(ctx, &csi.CreateVolumeRequest{Name: "pvc-1", VolumeCapabilities: caps(c.block),
				CapacityRange: &csi.CapacityRange{RequiredBytes: 1 << 30}})
			if err != nil {
				t.Fatalf("create: %v", err)
			}
			again, err := d.CreateVolume(ctx, &csi.CreateVolumeRequest{Name: "pvc-1", VolumeCapabilities: caps(c.block),
				CapacityRange: &csi.CapacityRange{RequiredBytes: 1 << 30}})
			if err != nil || again.GetVolume().GetVolumeId() != vol.GetVolume().GetVolumeId() {
				t.Fatalf("create again: %v %v", again, err)
			}
			vc := vol.GetVolume().GetVolumeContext()
			if vc["node_attach_driver"] == "" || vc["provisioner_driver"] != c.driver {
				t.Fatalf("volume_context %v", vc)
			}
			if !slices.Contains(datasets(h), "tank/k8s/vols/"+vol.GetVolume().GetVolumeId()) {
				t.Fatalf("the volume's dataset is not listed: %v", datasets(h))
			}
			if n := shareObjects(h); n == 0 {
				t.Fatalf("no share object on the host after create: %+v", h.Server.Sharing().State())
			}
			snap, err := d.CreateSnapshot(ctx, &csi.CreateSnapshotRequest{Name: "snap-1", SourceVolumeId: vol.GetVolume().GetVolumeId()})
			if err != nil {
				t.Fatalf("snapshot: %v", err)
			}
			clone, err := d.CreateVolume(ctx, &csi.CreateVolumeRequest{Name: "pvc-2", VolumeCapabilities: caps(c.block),
				CapacityRange:       &csi.CapacityRange{RequiredBytes: 1 << 30},
				VolumeContentSource: &csi.VolumeContentSource{Type: &csi.VolumeContentSource_Snapshot{Snapshot: &csi.VolumeContentSource_SnapshotSource{SnapshotId: snap.GetSnapshot().GetSnapshotId()}}}})
			if err != nil {
				t.Fatalf("clone: %v", err)
			}
			if _, err := d.ControllerExpandVolume(ctx, &csi.ControllerExpandVolumeRequest{VolumeId: vol.GetVolume().GetVolumeId(), CapacityRange: &csi.CapacityRange{RequiredBytes: 2 << 30}}); err != nil {
				t.Fatalf("expand: %v", err)
			}
			lv, err := d.ListVolumes(ctx, &csi.ListVolumesRequest{})
			if err != nil || len(lv.GetEntries()) != 2 {
				t.Fatalf("list: %v %v", lv, err)
			}
			if capResp, err := d.GetCapacity(ctx, &csi.GetCapacityRequest{}); err != nil || capResp.GetAvailableCapacity() <= 0 {
				t.Fatalf("capacity: %v %v", capResp, err)
			}
			for _, id := range []string{clone.GetVolume().GetVolumeId()} {
				if _, err := d.DeleteVolume(ctx, &csi.DeleteVolumeRequest{VolumeId: id}); err != nil {
					t.Fatalf("delete clone: %v", err)
				}
			}
			if _, err := d.DeleteSnapshot(ctx, &csi.DeleteSnapshotRequest{SnapshotId: snap.GetSnapshot().GetSnapshotId()}); err != nil {
				t.Fatalf("delete snapshot: %v", err)
			}
			if _, err := d.DeleteVolume(ctx, &csi.DeleteVolumeRequest{VolumeId: vol.GetVolume().GetVolumeId()}); err != nil {
				t.Fatalf("delete: %v", err)
			}
			if _, err := d.DeleteVolume(ctx, &csi.DeleteVolumeRequest{VolumeId: vol.GetVolume().GetVolumeId()}); err != nil {
				t.Fatalf("delete again: %v", err)
			}
			if n := shareObjects(h); n != 0 {
				t.Errorf("%d share objects left: %+v", n, h.Server.Sharing().State())
			}
			for _, r := range datasets(h) {
				if strings.HasPrefix(r, "tank/k8s/vols/") {
					t.Errorf("dataset %s left behind", r)
				}
			}
		})
	}
}

// shareObjects counts the NFS/SMB shares, iSCSI targets and extents and
// NVMe-oF subsystems and namespaces on the host.
func shareObjects(h *truenashost.Host) int {
	st := h.Server.Sharing().State()
	return len(st.NFSShares) + len(st.SMBShares) + len(st.ISCSITargets) + len(st.ISCSIExtents) +
		len(st.ISCSITargetExtents) + len(st.NVMetSubsystems) + len(st.NVMetNamespaces)
}

func datasets(h *truenashost.Host) []string {
	// Every dataset is a row of its own (with its children nested too):
	// the top-level rows are the complete list.
	rows, _ := h.Query("pool.dataset.query")
	var out []string
	for _, r := range rows {
		if id, ok := r["id"].(string); ok {
			out = append(out, id)
		}
	}
	return out
}
