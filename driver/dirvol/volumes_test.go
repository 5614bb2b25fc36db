package dirvol

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	"github.com/switchyard-csi/switchyard/driver/config"
	"github.com/switchyard-csi/switchyard/driver/dirvol/dirvoltest"
	"github.com/switchyard-csi/switchyard/driver/volumeid"
)

var ctx = context.Background()

func TestCreateVolumeCapacity(t *testing.T) {
	tests := []struct {
		name     string
		cr       *csi.CapacityRange
		want     int64
		wantCode codes.Code
	}{
		{name: "none", cr: nil, want: 0},
		{name: "required", cr: &csi.CapacityRange{RequiredBytes: 5}, want: 5},
		{name: "limit only", cr: &csi.CapacityRange{LimitBytes: 7}, want: 7},
		{name: "both", cr: &csi.CapacityRange{RequiredBytes: 5, LimitBytes: 7}, want: 5},
		{name: "required above limit", cr: &csi.CapacityRange{RequiredBytes: 8, LimitBytes: 7}, wantCode: codes.OutOfRange},
		{name: "negative", cr: &csi.CapacityRange{RequiredBytes: -1}, wantCode: codes.OutOfRange}, // the code every backend gives (backend.CheckRange),
	}
	d, base := newTestDriver(t, nil)
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			name := fmt.Sprintf("pvc-%d", i)
			resp, err := d.CreateVolume(ctx, &csi.CreateVolumeRequest{Name: name, VolumeCapabilities: dirvoltest.RWO(), CapacityRange: tc.cr})
			dirvoltest.WantCode(t, err, tc.wantCode)
			if tc.wantCode != codes.OK {
				if dirvoltest.Exists(t, filepath.Join(base, "v", name)) {
					t.Error("a failed CreateVolume left a directory")
				}
				return
			}
			if got := resp.GetVolume().GetCapacityBytes(); got != tc.want {
				t.Errorf("capacity = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestCreateVolumeIdempotent(t *testing.T) {
	d, _ := newTestDriver(t, nil)
	first := dirvoltest.MustCreate(t, d, &csi.CreateVolumeRequest{Name: "pvc-1", VolumeCapabilities: dirvoltest.RWO(), CapacityRange: &csi.CapacityRange{RequiredBytes: gib, LimitBytes: 2 * gib}})
	dirvoltest.MustCreate(t, d, dirvoltest.CreateReq("other", gib))

	tests := []struct {
		name string
		cr   *csi.CapacityRange
		src  *csi.VolumeContentSource
		code codes.Code
	}{
		{name: "same request", cr: &csi.CapacityRange{RequiredBytes: gib, LimitBytes: 2 * gib}},
		{name: "smaller required", cr: &csi.CapacityRange{RequiredBytes: gib / 2}},
		{name: "no capacity", cr: nil},
		{name: "larger required", cr: &csi.CapacityRange{RequiredBytes: gib + 1}, code: codes.AlreadyExists},
		{name: "lower limit", cr: &csi.CapacityRange{LimitBytes: gib - 1}, code: codes.AlreadyExists},
		{name: "a content source", cr: &csi.CapacityRange{RequiredBytes: gib}, src: dirvoltest.FromVolume("other"), code: codes.AlreadyExists},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := d.CreateVolume(ctx, &csi.CreateVolumeRequest{Name: "pvc-1", VolumeCapabilities: dirvoltest.RWO(), CapacityRange: tc.cr, VolumeContentSource: tc.src})
			dirvoltest.WantCode(t, err, tc.code)
			if err == nil && !proto.Equal(resp.GetVolume(), first) {
				t.Errorf("repeat = %v, want %v", resp.GetVolume(), first)
			}
		})
	}
}

func TestCreateVolumeIDs(t *testing.T) {
	long := "pvc-" + strings.Repeat("l", 96)
	tests := []struct {
		name, strategy, volName, wantID string
	}{
		{name: "short name kept", volName: "pvc-abc", wantID: "pvc-abc"},
		{name: "long name truncated", volName: long, wantID: long[:31] + "-" + md5hex(long)},
		{name: "md5", strategy: "md5", volName: "pvc-abc", wantID: md5hex("pvc-abc")},
		{name: "crc32", strategy: "crc32", volName: "123456789", wantID: "3421780262"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, base := newTestDriver(t, func(cfg config.Tree) {
				if tc.strategy != "" {
					cfg["_private"] = map[string]any{"csi": map[string]any{"volume": map[string]any{"idHash": map[string]any{"strategy": tc.strategy}}}}
				}
			})
			vol := dirvoltest.MustCreate(t, d, dirvoltest.CreateReq(tc.volName, gib))
			if vol.GetVolumeId() != tc.wantID {
				t.Fatalf("id = %q, want %q", vol.GetVolumeId(), tc.wantID)
			}
			if vol.GetVolumeContext()["path"] != testShare+"/v/"+tc.wantID || !dirvoltest.Exists(t, filepath.Join(base, "v", tc.wantID)) {
				t.Errorf("volume not at v/%s (context %v)", tc.wantID, vol.GetVolumeContext())
			}
			again := dirvoltest.MustCreate(t, d, dirvoltest.CreateReq(tc.volName, gib))
			if again.GetVolumeId() != tc.wantID {
				t.Errorf("repeat id = %q", again.GetVolumeId())
			}
		})
	}
}

