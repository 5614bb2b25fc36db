package dirvol

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	"github.com/switchyard-csi/switchyard/driver/dirvol/dirvoltest"
)

// tick makes the clock advance one second per reading, so a creation time
// that is taken again instead of recorded shows.
func tick(d *Driver) {
	clock := time.Date(2026, 1, 2, 3, 4, 5, 600, time.UTC)
	d.Clock = func() time.Time { clock = clock.Add(time.Second); return clock }
}

func TestCreateSnapshot(t *testing.T) {
	d, base := newTestDriver(t, nil)
	tick(d)
	dirvoltest.MustCreate(t, d, dirvoltest.CreateReq("pvc-1", gib))
	dirvoltest.MustCreate(t, d, dirvoltest.CreateReq("pvc-2", gib))
	dirvoltest.WriteFile(t, filepath.Join(base, "v", "pvc-1", "data"), strings.Repeat("d", 64<<10), 0o644)

	snap := dirvoltest.MustSnapshot(t, d, "snap-1", "pvc-1")
	if snap.GetSnapshotId() != "snap-1" || snap.GetSourceVolumeId() != "pvc-1" || !snap.GetReadyToUse() {
		t.Errorf("snapshot = %v", snap)
	}
	if snap.GetSizeBytes() < 64<<10 {
		t.Errorf("size = %d, want at least the 64 KiB of data", snap.GetSizeBytes())
	}
	// the third clock reading: each CreateVolume took one
	if want := time.Date(2026, 1, 2, 3, 4, 8, 600, time.UTC); !snap.GetCreationTime().AsTime().Equal(want) {
		t.Errorf("creation time = %v, want %v", snap.GetCreationTime().AsTime(), want)
	}
	if data, err := os.ReadFile(filepath.Join(base, "s", "snap-1", "data")); err != nil || len(data) != 64<<10 {
		t.Errorf("snapshot content: %d bytes, %v", len(data), err)
	}

	again := dirvoltest.MustSnapshot(t, d, "snap-1", "pvc-1")
	if !proto.Equal(again, snap) {
		t.Errorf("repeat = %v, want the same snapshot %v", again, snap)
	}

	tests := []struct {
		name      string
		req       *csi.CreateSnapshotRequest
		code      codes.Code
		fragments []string
	}{
		{name: "same name, other source", req: &csi.CreateSnapshotRequest{Name: "snap-1", SourceVolumeId: "pvc-2"}, code: codes.AlreadyExists, fragments: []string{"pvc-1", "pvc-2"}},
		{name: "unknown source", req: &csi.CreateSnapshotRequest{Name: "snap-2", SourceVolumeId: "pvc-9"}, code: codes.NotFound, fragments: []string{"pvc-9"}},
		{name: "no name", req: &csi.CreateSnapshotRequest{SourceVolumeId: "pvc-1"}, code: codes.InvalidArgument},
		{name: "no source", req: &csi.CreateSnapshotRequest{Name: "snap-2"}, code: codes.InvalidArgument},
		{name: "bad name", req: &csi.CreateSnapshotRequest{Name: "snap/2", SourceVolumeId: "pvc-1"}, code: codes.InvalidArgument, fragments: []string{`"/"`}},
		{name: "restic class", req: &csi.CreateSnapshotRequest{Name: "snap-2", SourceVolumeId: "pvc-1", Parameters: map[string]string{"driver": "restic"}}, code: codes.InvalidArgument, fragments: []string{"restic", "filecopy"}},
		{name: "filecopy class", req: &csi.CreateSnapshotRequest{Name: "snap-3", SourceVolumeId: "pvc-1", Parameters: map[string]string{"driver": "filecopy"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := d.CreateSnapshot(ctx, tc.req)
			dirvoltest.WantCode(t, err, tc.code, tc.fragments...)
		})
	}
	if got := dirvoltest.DirEntries(t, filepath.Join(base, "s")); !slices.Equal(got, []string{"snap-1", "snap-3"}) {
		t.Errorf("s/ holds %q", got)
	}
}

func TestSnapshotIsIndependent(t *testing.T) {
	d, base := newTestDriver(t, nil)
	dirvoltest.MustCreate(t, d, dirvoltest.CreateReq("pvc-1", gib))
	file := filepath.Join(base, "v", "pvc-1", "data")
	dirvoltest.WriteFile(t, file, "before", 0o644)
	dirvoltest.MustSnapshot(t, d, "snap-1", "pvc-1")
	dirvoltest.WriteFile(t, file, "after", 0o644)

	vol := dirvoltest.MustCreate(t, d, &csi.CreateVolumeRequest{Name: "pvc-2", VolumeCapabilities: dirvoltest.RWO(), VolumeContentSource: dirvoltest.FromSnapshot("snap-1")})
	if data, err := os.ReadFile(filepath.Join(base, "v", vol.GetVolumeId(), "data")); err != nil || string(data) != "before" {
		t.Errorf("restored %q, %v; want the content at snapshot time", data, err)
	}
}

func TestLongSnapshotName(t *testing.T) {
	d, base := newTestDriver(t, nil)
	dirvoltest.MustCreate(t, d, dirvoltest.CreateReq("pvc-1", gib))
	name := "snapshot-" + strings.Repeat("9", 90)
	snap := dirvoltest.MustSnapshot(t, d, name, "pvc-1")
	if id := snap.GetSnapshotId(); len(id) != MaxIDLen || id != name[:31]+"-"+md5hex(name) || !dirvoltest.Exists(t, filepath.Join(base, "s", id)) {
		t.Errorf("snapshot id %q (%d bytes)", id, len(id))
	}
	if again := dirvoltest.MustSnapshot(t, d, name, "pvc-1"); again.GetSnapshotId() != snap.GetSnapshotId() {
		t.Errorf("repeat id %q", again.GetSnapshotId())
	}
}

func TestDeleteSnapshot(t *testing.T) {
	d, base := newTestDriver(t, nil)
	dirvoltest.MustCreate(t, d, dirvoltest.CreateReq("pvc-1", gib))
	dirvoltest.MustSnapshot(t, d, "snap-1", "pvc-1")
	for i := range 2 {
		if _, err := d.DeleteSnapshot(ctx, &csi.DeleteSnapshotRequest{SnapshotId: "snap-1"}); err != nil {
			t.Fatalf("DeleteSnapshot #%d: %v", i+1, err)
		}
	}
	if got := dirvoltest.DirEntries(t, filepath.Join(base, "s")); len(got) != 0 {
		t.Errorf("s/ holds %q", got)
	}
	if dirvoltest.Exists(t, filepath.Join(base, ".switchyard", "snapshots", "snap-1.json")) {
		t.Error("metadata left behind")
	}
	if !dirvoltest.Exists(t, filepath.Join(base, "v", "pvc-1")) {
		t.Error("deleting the snapshot removed its volume")
	}
	_, err := d.DeleteSnapshot(ctx, &csi.DeleteSnapshotRequest{})
	dirvoltest.WantCode(t, err, codes.InvalidArgument)
	_, err = d.DeleteSnapshot(ctx, &csi.DeleteSnapshotRequest{SnapshotId: "snapshot_driver=kopia&snapshot_id=k1"})
	dirvoltest.WantCode(t, err, codes.FailedPrecondition, "kopia")
}

// Snapshots cut by democratic-csi live in s/<volume>-<name>, carry no
// metadata and are named snapshot_driver=filecopy&snapshot_id=<dir>.
func TestLegacySnapshots(t *testing.T) {
	d, base := newTestDriver(t, nil)
	dir := "pvc-1-snapshot-abc"
	legacyID := "snapshot_driver=filecopy&snapshot_id=" + dir
	dirvoltest.WriteFile(t, filepath.Join(base, "s", dir, "data"), "from democratic-csi", 0o644)
	mtime := time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)
	if err := os.Chtimes(filepath.Join(base, "s", dir), mtime, mtime); err != nil {
		t.Fatal(err)
	}

	vol := dirvoltest.MustCreate(t, d, &csi.CreateVolumeRequest{Name: "restored", VolumeCapabilities: dirvoltest.RWO(), VolumeContentSource: dirvoltest.FromSnapshot(legacyID)})
	if data, err := os.ReadFile(filepath.Join(base, "v", vol.GetVolumeId(), "data")); err != nil || string(data) != "from democratic-csi" {
		t.Errorf("restore from a legacy id: %q, %v", data, err)
	}
	if !proto.Equal(vol.GetContentSource(), dirvoltest.FromSnapshot(legacyID)) {
		t.Errorf("content source = %v", vol.GetContentSource())
	}

	got, err := d.GetSnapshot(ctx, &csi.GetSnapshotRequest{SnapshotId: legacyID})
	if err != nil {
		t.Fatal(err)
	}
	if s := got.GetSnapshot(); s.GetSnapshotId() != legacyID || !s.GetReadyToUse() || !s.GetCreationTime().AsTime().Equal(mtime) {
		t.Errorf("GetSnapshot = %v", s)
	}
	list, err := d.ListSnapshots(ctx, &csi.ListSnapshotsRequest{})
	if err != nil || len(list.GetEntries()) != 1 || list.GetEntries()[0].GetSnapshot().GetSnapshotId() != legacyID {
		t.Errorf("ListSnapshots = %v, %v; want the legacy snapshot under democratic-csi's id", list, err)
	}
	list, err = d.ListSnapshots(ctx, &csi.ListSnapshotsRequest{SnapshotId: legacyID})
	if err != nil || len(list.GetEntries()) != 1 {
		t.Errorf("ListSnapshots by legacy id = %v, %v", list, err)
	}
	// the plain directory name names it too (democratic-csi reads an id
	// without snapshot_driver as a filecopy directory)
	if _, err := d.GetSnapshot(ctx, &csi.GetSnapshotRequest{SnapshotId: dir}); err != nil {
		t.Errorf("GetSnapshot by directory name: %v", err)
	}
	_, err = d.CreateSnapshot(ctx, &csi.CreateSnapshotRequest{Name: dir, SourceVolumeId: "restored"})
	dirvoltest.WantCode(t, err, codes.AlreadyExists, "not cut by switchyard")

	if _, err := d.DeleteSnapshot(ctx, &csi.DeleteSnapshotRequest{SnapshotId: legacyID}); err != nil {
		t.Fatal(err)
	}
	if dirvoltest.Exists(t, filepath.Join(base, "s", dir)) {
		t.Error("DeleteSnapshot with a legacy id left the directory")
	}
}

