package localhostpath

import (
	"context"
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
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

func mustSnapshot(t testing.TB, d *Driver, name, src string) *csi.Snapshot {
	t.Helper()
	resp, err := d.CreateSnapshot(context.Background(), &csi.CreateSnapshotRequest{Name: name, SourceVolumeId: src})
	if err != nil {
		t.Fatalf("CreateSnapshot(%q, %q): %v", name, src, err)
	}
	return resp.GetSnapshot()
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

func writeFile(t testing.TB, path, content string, mode fs.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Chmod(path, uint32(mode)); err != nil { // raw bits: 0o2755 keeps setgid
		t.Fatal(err)
	}
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

// describeTree renders every entry below root with type, permission bits,
// owner, modification time and content or link target, one line each, so
// two trees compare as strings. skipRootMode leaves out the root's mode
// (dirPermissionsMode changes it).
func describeTree(t testing.TB, root string, skipRootMode bool) string {
	t.Helper()
	var lines []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		st := fi.Sys().(*syscall.Stat_t)
		mode := fmt.Sprintf("%o", st.Mode)
		if rel == "." && skipRootMode {
			mode = "-"
		}
		line := fmt.Sprintf("%s type=%s mode=%s owner=%d:%d", rel, fi.Mode().Type(), mode, st.Uid, st.Gid)
		switch {
		case fi.Mode().IsRegular():
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(data)
			line += fmt.Sprintf(" size=%d sha=%s mtime=%d", len(data), hex.EncodeToString(sum[:8]), fi.ModTime().UnixNano())
		case fi.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(path)
			if err != nil {
				return err
			}
			line += " -> " + target
		case fi.IsDir() && rel != ".":
			line += fmt.Sprintf(" mtime=%d", fi.ModTime().UnixNano())
		}
		lines = append(lines, line)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

func md5hex(s string) string {
	sum := md5.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}