func TestCreateVolumeHashCollision(t *testing.T) {
	d, _ := newTestDriver(t, func(cfg config.Tree) {
		cfg["_private"] = map[string]any{"csi": map[string]any{"volume": map[string]any{"idHash": map[string]any{"strategy": "crc8"}}}}
	})
	// crc8 has 256 values: find a second name with the first one's id
	first := "pvc-0"
	var second string
	for i := 1; second == ""; i++ {
		if n := fmt.Sprintf("pvc-%d", i); volumeid.CRC8(n) == volumeid.CRC8(first) {
			second = n
		}
	}
	vol := dirvoltest.MustCreate(t, d, dirvoltest.CreateReq(first, gib))
	_, err := d.CreateVolume(ctx, dirvoltest.CreateReq(second, gib))
	dirvoltest.WantCode(t, err, codes.AlreadyExists, vol.GetVolumeId(), first)
}

// A volume made by democratic-csi has no switchyard metadata; it must still
// be found, listed, described, expanded, cloned and deleted.
func TestVolumeWithoutMetadata(t *testing.T) {
	d, base := newTestDriver(t, nil)
	dirvoltest.WriteFile(t, filepath.Join(base, "v", "pvc-old", "data"), "legacy", 0o644)

	vol := dirvoltest.MustCreate(t, d, dirvoltest.CreateReq("pvc-old", gib))
	if vol.GetCapacityBytes() != 0 || vol.GetVolumeId() != "pvc-old" {
		t.Errorf("CreateVolume on an existing democratic-csi volume = %v, want it with capacity 0 (unknown)", vol)
	}
	got, err := d.ControllerGetVolume(ctx, &csi.ControllerGetVolumeRequest{VolumeId: "pvc-old"})
	if err != nil || got.GetVolume().GetCapacityBytes() != 0 || got.GetStatus() == nil {
		t.Fatalf("ControllerGetVolume = %v, %v", got, err)
	}
	exp, err := d.ControllerExpandVolume(ctx, &csi.ControllerExpandVolumeRequest{VolumeId: "pvc-old", CapacityRange: &csi.CapacityRange{RequiredBytes: 3 * gib}})
	if err != nil || exp.GetCapacityBytes() != 3*gib {
		t.Fatalf("ControllerExpandVolume = %v, %v", exp, err)
	}
	clone := dirvoltest.MustCreate(t, d, &csi.CreateVolumeRequest{Name: "pvc-clone", VolumeCapabilities: dirvoltest.RWO(), VolumeContentSource: dirvoltest.FromVolume("pvc-old")})
	if data, err := os.ReadFile(filepath.Join(base, "v", clone.GetVolumeId(), "data")); err != nil || string(data) != "legacy" {
		t.Errorf("clone content = %q, %v", data, err)
	}
	if _, err := d.DeleteVolume(ctx, &csi.DeleteVolumeRequest{VolumeId: "pvc-old"}); err != nil {
		t.Fatal(err)
	}
	if dirvoltest.Exists(t, filepath.Join(base, "v", "pvc-old")) {
		t.Error("DeleteVolume left the directory")
	}
}

// populate fills dir with every kind of entry a copy must preserve.
func populate(t *testing.T, dir string) {
	t.Helper()
	dirvoltest.WriteFile(t, filepath.Join(dir, "plain.txt"), "hello", 0o640)
	dirvoltest.WriteFile(t, filepath.Join(dir, "exec.sh"), "#!/bin/sh\n", 0o755)
	dirvoltest.WriteFile(t, filepath.Join(dir, "sub", "deeper", "file"), strings.Repeat("x", 100000), 0o600)
	dirvoltest.WriteFile(t, filepath.Join(dir, "setgid"), "s", 0o2755)
	if err := os.Chmod(filepath.Join(dir, "sub"), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "sticky"), 0o777); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Chmod(filepath.Join(dir, "sticky"), 0o1777); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{"rel-link": "sub/deeper/file", "abs-link": "/etc/hostname", "dangling": "nowhere"} {
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o620); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 {
		for _, p := range []string{"plain.txt", "sub", "dangling", "setgid"} {
			if err := os.Lchown(filepath.Join(dir, p), 1234, 5678); err != nil {
				t.Fatal(err)
			}
		}
		// chown cleared setgid: set it again
		if err := syscall.Chmod(filepath.Join(dir, "setgid"), 0o2755); err != nil {
			t.Fatal(err)
		}
	}
}

