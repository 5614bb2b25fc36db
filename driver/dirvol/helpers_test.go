package dirvol

import (
	"context"
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

	"github.com/switchyard-csi/switchyard/driver/config"
)

const (
	testShare = "/var/lib/csi-dirs"
	gib       = int64(1) << 30
)

// Driver is what the tests drive: a Controller over testBackend.
type Driver = Controller

// testBackend is the smallest backend over a Controller: mount access
// only, volumes reachable everywhere, nodes find them at testShare/v/<id>.
type testBackend struct {
	share string
	// notReady, when set, is what Ready answers (a share not mounted).
	notReady error
}

func (b testBackend) Ready(string) error                          { return b.notReady }
func (testBackend) CheckRequisite(*csi.TopologyRequirement) error { return nil }
func (testBackend) CapacityFor(*csi.Topology) (bool, error)       { return true, nil }
func (testBackend) Topology() []*csi.Topology                     { return nil }
func (b testBackend) VolumeContext(id string) map[string]string {
	return map[string]string{"path": b.share + "/v/" + id}
}
func (testBackend) CheckCapability(c *csi.VolumeCapability) string {
	switch {
	case c == nil:
		return "a volume capability is empty"
	case c.GetMount() == nil:
		return "test volumes need mount access"
	case c.GetMount().GetFsType() != "":
		return "test volumes take no fs_type"
	case c.GetAccessMode() == nil:
		return "a volume capability has no access_mode"
	}
	return ""
}

// testFlavor is local-hostpath's: both fast paths on, so the tests cover
// them; dirPermissions* turn the empty-volume one off per config.
var testFlavor = Flavor{ErrPrefix: "dirs", Family: "dirs", Product: "dirs", FastEmpty: true, CacheMeta: true}

const testSection = "dirs"

// testConfig is a valid config with the controller base in a temp dir.
func testConfig(base string) config.Tree {
	return config.Tree{
		"driver": "dirs",
		testSection: map[string]any{
			"shareBasePath":      testShare + "/",
			"controllerBasePath": base,
		},
	}
}

// newTestDriver builds a controller on a fresh temp dir; edit may change
// the config first.
func newTestDriver(t testing.TB, edit func(cfg config.Tree)) (*Driver, string) {
	t.Helper()
	base := t.TempDir()
	cfg := testConfig(base)
	if edit != nil {
		edit(cfg)
	}
	s, problems := Parse(cfg, Section{Key: testSection, Needs: "shareBasePath and controllerBasePath"})
	if len(problems) > 0 {
		t.Fatalf("config: %v", problems)
	}
	return NewController(testFlavor, s, testBackend{share: s.ShareBase}, slog.New(slog.DiscardHandler)), base
}

func section(cfg config.Tree) map[string]any { return cfg[testSection].(map[string]any) }

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
