package localhostpath

import (
	"context"
	"log/slog"
	"os"
	"strings"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/driver/backend"
	"github.com/switchyard-csi/switchyard/driver/config"
)

const (
	testNode  = "node-a"
	testShare = "/var/lib/csi-local-hostpath"
	gib       = int64(1) << 30
)

// testConfig is a valid config with the controller base in a temp dir.
func testConfig(base string) config.Tree {
	return config.Tree{
		"driver": "local-hostpath",
		"local-hostpath": map[string]any{
			"shareBasePath":      testShare + "/",
			"controllerBasePath": base,
		},
	}
}

// newTestDriver builds a driver on a fresh temp dir; edit may change the
// config first.
func newTestDriver(t testing.TB, edit func(cfg config.Tree)) (*Driver, string) {
	t.Helper()
	base := t.TempDir()
	cfg := testConfig(base)
	if edit != nil {
		edit(cfg)
	}
	d, err := New(backend.Options{Config: cfg, NodeName: testNode, File: "test.yaml", Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return d, base
}

func section(cfg config.Tree) map[string]any { return cfg["local-hostpath"].(map[string]any) }

func mountCap(mode csi.VolumeCapability_AccessMode_Mode) *csi.VolumeCapability {
	return &csi.VolumeCapability{
		AccessType: &csi.VolumeCapability_Mount{Mount: &csi.VolumeCapability_MountVolume{}},
		AccessMode: &csi.VolumeCapability_AccessMode{Mode: mode},
	}
}

func blockCap() *csi.VolumeCapability {
	return &csi.VolumeCapability{
		AccessType: &csi.VolumeCapability_Block{Block: &csi.VolumeCapability_BlockVolume{}},
		AccessMode: &csi.VolumeCapability_AccessMode{Mode: csi.VolumeCapability_AccessMode_SINGLE_NODE_WRITER},
	}
}

func rwo() []*csi.VolumeCapability {
	return []*csi.VolumeCapability{mountCap(csi.VolumeCapability_AccessMode_SINGLE_NODE_WRITER)}
}

func createReq(name string, required int64) *csi.CreateVolumeRequest {
	return &csi.CreateVolumeRequest{
		Name:               name,
		VolumeCapabilities: rwo(),
		CapacityRange:      &csi.CapacityRange{RequiredBytes: required},
	}
}

func fromVolume(id string) *csi.VolumeContentSource {
	return &csi.VolumeContentSource{Type: &csi.VolumeContentSource_Volume{Volume: &csi.VolumeContentSource_VolumeSource{VolumeId: id}}}
}

func fromSnapshot(id string) *csi.VolumeContentSource {
	return &csi.VolumeContentSource{Type: &csi.VolumeContentSource_Snapshot{Snapshot: &csi.VolumeContentSource_SnapshotSource{SnapshotId: id}}}
}

func mustCreate(t testing.TB, d *Driver, req *csi.CreateVolumeRequest) *csi.Volume {
	t.Helper()
	resp, err := d.CreateVolume(context.Background(), req)
	if err != nil {
		t.Fatalf("CreateVolume(%q): %v", req.GetName(), err)
	}
	return resp.GetVolume()
}

// wantCode fails unless err is a status with code want (codes.OK: nil)
// whose message contains every fragment.
func wantCode(t testing.TB, err error, want codes.Code, fragments ...string) {
	t.Helper()
	st, ok := status.FromError(err)
	if !ok {
		t.Fatalf("error %v is not a gRPC status", err)
	}
	if st.Code() != want {
		t.Fatalf("code = %s (%v), want %s", st.Code(), err, want)
	}
	for _, f := range fragments {
		if !strings.Contains(st.Message(), f) {
			t.Errorf("message %q does not mention %q", st.Message(), f)
		}
	}
}

func exists(t testing.TB, path string) bool {
	t.Helper()
	_, err := os.Lstat(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return err == nil
}

// dirEntries lists the names in dir (nil when it does not exist).
func dirEntries(t testing.TB, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}