func TestCloneAndRestoreCopyEverything(t *testing.T) {
	d, base := newTestDriver(t, nil)
	dirvoltest.MustCreate(t, d, dirvoltest.CreateReq("src", gib))
	src := filepath.Join(base, "v", "src")
	populate(t, src)
	before := dirvoltest.DescribeTree(t, src, false)
	if os.Geteuid() == 0 && !strings.Contains(before, "owner=1234:5678") {
		t.Fatalf("fixture lacks the test owner:\n%s", before)
	}
	if !strings.Contains(before, "mode=102755") {
		t.Fatalf("fixture lacks the setgid file:\n%s", before)
	}

	clone := dirvoltest.MustCreate(t, d, &csi.CreateVolumeRequest{Name: "clone", VolumeCapabilities: dirvoltest.RWO(), CapacityRange: &csi.CapacityRange{RequiredBytes: gib}, VolumeContentSource: dirvoltest.FromVolume("src")})
	if !proto.Equal(clone.GetContentSource(), dirvoltest.FromVolume("src")) {
		t.Errorf("content source = %v", clone.GetContentSource())
	}
	if got := dirvoltest.DescribeTree(t, filepath.Join(base, "v", "clone"), false); got != before {
		t.Errorf("clone differs from source:\n%s\n--- want\n%s", got, before)
	}

	snap := dirvoltest.MustSnapshot(t, d, "snap-1", "src")
	restored := dirvoltest.MustCreate(t, d, &csi.CreateVolumeRequest{Name: "restored", VolumeCapabilities: dirvoltest.RWO(), VolumeContentSource: dirvoltest.FromSnapshot(snap.GetSnapshotId())})
	if !proto.Equal(restored.GetContentSource(), dirvoltest.FromSnapshot("snap-1")) {
		t.Errorf("content source = %v", restored.GetContentSource())
	}
	if got := dirvoltest.DescribeTree(t, filepath.Join(base, "v", "restored"), false); got != before {
		t.Errorf("restored volume differs from source:\n%s\n--- want\n%s", got, before)
	}
	got, err := d.ControllerGetVolume(ctx, &csi.ControllerGetVolumeRequest{VolumeId: "restored"})
	if err != nil || !proto.Equal(got.GetVolume().GetContentSource(), dirvoltest.FromSnapshot("snap-1")) {
		t.Errorf("ControllerGetVolume content source = %v, %v", got.GetVolume().GetContentSource(), err)
	}
}

func TestCloneAppliesDirPermissions(t *testing.T) {
	d, base := newTestDriver(t, func(cfg config.Tree) {
		section(cfg)["dirPermissionsMode"] = "2770"
		section(cfg)["dirPermissionsUser"] = 4321
		section(cfg)["dirPermissionsGroup"] = "8765"
	})
	if os.Geteuid() != 0 {
		t.Skip("chown to another owner needs root")
	}
	dirvoltest.MustCreate(t, d, dirvoltest.CreateReq("src", gib))
	populate(t, filepath.Join(base, "v", "src"))
	for _, r := range []*csi.CreateVolumeRequest{dirvoltest.CreateReq("fresh", gib), {Name: "clone", VolumeCapabilities: dirvoltest.RWO(), VolumeContentSource: dirvoltest.FromVolume("src")}} {
		dirvoltest.MustCreate(t, d, r)
		fi, err := os.Stat(filepath.Join(base, "v", r.GetName()))
		if err != nil {
			t.Fatal(err)
		}
		st := fi.Sys().(*syscall.Stat_t)
		if st.Mode&0o7777 != 0o2770 || st.Uid != 4321 || st.Gid != 8765 {
			t.Errorf("%s: mode %o owner %d:%d, want 2770 4321:8765", r.GetName(), st.Mode&0o7777, st.Uid, st.Gid)
		}
	}
	// below the root, the clone keeps the source's permissions
	if a, b := dirvoltest.DescribeTree(t, filepath.Join(base, "v", "src"), true), dirvoltest.DescribeTree(t, filepath.Join(base, "v", "clone"), true); !strings.Contains(b, "plain.txt") || strings.SplitN(a, "\n", 2)[1] != strings.SplitN(b, "\n", 2)[1] {
		t.Errorf("clone content differs:\n%s\n--- want\n%s", b, a)
	}
}

