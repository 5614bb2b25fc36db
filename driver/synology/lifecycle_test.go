package synology_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"

	"github.com/switchyard-csi/switchyard/driver/synology"
	sim "github.com/switchyard-csi/switchyard/simulators/synology"
)

const gib = int64(1) << 30

func TestISCSILifecycle(t *testing.T) {
	r := newRig(t, synology.DriverISCSI, "", sim.Options{Volumes: []sim.Volume{{Path: "/volume1", Size: 100 * gib}}})
	v := r.mustCreate("pvc-1", gib, nil)
	vc := v.GetVolumeContext()
	want := map[string]string{"node_attach_driver": "iscsi", "portal": "127.0.0.1", "portals": "", "interface": "",
		"iqn": "iqn.2000-01.com.synology:csi.pvc-1", "lun": "1", "provisioner_driver": "synology-iscsi"}
	for k, w := range want {
		if vc[k] != w {
			t.Errorf("volume_context %s = %q, want %q", k, vc[k], w)
		}
	}
	if v.GetVolumeId() != "pvc-1" || v.GetCapacityBytes() != gib {
		t.Fatalf("volume %v", v)
	}
	if again := r.mustCreate("pvc-1", gib, nil); again.GetVolumeContext()["lun"] != "1" {
		t.Fatalf("second create: %v", again)
	}
	_, err := r.create("pvc-1", 2*gib, nil)
	wantCode(t, err, codes.AlreadyExists, "1073741824")
	if c := r.capacity(); c != 99*gib {
		t.Fatalf("capacity %d", c)
	}
	exp, err := r.d.ControllerExpandVolume(r.ctx, &csi.ControllerExpandVolumeRequest{VolumeId: "pvc-1", CapacityRange: &csi.CapacityRange{RequiredBytes: 2 * gib}})
	if err != nil || exp.GetCapacityBytes() != 2*gib || !exp.GetNodeExpansionRequired() {
		t.Fatalf("expand: %v %v", exp, err)
	}
	// data written to the LUN survives into the snapshot's clone
	luns, _ := filepath.Glob(filepath.Join(r.srv.LUNPath("x"), "..", "*.img"))
	if len(luns) != 1 {
		t.Fatalf("LUN files %v", luns)
	}
	f, _ := os.OpenFile(luns[0], os.O_WRONLY, 0)
	f.WriteAt([]byte("switchyard"), 4096)
	f.Close()
	s := r.snapshot("pvc-1", "snap-1")
	if !strings.HasPrefix(s.GetSnapshotId(), "/lun/") || s.GetSizeBytes() != 2*gib || !s.GetReadyToUse() || s.GetSourceVolumeId() != "pvc-1" {
		t.Fatalf("snapshot %v", s)
	}
	if again := r.snapshot("pvc-1", "snap-1"); again.GetSnapshotId() != s.GetSnapshotId() {
		t.Fatalf("snapshot twice: %v vs %v", again, s)
	}
	fromSnap := r.mustCreate("pvc-from-snap", 3*gib, &csi.VolumeContentSource{Type: &csi.VolumeContentSource_Snapshot{Snapshot: &csi.VolumeContentSource_SnapshotSource{SnapshotId: s.GetSnapshotId()}}})
	if fromSnap.GetCapacityBytes() != 3*gib || fromSnap.GetContentSource() == nil {
		t.Fatalf("from snapshot %v", fromSnap)
	}
	clone := r.mustCreate("pvc-clone", gib, &csi.VolumeContentSource{Type: &csi.VolumeContentSource_Volume{Volume: &csi.VolumeContentSource_VolumeSource{VolumeId: "pvc-1"}}})
	if clone.GetCapacityBytes() != 2*gib {
		t.Fatalf("clone keeps its source's size: %v", clone)
	}
	r.snapshot("pvc-clone", "snap-2")
	for _, id := range []string{"pvc-from-snap", "pvc-clone"} {
		vc := r.mustCreate(id, gib, nil).GetVolumeContext()
		uuid := ""
		luns, _ := r.d.Client().ListLUNs(r.ctx)
		for _, l := range luns {
			if l.Name == id {
				uuid = l.UUID
			}
		}
		data := make([]byte, 10)
		f, err := os.Open(r.srv.LUNPath(uuid))
		if err != nil {
			t.Fatal(err)
		}
		f.ReadAt(data, 4096)
		f.Close()
		if string(data) != "switchyard" {
			t.Fatalf("%s (lun %s) lacks its source's data: %q", id, vc["lun"], data)
		}
	}
	_, err = r.d.CreateSnapshot(r.ctx, &csi.CreateSnapshotRequest{SourceVolumeId: "pvc-clone", Name: "snap-1"})
	wantCode(t, err, codes.AlreadyExists, "pvc-1")
	if ids := r.volumeIDs(); !slices.Equal(ids, []string{"pvc-1", "pvc-clone", "pvc-from-snap"}) {
		t.Fatalf("ListVolumes %v", ids)
	}
	ls, err := r.d.ListSnapshots(r.ctx, &csi.ListSnapshotsRequest{SourceVolumeId: "pvc-1"})
	if err != nil || len(ls.GetEntries()) != 1 || ls.GetEntries()[0].GetSnapshot().GetSnapshotId() != s.GetSnapshotId() {
		t.Fatalf("ListSnapshots: %v %v", ls, err)
	}
	if _, err := r.d.GetSnapshot(r.ctx, &csi.GetSnapshotRequest{SnapshotId: s.GetSnapshotId()}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		if _, err := r.d.DeleteSnapshot(r.ctx, &csi.DeleteSnapshotRequest{SnapshotId: s.GetSnapshotId()}); err != nil {
			t.Fatal(err)
		}
	}
	_, err = r.d.GetSnapshot(r.ctx, &csi.GetSnapshotRequest{SnapshotId: s.GetSnapshotId()})
	wantCode(t, err, codes.NotFound)
	for _, id := range []string{"pvc-1", "pvc-clone", "pvc-from-snap", "pvc-1"} {
		if _, err := r.d.DeleteVolume(r.ctx, &csi.DeleteVolumeRequest{VolumeId: id}); err != nil {
			t.Fatalf("delete %s: %v", id, err)
		}
	}
	if ids := r.volumeIDs(); len(ids) != 0 {
		t.Fatalf("left %v", ids)
	}
	if c := r.capacity(); c != 100*gib {
		t.Fatalf("capacity after deletes %d", c)
	}
	ts, _ := r.d.Client().ListTargets(r.ctx)
	if len(ts) != 0 {
		t.Fatalf("targets left %v", ts)
	}
}

