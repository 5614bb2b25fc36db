// Package dirvoltest holds the CSI test helpers the directory-volume
// tests share: driver/dirvol's own and those of the backends over it
// (local-hostpath, the share clients). It imports no switchyard package.
package dirvoltest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// MountCap is a mount capability with access mode mode.
func MountCap(mode csi.VolumeCapability_AccessMode_Mode) *csi.VolumeCapability {
	return &csi.VolumeCapability{
		AccessType: &csi.VolumeCapability_Mount{Mount: &csi.VolumeCapability_MountVolume{}},
		AccessMode: &csi.VolumeCapability_AccessMode{Mode: mode},
	}
}

// BlockCap is a block capability, SINGLE_NODE_WRITER.
func BlockCap() *csi.VolumeCapability {
	return &csi.VolumeCapability{
		AccessType: &csi.VolumeCapability_Block{Block: &csi.VolumeCapability_BlockVolume{}},
		AccessMode: &csi.VolumeCapability_AccessMode{Mode: csi.VolumeCapability_AccessMode_SINGLE_NODE_WRITER},
	}
}

// RWO is one mount capability, SINGLE_NODE_WRITER.
func RWO() []*csi.VolumeCapability {
	return []*csi.VolumeCapability{MountCap(csi.VolumeCapability_AccessMode_SINGLE_NODE_WRITER)}
}

// CreateReq asks for an empty volume name of required bytes, RWO.
func CreateReq(name string, required int64) *csi.CreateVolumeRequest {
	return &csi.CreateVolumeRequest{
		Name:               name,
		VolumeCapabilities: RWO(),
		CapacityRange:      &csi.CapacityRange{RequiredBytes: required},
	}
}

// FromVolume is a clone source.
func FromVolume(id string) *csi.VolumeContentSource {
	return &csi.VolumeContentSource{Type: &csi.VolumeContentSource_Volume{Volume: &csi.VolumeContentSource_VolumeSource{VolumeId: id}}}
}

// FromSnapshot is a restore source.
func FromSnapshot(id string) *csi.VolumeContentSource {
	return &csi.VolumeContentSource{Type: &csi.VolumeContentSource_Snapshot{Snapshot: &csi.VolumeContentSource_SnapshotSource{SnapshotId: id}}}
}

// MustCreate creates a volume or fails the test.
func MustCreate(t testing.TB, d csi.ControllerServer, req *csi.CreateVolumeRequest) *csi.Volume {
	t.Helper()
	resp, err := d.CreateVolume(context.Background(), req)
	if err != nil {
		t.Fatalf("CreateVolume(%q): %v", req.GetName(), err)
	}
	return resp.GetVolume()
}

// MustSnapshot cuts a snapshot of src or fails the test.
func MustSnapshot(t testing.TB, d csi.ControllerServer, name, src string) *csi.Snapshot {
	t.Helper()
	resp, err := d.CreateSnapshot(context.Background(), &csi.CreateSnapshotRequest{Name: name, SourceVolumeId: src})
	if err != nil {
		t.Fatalf("CreateSnapshot(%q, %q): %v", name, src, err)
	}
	return resp.GetSnapshot()
}

// WantCode fails unless err is a status with code want (codes.OK: nil)
// whose message contains every fragment.
func WantCode(t testing.TB, err error, want codes.Code, fragments ...string) {
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

// Exists reports whether path exists (not following a final link).
func Exists(t testing.TB, path string) bool {
	t.Helper()
	_, err := os.Lstat(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return err == nil
}

// WriteFile writes content to path with the raw mode bits, making parents.
func WriteFile(t testing.TB, path, content string, mode fs.FileMode) {
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

// DirEntries lists the names in dir (nil when it does not exist).
func DirEntries(t testing.TB, dir string) []string {
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

// DescribeTree renders every entry below root with type, permission bits,
// owner, modification time and content or link target, one line each, so
// two trees compare as strings. skipRootMode leaves out the root's mode
// (dirPermissionsMode changes it).
func DescribeTree(t testing.TB, root string, skipRootMode bool) string {
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
			data, err := os.ReadFile(path) //nolint:gosec // a test helper reading a tree its test made
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