func TestFailedCopyLeavesNothing(t *testing.T) {
	tests := []struct {
		name    string
		failAt  string
		create  func(d *Driver) error
		leftDir string // the directory the failed call must not leave
	}{
		{name: "clone", failAt: filepath.Join("sub", "deeper"), leftDir: "v/clone", create: func(d *Driver) error {
			_, err := d.CreateVolume(ctx, &csi.CreateVolumeRequest{Name: "clone", VolumeCapabilities: dirvoltest.RWO(), VolumeContentSource: dirvoltest.FromVolume("src")})
			return err
		}},
		{name: "restore", failAt: "plain.txt", leftDir: "v/restored", create: func(d *Driver) error {
			_, err := d.CreateVolume(ctx, &csi.CreateVolumeRequest{Name: "restored", VolumeCapabilities: dirvoltest.RWO(), VolumeContentSource: dirvoltest.FromSnapshot("snap-0")})
			return err
		}},
		{name: "snapshot", failAt: "sub", leftDir: "s/snap-1", create: func(d *Driver) error {
			_, err := d.CreateSnapshot(ctx, &csi.CreateSnapshotRequest{Name: "snap-1", SourceVolumeId: "src"})
			return err
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, base := newTestDriver(t, nil)
			dirvoltest.MustCreate(t, d, dirvoltest.CreateReq("src", gib))
			populate(t, filepath.Join(base, "v", "src"))
			dirvoltest.MustSnapshot(t, d, "snap-0", "src")
			copied := 0
			d.CopyHook = func(rel string) error {
				if rel == tc.failAt {
					return fmt.Errorf("simulated failure at %s after %d entries", rel, copied)
				}
				copied++
				return nil
			}
			err := tc.create(d)
			dirvoltest.WantCode(t, err, codes.Internal, "simulated failure")
			if copied < 2 {
				t.Fatalf("the copy failed after %d entries; the test wants a half-made copy", copied)
			}
			parent, name := filepath.Split(tc.leftDir)
			if got := dirvoltest.DirEntries(t, filepath.Join(base, parent)); slices.Contains(got, name) || slices.Contains(got, ".tmp-"+name) {
				t.Errorf("%s holds %q after the failed copy", parent, got)
			}
			for _, m := range []string{"volumes/" + name + ".json", "snapshots/" + name + ".json"} {
				if dirvoltest.Exists(t, filepath.Join(base, ".switchyard", m)) {
					t.Errorf("metadata %s written for a failed copy", m)
				}
			}
			d.CopyHook = nil
			if err := tc.create(d); err != nil {
				t.Fatalf("retry after the failure: %v", err)
			}
			if got := dirvoltest.DescribeTree(t, filepath.Join(base, tc.leftDir), false); got != dirvoltest.DescribeTree(t, filepath.Join(base, "v", "src"), false) {
				t.Errorf("retried copy differs from the source:\n%s", got)
			}
		})
	}
}

// A crash leaves v/.tmp-<id>; the next CreateVolume of that name starts over.
func TestStaleTemporaryDirectory(t *testing.T) {
	d, base := newTestDriver(t, nil)
	dirvoltest.WriteFile(t, filepath.Join(base, "v", ".tmp-pvc-1", "junk"), "half", 0o644)
	dirvoltest.WriteFile(t, filepath.Join(base, "v", ".del-pvc-2", "junk"), "half", 0o644)
	dirvoltest.MustCreate(t, d, dirvoltest.CreateReq("pvc-1", gib))
	if got := dirvoltest.DirEntries(t, filepath.Join(base, "v", "pvc-1")); len(got) != 0 {
		t.Errorf("new volume holds %q from a crashed create", got)
	}
	if _, err := d.DeleteVolume(ctx, &csi.DeleteVolumeRequest{VolumeId: "pvc-2"}); err != nil {
		t.Fatal(err)
	}
	if got := dirvoltest.DirEntries(t, filepath.Join(base, "v")); !slices.Equal(got, []string{"pvc-1"}) {
		t.Errorf("v/ holds %q, want the leftovers gone", got)
	}
	resp, err := d.ListVolumes(ctx, &csi.ListVolumesRequest{})
	if err != nil || len(resp.GetEntries()) != 1 {
		t.Errorf("ListVolumes = %v, %v", resp, err)
	}
}