func TestListSnapshots(t *testing.T) {
	d, base := newTestDriver(t, nil)
	for _, v := range []string{"vol-a", "vol-b", "vol-c"} {
		dirvoltest.MustCreate(t, d, dirvoltest.CreateReq(v, gib))
	}
	snaps := map[string]string{"s1": "vol-a", "s2": "vol-b", "s3": "vol-a", "s4": "vol-a", "s5": "vol-b"}
	for name, src := range snaps {
		dirvoltest.MustSnapshot(t, d, name, src)
	}
	dirvoltest.WriteFile(t, filepath.Join(base, "s", ".tmp-s6", "x"), "", 0o644)

	// collect follows every page and checks each entry against snaps
	collect := func(t *testing.T, req *csi.ListSnapshotsRequest) []string {
		t.Helper()
		var ids []string
		for pages := 0; ; pages++ {
			resp, err := d.ListSnapshots(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			if req.GetMaxEntries() > 0 && len(resp.GetEntries()) > int(req.GetMaxEntries()) {
				t.Fatalf("page of %d entries, max %d", len(resp.GetEntries()), req.GetMaxEntries())
			}
			for _, e := range resp.GetEntries() {
				s := e.GetSnapshot()
				if snaps[s.GetSnapshotId()] != s.GetSourceVolumeId() || !s.GetReadyToUse() || s.GetCreationTime() == nil {
					t.Errorf("entry %v", s)
				}
				ids = append(ids, s.GetSnapshotId())
			}
			if resp.GetNextToken() == "" {
				return ids
			}
			if pages > 10 {
				t.Fatal("pagination does not end")
			}
			req = proto.Clone(req).(*csi.ListSnapshotsRequest)
			req.StartingToken = resp.GetNextToken()
		}
	}
	tests := []struct {
		name string
		req  *csi.ListSnapshotsRequest
		want []string
	}{
		{name: "all", req: &csi.ListSnapshotsRequest{}, want: []string{"s1", "s2", "s3", "s4", "s5"}},
		{name: "pages of one", req: &csi.ListSnapshotsRequest{MaxEntries: 1}, want: []string{"s1", "s2", "s3", "s4", "s5"}},
		{name: "pages of two", req: &csi.ListSnapshotsRequest{MaxEntries: 2}, want: []string{"s1", "s2", "s3", "s4", "s5"}},
		{name: "by source", req: &csi.ListSnapshotsRequest{SourceVolumeId: "vol-a"}, want: []string{"s1", "s3", "s4"}},
		{name: "by source, paged", req: &csi.ListSnapshotsRequest{SourceVolumeId: "vol-a", MaxEntries: 2}, want: []string{"s1", "s3", "s4"}},
		{name: "source without snapshots", req: &csi.ListSnapshotsRequest{SourceVolumeId: "vol-c"}},
		{name: "unknown source", req: &csi.ListSnapshotsRequest{SourceVolumeId: "vol-z"}},
		{name: "by id", req: &csi.ListSnapshotsRequest{SnapshotId: "s2"}, want: []string{"s2"}},
		{name: "by id and its source", req: &csi.ListSnapshotsRequest{SnapshotId: "s2", SourceVolumeId: "vol-b"}, want: []string{"s2"}},
		{name: "by id and another source", req: &csi.ListSnapshotsRequest{SnapshotId: "s2", SourceVolumeId: "vol-a"}},
		{name: "unknown id", req: &csi.ListSnapshotsRequest{SnapshotId: "s9"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := collect(t, tc.req); !slices.Equal(got, tc.want) {
				t.Errorf("listed %v, want %v", got, tc.want)
			}
		})
	}
	for _, tok := range []string{"invalid-token", "s2", "from:a/b"} {
		_, err := d.ListSnapshots(ctx, &csi.ListSnapshotsRequest{StartingToken: tok})
		dirvoltest.WantCode(t, err, codes.Aborted)
	}
	_, err := d.ListSnapshots(ctx, &csi.ListSnapshotsRequest{MaxEntries: -3})
	dirvoltest.WantCode(t, err, codes.InvalidArgument)
}

func TestGetSnapshot(t *testing.T) {
	d, _ := newTestDriver(t, nil)
	dirvoltest.MustCreate(t, d, dirvoltest.CreateReq("pvc-1", gib))
	snap := dirvoltest.MustSnapshot(t, d, "snap-1", "pvc-1")
	got, err := d.GetSnapshot(ctx, &csi.GetSnapshotRequest{SnapshotId: "snap-1"})
	if err != nil || !proto.Equal(got.GetSnapshot(), snap) {
		t.Errorf("GetSnapshot = %v, %v; want %v", got, err, snap)
	}
	_, err = d.GetSnapshot(ctx, &csi.GetSnapshotRequest{SnapshotId: "snap-2"})
	dirvoltest.WantCode(t, err, codes.NotFound, "snap-2")
	_, err = d.GetSnapshot(ctx, &csi.GetSnapshotRequest{})
	dirvoltest.WantCode(t, err, codes.InvalidArgument)
	_, err = d.GetSnapshot(ctx, &csi.GetSnapshotRequest{SnapshotId: "snapshot_driver=restic&snapshot_id=r1"})
	dirvoltest.WantCode(t, err, codes.NotFound)
}