func TestShareLifecycle(t *testing.T) {
	for _, driver := range []string{synology.DriverNFS, synology.DriverSMB} {
		t.Run(driver, func(t *testing.T) {
			r := newRig(t, driver, "", sim.Options{})
			v := r.mustCreate("pvc-1", gib+1, nil)
			vc := v.GetVolumeContext()
			share := map[string]string{synology.DriverNFS: "/volume1/pvc-1", synology.DriverSMB: "pvc-1"}[driver]
			if vc["server"] != "127.0.0.1" || vc["share"] != share || vc["node_attach_driver"] != driver[len("synology-"):] || v.GetCapacityBytes() != gib+1<<20 {
				t.Fatalf("volume %v", v)
			}
			if err := os.WriteFile(filepath.Join(r.srv.ShareDir("/volume1", "pvc-1"), "f"), []byte("data"), 0o644); err != nil {
				t.Fatal(err)
			}
			s := r.snapshot("pvc-1", "snap-1")
			if !strings.HasPrefix(s.GetSnapshotId(), "/share/pvc-1/GMT") {
				t.Fatalf("snapshot %v", s)
			}
			if again := r.snapshot("pvc-1", "snap-1"); again.GetSnapshotId() != s.GetSnapshotId() {
				t.Fatalf("snapshot twice %v", again)
			}
			long := strings.Repeat("x", 100)
			c := r.mustCreate(long, gib, &csi.VolumeContentSource{Type: &csi.VolumeContentSource_Snapshot{Snapshot: &csi.VolumeContentSource_SnapshotSource{SnapshotId: s.GetSnapshotId()}}})
			if len(c.GetVolumeId()) > 32 {
				t.Fatalf("share name %q over DSM's 32 characters", c.GetVolumeId())
			}
			if again := r.mustCreate(long, gib, nil); again.GetVolumeId() != c.GetVolumeId() {
				t.Fatal("a long name does not give the same share twice")
			}
			if b, err := os.ReadFile(filepath.Join(r.srv.ShareDir("/volume1", c.GetVolumeId()), "f")); err != nil || string(b) != "data" {
				t.Fatalf("clone from snapshot lacks the data: %q %v", b, err)
			}
			r.mustCreate("pvc-clone", gib, &csi.VolumeContentSource{Type: &csi.VolumeContentSource_Volume{Volume: &csi.VolumeContentSource_VolumeSource{VolumeId: "pvc-1"}}})
			exp, err := r.d.ControllerExpandVolume(r.ctx, &csi.ControllerExpandVolumeRequest{VolumeId: "pvc-1", CapacityRange: &csi.CapacityRange{RequiredBytes: 3 * gib}})
			if err != nil || exp.GetCapacityBytes() != 3*gib || exp.GetNodeExpansionRequired() {
				t.Fatalf("expand %v %v", exp, err)
			}
			if ids := r.volumeIDs(); len(ids) != 3 {
				t.Fatalf("ListVolumes %v", ids)
			}
			for _, id := range []string{"pvc-1", "pvc-clone", c.GetVolumeId(), "pvc-1"} {
				if _, err := r.d.DeleteVolume(r.ctx, &csi.DeleteVolumeRequest{VolumeId: id}); err != nil {
					t.Fatal(err)
				}
			}
			if ids := r.volumeIDs(); len(ids) != 0 {
				t.Fatalf("left %v", ids)
			}
			if _, err := r.d.DeleteSnapshot(r.ctx, &csi.DeleteSnapshotRequest{SnapshotId: s.GetSnapshotId()}); err != nil {
				t.Fatalf("snapshot of a deleted share: %v", err)
			}
		})
	}
}