func TestDeleteVolume(t *testing.T) {
	d, base := newTestDriver(t, nil)
	dirvoltest.MustCreate(t, d, dirvoltest.CreateReq("pvc-1", gib))
	dirvoltest.WriteFile(t, filepath.Join(base, "v", "pvc-1", "ro", "file"), "x", 0o444)
	if err := os.Chmod(filepath.Join(base, "v", "pvc-1", "ro"), 0o555); err != nil {
		t.Fatal(err)
	}
	snap := dirvoltest.MustSnapshot(t, d, "snap-1", "pvc-1")

	for i := range 2 { // the second delete finds nothing and succeeds
		if _, err := d.DeleteVolume(ctx, &csi.DeleteVolumeRequest{VolumeId: "pvc-1"}); err != nil {
			t.Fatalf("DeleteVolume #%d: %v", i+1, err)
		}
	}
	if got := dirvoltest.DirEntries(t, filepath.Join(base, "v")); len(got) != 0 {
		t.Errorf("v/ holds %q", got)
	}
	if dirvoltest.Exists(t, filepath.Join(base, ".switchyard", "volumes", "pvc-1.json")) {
		t.Error("metadata left behind")
	}
	// the snapshot is an independent copy
	restored := dirvoltest.MustCreate(t, d, &csi.CreateVolumeRequest{Name: "pvc-2", VolumeCapabilities: dirvoltest.RWO(), VolumeContentSource: dirvoltest.FromSnapshot(snap.GetSnapshotId())})
	if data, err := os.ReadFile(filepath.Join(base, "v", restored.GetVolumeId(), "ro", "file")); err != nil || string(data) != "x" {
		t.Errorf("restore after the source was deleted: %q, %v", data, err)
	}
	// read-only directories inside do not stop a delete (without root,
	// os.RemoveAll alone fails on them)
	if _, err := d.DeleteVolume(ctx, &csi.DeleteVolumeRequest{VolumeId: restored.GetVolumeId()}); err != nil {
		t.Fatal(err)
	}
	if _, err := d.DeleteSnapshot(ctx, &csi.DeleteSnapshotRequest{SnapshotId: snap.GetSnapshotId()}); err != nil {
		t.Fatal(err)
	}
	if got := append(dirvoltest.DirEntries(t, filepath.Join(base, "v")), dirvoltest.DirEntries(t, filepath.Join(base, "s"))...); len(got) != 0 {
		t.Errorf("left after deleting everything: %q", got)
	}
	_, err := d.DeleteVolume(ctx, &csi.DeleteVolumeRequest{})
	dirvoltest.WantCode(t, err, codes.InvalidArgument)
}

