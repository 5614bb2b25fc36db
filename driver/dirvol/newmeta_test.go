package dirvol

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"

	"github.com/switchyard-csi/switchyard/driver/dirvol/dirvoltest"
)

// A metadata file a crash left torn beside no volume (the create wrote it
// in place and died before mkdir) is rewritten by the retry, and the
// volume then reads back what the retry asked for.
func TestCreateRewritesATornMetadataFile(t *testing.T) {
	d, base := newTestDriver(t, nil)
	metaPath := filepath.Join(base, metaDir, "volumes", "pvc-torn.json")
	if err := os.MkdirAll(filepath.Dir(metaPath), 0o755); err != nil {
		t.Fatal(err)
	}
	// longer than what the retry writes: a rewrite without truncating
	// would leave its tail behind
	torn := []byte(`{"name":"pvc-torn","capacityBytes":12345678901234,"contentSource":{"type":"volume","id":"pvc-a-long-source-name-0123456789"},"createdAt":"2026-`)
	if err := os.WriteFile(metaPath, torn, 0o644); err != nil {
		t.Fatal(err)
	}
	dirvoltest.MustCreate(t, d, dirvoltest.CreateReq("pvc-torn", gib))
	resp, err := d.ControllerGetVolume(ctx, &csi.ControllerGetVolumeRequest{VolumeId: "pvc-torn"})
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.GetVolume().GetCapacityBytes(); got != gib {
		t.Errorf("capacity after the retry %d, want %d", got, gib)
	}
	fi, err := os.Stat(metaPath)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o644 {
		t.Errorf("metadata mode %v, want 0644", fi.Mode().Perm())
	}
}

// Metadata written the earlier way (writeJSON: indented, renamed into
// place) is read as before: existing volumes keep their capacity and name.
func TestIndentedMetadataStillReads(t *testing.T) {
	d, base := newTestDriver(t, nil)
	if err := os.MkdirAll(filepath.Join(base, volumesDir, "pvc-old"), 0o755); err != nil {
		t.Fatal(err)
	}
	m := &volumeMeta{Name: "pvc-old", CapacityBytes: 3 * gib}
	if err := writeJSON(filepath.Join(base, metaDir, "volumes", "pvc-old.json"), m); err != nil {
		t.Fatal(err)
	}
	resp, err := d.CreateVolume(ctx, dirvoltest.CreateReq("pvc-old", 2*gib))
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.GetVolume().GetCapacityBytes(); got != 3*gib {
		t.Errorf("capacity of the existing volume %d, want %d", got, 3*gib)
	}
}