// Ids from requests are never used to reach outside the base directories.
func TestPathTraversal(t *testing.T) {
	d, base := newTestDriver(t, nil)
	outside := t.TempDir()
	// targets an escaping id would hit
	victims := []string{
		filepath.Join(base, "x", "keep"),             // v/../x, s/../x
		filepath.Join(base, "v", "a", "b", "keep"),   // v/a/b
		filepath.Join(base, "s", "a", "b", "keep"),   // s/a/b
		filepath.Join(base, "v", ".tmp-y", "keep"),   // a temporary directory
		filepath.Join(outside, "target", "keep"),     // behind a symlink
		filepath.Join(base, ".switchyard", "keep"),   // metadata
		filepath.Join(base, "v", "..", "v2", "keep"), // sibling
	}
	for _, v := range victims {
		dirvoltest.WriteFile(t, v, "precious", 0o644)
	}
	if err := os.Symlink(filepath.Join(outside, "target"), filepath.Join(base, "v", "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "target"), filepath.Join(base, "s", "link")); err != nil {
		t.Fatal(err)
	}

	ids := []string{"link", "../x", "a/b", "..", ".", "../v2", ".tmp-y", "x\x00", "/etc", "link/keep", "snapshot_driver=filecopy&snapshot_id=..%2Fx"}
	for _, id := range ids {
		t.Run(fmt.Sprintf("%q", id), func(t *testing.T) {
			_, err := d.ControllerGetVolume(ctx, &csi.ControllerGetVolumeRequest{VolumeId: id})
			dirvoltest.WantCode(t, err, codes.NotFound)
			_, err = d.ValidateVolumeCapabilities(ctx, &csi.ValidateVolumeCapabilitiesRequest{VolumeId: id, VolumeCapabilities: dirvoltest.RWO()})
			dirvoltest.WantCode(t, err, codes.NotFound)
			_, err = d.ControllerExpandVolume(ctx, &csi.ControllerExpandVolumeRequest{VolumeId: id, CapacityRange: &csi.CapacityRange{RequiredBytes: gib}})
			dirvoltest.WantCode(t, err, codes.NotFound)
			_, err = d.CreateVolume(ctx, &csi.CreateVolumeRequest{Name: "clone", VolumeCapabilities: dirvoltest.RWO(), VolumeContentSource: dirvoltest.FromVolume(id)})
			dirvoltest.WantCode(t, err, codes.NotFound)
			_, err = d.CreateVolume(ctx, &csi.CreateVolumeRequest{Name: "restore", VolumeCapabilities: dirvoltest.RWO(), VolumeContentSource: dirvoltest.FromSnapshot(id)})
			dirvoltest.WantCode(t, err, codes.NotFound)
			_, err = d.CreateSnapshot(ctx, &csi.CreateSnapshotRequest{Name: "snap", SourceVolumeId: id})
			dirvoltest.WantCode(t, err, codes.NotFound)
			_, err = d.GetSnapshot(ctx, &csi.GetSnapshotRequest{SnapshotId: id})
			dirvoltest.WantCode(t, err, codes.NotFound)
			if resp, err := d.ListSnapshots(ctx, &csi.ListSnapshotsRequest{SnapshotId: id}); err != nil || len(resp.GetEntries()) != 0 {
				t.Errorf("ListSnapshots = %v, %v; want an empty list", resp, err)
			}
			// deleting what cannot be a volume succeeds without touching
			// anything (a symlink named like a volume: the link only)
			if _, err := d.DeleteVolume(ctx, &csi.DeleteVolumeRequest{VolumeId: id}); err != nil {
				t.Errorf("DeleteVolume: %v", err)
			}
			if _, err := d.DeleteSnapshot(ctx, &csi.DeleteSnapshotRequest{SnapshotId: id}); err != nil {
				t.Errorf("DeleteSnapshot: %v", err)
			}
		})
	}
	for _, v := range victims {
		if data, err := os.ReadFile(v); err != nil || string(data) != "precious" {
			t.Errorf("%s was touched: %q, %v", v, data, err)
		}
	}
	for _, dir := range []string{"v", "s"} {
		for _, name := range dirvoltest.DirEntries(t, filepath.Join(base, dir)) {
			if name == "clone" || name == "restore" || name == "link" {
				t.Errorf("%s/%s exists after calls that had to fail", dir, name)
			}
		}
	}
}

func TestControllerExpandVolume(t *testing.T) {
	d, _ := newTestDriver(t, nil)
	dirvoltest.MustCreate(t, d, dirvoltest.CreateReq("pvc-1", gib))
	tests := []struct {
		name string
		cr   *csi.CapacityRange
		want int64
		code codes.Code
	}{
		{name: "grow", cr: &csi.CapacityRange{RequiredBytes: 2 * gib}, want: 2 * gib},
		{name: "same", cr: &csi.CapacityRange{RequiredBytes: 2 * gib}, want: 2 * gib},
		{name: "smaller keeps size", cr: &csi.CapacityRange{RequiredBytes: gib}, want: 2 * gib},
		{name: "limit only", cr: &csi.CapacityRange{LimitBytes: 3 * gib}, want: 3 * gib},
		{name: "limit below size", cr: &csi.CapacityRange{RequiredBytes: gib, LimitBytes: gib + 1}, code: codes.OutOfRange},
		{name: "no range", cr: nil, code: codes.InvalidArgument},
		{name: "empty range", cr: &csi.CapacityRange{}, code: codes.InvalidArgument},
		{name: "required above limit", cr: &csi.CapacityRange{RequiredBytes: 5, LimitBytes: 4}, code: codes.OutOfRange},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := d.ControllerExpandVolume(ctx, &csi.ControllerExpandVolumeRequest{VolumeId: "pvc-1", CapacityRange: tc.cr})
			dirvoltest.WantCode(t, err, tc.code)
			if err != nil {
				return
			}
			if resp.GetCapacityBytes() != tc.want || resp.GetNodeExpansionRequired() {
				t.Errorf("response = %v, want capacity %d without node expansion", resp, tc.want)
			}
			got, err := d.ControllerGetVolume(ctx, &csi.ControllerGetVolumeRequest{VolumeId: "pvc-1"})
			if err != nil || got.GetVolume().GetCapacityBytes() != tc.want {
				t.Errorf("recorded capacity = %d, %v; want %d", got.GetVolume().GetCapacityBytes(), err, tc.want)
			}
		})
	}
	_, err := d.ControllerExpandVolume(ctx, &csi.ControllerExpandVolumeRequest{VolumeId: "nope", CapacityRange: &csi.CapacityRange{RequiredBytes: gib}})
	dirvoltest.WantCode(t, err, codes.NotFound)
	_, err = d.ControllerExpandVolume(ctx, &csi.ControllerExpandVolumeRequest{CapacityRange: &csi.CapacityRange{RequiredBytes: gib}})
	dirvoltest.WantCode(t, err, codes.InvalidArgument)
	// the recorded capacity now decides whether a repeated CreateVolume matches
	_, err = d.CreateVolume(ctx, &csi.CreateVolumeRequest{Name: "pvc-1", VolumeCapabilities: dirvoltest.RWO(), CapacityRange: &csi.CapacityRange{LimitBytes: gib}})
	dirvoltest.WantCode(t, err, codes.AlreadyExists)
}

func TestControllerGetVolume(t *testing.T) {
	d, _ := newTestDriver(t, nil)
	created := dirvoltest.MustCreate(t, d, dirvoltest.CreateReq("pvc-1", gib))
	resp, err := d.ControllerGetVolume(ctx, &csi.ControllerGetVolumeRequest{VolumeId: "pvc-1"})
	if err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(resp.GetVolume(), created) || resp.GetStatus() == nil {
		t.Errorf("ControllerGetVolume = %v, want %v with a status", resp, created)
	}
	_, err = d.ControllerGetVolume(ctx, &csi.ControllerGetVolumeRequest{VolumeId: "pvc-2"})
	dirvoltest.WantCode(t, err, codes.NotFound, "pvc-2")
	_, err = d.ControllerGetVolume(ctx, &csi.ControllerGetVolumeRequest{})
	dirvoltest.WantCode(t, err, codes.InvalidArgument)
}

func TestControllerGetCapabilities(t *testing.T) {
	d, _ := newTestDriver(t, nil)
	resp, err := d.ControllerGetCapabilities(ctx, &csi.ControllerGetCapabilitiesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range resp.GetCapabilities() {
		got = append(got, c.GetRpc().GetType().String())
	}
	slices.Sort(got)
	want := []string{"CLONE_VOLUME", "CREATE_DELETE_SNAPSHOT", "CREATE_DELETE_VOLUME", "EXPAND_VOLUME", "GET_CAPACITY",
		"GET_SNAPSHOT", "GET_VOLUME", "LIST_SNAPSHOTS", "LIST_VOLUMES", "SINGLE_NODE_MULTI_WRITER"}
	if !slices.Equal(got, want) {
		t.Errorf("capabilities = %v, want %v", got, want)
	}
}

func TestListVolumes(t *testing.T) {
	d, base := newTestDriver(t, nil)
	names := []string{"pvc-e", "pvc-a", "pvc-d", "pvc-b", "pvc-c"}
	for _, n := range names {
		dirvoltest.MustCreate(t, d, dirvoltest.CreateReq(n, gib))
	}
	// neither a file nor a temporary directory is a volume
	dirvoltest.WriteFile(t, filepath.Join(base, "v", "stray-file"), "", 0o644)
	dirvoltest.WriteFile(t, filepath.Join(base, "v", ".tmp-pvc-f", "x"), "", 0o644)

	var listed []string
	token := ""
	for pages := 0; ; pages++ {
		resp, err := d.ListVolumes(ctx, &csi.ListVolumesRequest{MaxEntries: 2, StartingToken: token})
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.GetEntries()) > 2 {
			t.Fatalf("page of %d entries, max 2", len(resp.GetEntries()))
		}
		for _, e := range resp.GetEntries() {
			listed = append(listed, e.GetVolume().GetVolumeId())
			if e.GetVolume().GetCapacityBytes() != gib || e.GetVolume().GetVolumeContext()["path"] == "" {
				t.Errorf("entry %v lacks capacity or context", e.GetVolume())
			}
		}
		token = resp.GetNextToken()
		if token == "" {
			break
		}
		if pages > 5 {
			t.Fatal("pagination does not end")
		}
	}
	want := slices.Sorted(slices.Values(names))
	if !slices.Equal(listed, want) {
		t.Errorf("listed %v, want %v", listed, want)
	}

	// a token stays valid when the entries before it are deleted
	first, err := d.ListVolumes(ctx, &csi.ListVolumesRequest{MaxEntries: 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range first.GetEntries() {
		if _, err := d.DeleteVolume(ctx, &csi.DeleteVolumeRequest{VolumeId: e.GetVolume().GetVolumeId()}); err != nil {
			t.Fatal(err)
		}
	}
	rest, err := d.ListVolumes(ctx, &csi.ListVolumesRequest{StartingToken: first.GetNextToken()})
	if err != nil || len(rest.GetEntries()) != 3 || rest.GetEntries()[0].GetVolume().GetVolumeId() != "pvc-c" {
		t.Errorf("after deleting the first page: %v, %v", rest, err)
	}

	for _, tok := range []string{"invalid-token", "from:../x", "from:", "pvc-c"} {
		_, err := d.ListVolumes(ctx, &csi.ListVolumesRequest{StartingToken: tok})
		dirvoltest.WantCode(t, err, codes.Aborted)
	}
	_, err = d.ListVolumes(ctx, &csi.ListVolumesRequest{MaxEntries: -1})
	dirvoltest.WantCode(t, err, codes.InvalidArgument)
}

func TestListVolumesEmpty(t *testing.T) {
	d, _ := newTestDriver(t, nil)
	resp, err := d.ListVolumes(ctx, &csi.ListVolumesRequest{})
	if err != nil || len(resp.GetEntries()) != 0 || resp.GetNextToken() != "" {
		t.Errorf("ListVolumes on a fresh base = %v, %v", resp, err)
	}
}

func TestParallelCreateVolume(t *testing.T) {
	d, base := newTestDriver(t, nil)
	dirvoltest.MustCreate(t, d, dirvoltest.CreateReq("src", gib))
	populate(t, filepath.Join(base, "v", "src"))
	const n = 32
	var wg sync.WaitGroup
	errs := make(chan error, 2*n)
	for i := range n {
		wg.Add(2)
		go func() {
			defer wg.Done()
			r := dirvoltest.CreateReq(fmt.Sprintf("pvc-%02d", i), gib)
			if i%4 == 0 { // some clones, copying while others create
				r.VolumeContentSource = dirvoltest.FromVolume("src")
			}
			if _, err := d.CreateVolume(ctx, r); err != nil {
				errs <- err
			}
		}()
		go func() { // the same name twice at once: both must get the volume
			defer wg.Done()
			if _, err := d.CreateVolume(ctx, dirvoltest.CreateReq("same", gib)); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	resp, err := d.ListVolumes(ctx, &csi.ListVolumesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.GetEntries()) != n+2 {
		t.Errorf("listed %d volumes, want %d", len(resp.GetEntries()), n+2)
	}
	if got := dirvoltest.DirEntries(t, filepath.Join(base, "v")); len(got) != n+2 {
		t.Errorf("v/ holds %d entries (%v), want %d", len(got), got, n+2)
	}
}

// One unreadable metadata file makes that object's own calls fail with a
// message naming the file, and never hides the other objects in a list.
func TestCorruptMetadata(t *testing.T) {
	d, base := newTestDriver(t, nil)
	dirvoltest.MustCreate(t, d, dirvoltest.CreateReq("pvc-1", gib))
	dirvoltest.MustCreate(t, d, dirvoltest.CreateReq("pvc-2", gib))
	dirvoltest.MustSnapshot(t, d, "snap-1", "pvc-1")
	dirvoltest.MustSnapshot(t, d, "snap-2", "pvc-1")
	dirvoltest.WriteFile(t, filepath.Join(base, ".switchyard", "volumes", "pvc-1.json"), "{trunc", 0o644)
	dirvoltest.WriteFile(t, filepath.Join(base, ".switchyard", "snapshots", "snap-1.json"), "", 0o644)

	_, err := d.ControllerGetVolume(ctx, &csi.ControllerGetVolumeRequest{VolumeId: "pvc-1"})
	dirvoltest.WantCode(t, err, codes.Internal, "pvc-1.json", "corrupt")
	vols, err := d.ListVolumes(ctx, &csi.ListVolumesRequest{})
	if err != nil || len(vols.GetEntries()) != 2 {
		t.Errorf("ListVolumes = %v, %v; want both volumes", vols, err)
	}
	snaps, err := d.ListSnapshots(ctx, &csi.ListSnapshotsRequest{})
	if err != nil || len(snaps.GetEntries()) != 1 || snaps.GetEntries()[0].GetSnapshot().GetSnapshotId() != "snap-2" {
		t.Errorf("ListSnapshots = %v, %v; want snap-2", snaps, err)
	}
	// deleting repairs: the corrupt file goes with the volume
	if _, err := d.DeleteVolume(ctx, &csi.DeleteVolumeRequest{VolumeId: "pvc-1"}); err != nil {
		t.Fatal(err)
	}
	if dirvoltest.Exists(t, filepath.Join(base, ".switchyard", "volumes", "pvc-1.json")) {
		t.Error("the corrupt metadata survived DeleteVolume")
	}
}
