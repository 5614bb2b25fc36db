package engine_test

// Behaviour tests of the engine over the real zfs command line: the engine
// drives the simulated ZFS host (lab/zfshost) over SSH through
// engine.NewCLIHost, with a trivial sharer, so the snapshot, clone, list,
// capacity, expand and validate paths run here and not only through the
// backends' tests.

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/switchyard-csi/switchyard/driver/backend"
	"github.com/switchyard-csi/switchyard/driver/config"
	"github.com/switchyard-csi/switchyard/driver/volumecontext"
	"github.com/switchyard-csi/switchyard/driver/zfs"
	"github.com/switchyard-csi/switchyard/driver/zfs/engine"
	"github.com/switchyard-csi/switchyard/lab/zfshost"
)

var ctx = context.Background()

const mib = 1 << 20

// simPlatform is a CLIHost with a sharer that shares nothing: its
// volume_context is an nfs one naming the mountpoint (or the zvol device).
type simPlatform struct {
	*engine.CLIHost
}

func (*simPlatform) Sharer() engine.Sharer { return nfsSharer{} }
func (*simPlatform) MinQuota() int64       { return 0 }

type nfsSharer struct{}

func (nfsSharer) Create(_ context.Context, r engine.ShareRequest) (map[string]string, []zfs.Prop, error) {
	share := r.Mountpoint
	if share == "" {
		share = "/dev/zvol/" + r.Dataset
	}
	return volumecontext.NFS{Server: "127.0.0.1", Share: share}.Encode(), nil, nil
}
func (nfsSharer) Remove(context.Context, string, zfs.Properties) error { return nil }
func (nfsSharer) AssetProps() []string                                 { return nil }

// simEngine is an engine over a simulated host, and where its volumes and
// detached snapshots go.
type simEngine struct {
	*engine.Engine
	host           *zfshost.Host
	parent, detach string
	block          bool
}

func startHost(t *testing.T) *zfshost.Host {
	t.Helper()
	h, err := zfshost.Start(zfshost.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

// newSimEngine builds the engine for driver over h with volumes under
// tank/k8s/<name>; edit, when set, rewrites the YAML config first.
func newSimEngine(t *testing.T, h *zfshost.Host, driver, name string, edit func(string) string) *simEngine {
	t.Helper()
	return newSimEngineLogging(t, h, driver, name, edit, slog.New(slog.NewTextHandler(io.Discard, nil)))
}

// newSimEngineLogging is newSimEngine with the engine logging to logger.
func newSimEngineLogging(t *testing.T, h *zfshost.Host, driver, name string, edit func(string) string, logger *slog.Logger) *simEngine {
	t.Helper()
	yaml := h.DriverConfig(driver, name, "")
	if edit != nil {
		yaml = edit(yaml)
	}
	tree, err := config.Parse([]byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	r := config.NewReader(tree)
	cli := engine.ReadCLI(r, true)
	if p := r.Problems(); len(p) > 0 {
		t.Fatalf("config problems: %v", p)
	}
	opts := backend.Options{File: "test.yaml", Config: tree, Logger: logger}
	cliHost, err := engine.NewCLIHost(opts, driver, cli)
	if err != nil {
		t.Fatal(err)
	}
	block := driver == "zfs-generic-iscsi" || driver == "zfs-generic-nvmeof"
	fsTypes := engine.NFSFSTypes
	if block {
		fsTypes = engine.BlockFSTypes
	}
	e, err := engine.New(engine.Options{Options: opts, Driver: driver, Block: block, FSTypes: fsTypes, Platform: &simPlatform{cliHost}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return &simEngine{Engine: e, host: h, parent: h.Pool + "/k8s/" + name, detach: h.Pool + "/k8s/" + name + "-snapshots", block: block}
}

// zfsLines runs zfs on the host's model and returns its output lines (none
// when the dataset does not exist).
func zfsLines(t *testing.T, h *zfshost.Host, args ...string) []string {
	t.Helper()
	var out, errb strings.Builder
	if code := h.Model.ZFS(args, nil, &out, &errb); code != 0 {
		if strings.Contains(errb.String(), "does not exist") {
			return nil
		}
		t.Fatalf("zfs %v: %d %s", args, code, errb.String())
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		if l != "" {
			lines = append(lines, l)
		}
	}
	return lines
}

func zfsGet(t *testing.T, h *zfshost.Host, prop, ds string) string {
	t.Helper()
	return strings.Join(zfsLines(t, h, "get", "-Hp", "-o", "value", prop, ds), "")
}

func capability(mode csi.VolumeCapability_AccessMode_Mode, block bool, fsType string) *csi.VolumeCapability {
	c := &csi.VolumeCapability{AccessMode: &csi.VolumeCapability_AccessMode{Mode: mode}}
	if block {
		c.AccessType = &csi.VolumeCapability_Block{Block: &csi.VolumeCapability_BlockVolume{}}
	} else {
		c.AccessType = &csi.VolumeCapability_Mount{Mount: &csi.VolumeCapability_MountVolume{FsType: fsType}}
	}
	return c
}

const sngw = csi.VolumeCapability_AccessMode_SINGLE_NODE_WRITER

func (s *simEngine) createVolume(t *testing.T, name string, size int64, src *csi.VolumeContentSource) (*csi.Volume, error) {
	t.Helper()
	resp, err := s.CreateVolume(ctx, &csi.CreateVolumeRequest{Name: name,
		VolumeCapabilities:  []*csi.VolumeCapability{capability(sngw, s.block, "")},
		CapacityRange:       &csi.CapacityRange{RequiredBytes: size},
		VolumeContentSource: src})
	return resp.GetVolume(), err
}

func (s *simEngine) mustCreateVolume(t *testing.T, name string, size int64, src *csi.VolumeContentSource) *csi.Volume {
	t.Helper()
	v, err := s.createVolume(t, name, size, src)
	if err != nil {
		t.Fatalf("CreateVolume %s: %v", name, err)
	}
	return v
}

func (s *simEngine) mustDeleteVolume(t *testing.T, id string) {
	t.Helper()
	if _, err := s.DeleteVolume(ctx, &csi.DeleteVolumeRequest{VolumeId: id}); err != nil {
		t.Fatalf("DeleteVolume %s: %v", id, err)
	}
}

func (s *simEngine) snapshot(name, src string, params map[string]string) (*csi.Snapshot, error) {
	resp, err := s.CreateSnapshot(ctx, &csi.CreateSnapshotRequest{Name: name, SourceVolumeId: src, Parameters: params})
	return resp.GetSnapshot(), err
}

func (s *simEngine) mustDeleteSnapshot(t *testing.T, id string) {
	t.Helper()
	if _, err := s.DeleteSnapshot(ctx, &csi.DeleteSnapshotRequest{SnapshotId: id}); err != nil {
		t.Fatalf("DeleteSnapshot %s: %v", id, err)
	}
}

// assertEmpty checks that nothing but the parents is left on the host.
func (s *simEngine) assertEmpty(t *testing.T) {
	t.Helper()
	for _, root := range []string{s.parent, s.detach} {
		left := zfsLines(t, s.host, "list", "-H", "-r", "-t", "all", "-o", "name", root)
		if len(left) > 1 || (len(left) == 1 && left[0] != root) {
			t.Errorf("left under %s: %v", root, left)
		}
	}
}

func wantCode(t *testing.T, what string, err error, want codes.Code) {
	t.Helper()
	if status.Code(err) != want {
		t.Errorf("%s: got %v, want %v", what, err, want)
	}
}

func snapshotSource(id string) *csi.VolumeContentSource {
	return &csi.VolumeContentSource{Type: &csi.VolumeContentSource_Snapshot{Snapshot: &csi.VolumeContentSource_SnapshotSource{SnapshotId: id}}}
}

func volumeSource(id string) *csi.VolumeContentSource {
	return &csi.VolumeContentSource{Type: &csi.VolumeContentSource_Volume{Volume: &csi.VolumeContentSource_VolumeSource{VolumeId: id}}}
}

func snapshotIDs(entries []*csi.ListSnapshotsResponse_Entry) []string {
	var ids []string
	for _, e := range entries {
		ids = append(ids, e.GetSnapshot().GetSnapshotId())
	}
	return ids
}

var drivers = []struct {
	driver string
	block  bool
}{
	{"zfs-generic-nfs", false},
	{"zfs-generic-iscsi", true},
}

// TestSimSnapshots creates, lists, reads, clones and deletes snapshots,
// attached and detached, on a filesystem and a zvol driver.
func TestSimSnapshots(t *testing.T) {
	for _, d := range drivers {
		t.Run(d.driver, func(t *testing.T) {
			h := startHost(t)
			s := newSimEngine(t, h, d.driver, "v", nil)
			s.mustCreateVolume(t, "vol-a", mib, nil)
			s.mustCreateVolume(t, "vol-b", 2*mib, nil)

			// Create, and again: the same snapshot.
			snap, err := s.snapshot("snap-1", "vol-a", nil)
			if err != nil {
				t.Fatal(err)
			}
			if snap.GetSnapshotId() != "vol-a@snap-1" || snap.GetSourceVolumeId() != "vol-a" || !snap.GetReadyToUse() || snap.GetCreationTime().GetSeconds() <= 0 {
				t.Fatalf("snapshot %+v", snap)
			}
			if d.block && snap.GetSizeBytes() != mib {
				t.Errorf("zvol snapshot size %d, want %d", snap.GetSizeBytes(), mib)
			}
			if got := zfsGet(t, h, "democratic-csi:csi_snapshot_name", s.parent+"/vol-a@snap-1"); got != "snap-1" {
				t.Errorf("snapshot name property %q", got)
			}
			again, err := s.snapshot("snap-1", "vol-a", nil)
			if err != nil || again.GetSnapshotId() != snap.GetSnapshotId() || again.GetCreationTime().GetSeconds() != snap.GetCreationTime().GetSeconds() {
				t.Fatalf("repeated CreateSnapshot: %+v %v", again, err)
			}
			if _, err := s.snapshot("snap-2", "vol-b", nil); err != nil {
				t.Fatal(err)
			}

			for _, tc := range []struct {
				what, name, src string
				params          map[string]string
				want            codes.Code
			}{
				{"same name, another volume", "snap-1", "vol-b", nil, codes.AlreadyExists},
				{"no name", "", "vol-a", nil, codes.InvalidArgument},
				{"no source", "snap-x", "", nil, codes.InvalidArgument},
				{"slash in name", "bad/name", "vol-a", nil, codes.InvalidArgument},
				{"at in name", "bad@name", "vol-a", nil, codes.InvalidArgument},
				{"space in name", "bad name", "vol-a", nil, codes.InvalidArgument},
				{"unknown source", "snap-x", "vol-none", nil, codes.NotFound},
				{"impossible source id", "snap-x", "../vol-a", nil, codes.NotFound},
			} {
				_, err := s.snapshot(tc.name, tc.src, tc.params)
				wantCode(t, tc.what, err, tc.want)
			}
			if got := zfsLines(t, h, "list", "-H", "-o", "name", "-t", "snapshot", "-r", s.parent); !slices.Equal(got, []string{s.parent + "/vol-a@snap-1", s.parent + "/vol-b@snap-2"}) {
				t.Errorf("snapshots on the host after the refused calls: %v", got)
			}

			// A detached snapshot is a copy under the snapshots parent; the
			// temporary snapshot it was sent from is gone.
			det, err := s.snapshot("snap-d", "vol-a", map[string]string{"detachedSnapshots": "true"})
			if err != nil {
				t.Fatal(err)
			}
			if det.GetSnapshotId() != "vol-a/snap-d" || det.GetSourceVolumeId() != "vol-a" || !det.GetReadyToUse() {
				t.Fatalf("detached snapshot %+v", det)
			}
			if got := zfsLines(t, h, "list", "-H", "-o", "name", "-r", "-t", "all", s.detach+"/vol-a"); !slices.Equal(got, []string{s.detach + "/vol-a", s.detach + "/vol-a/snap-d"}) {
				t.Errorf("detached snapshot on the host: %v", got)
			}
			if got := zfsLines(t, h, "list", "-H", "-o", "name", "-t", "snapshot", "-r", s.parent+"/vol-a"); !slices.Equal(got, []string{s.parent + "/vol-a@snap-1"}) {
				t.Errorf("snapshots of vol-a after the detached one: %v", got)
			}
			if again, err := s.snapshot("snap-d", "vol-a", map[string]string{"detachedSnapshots": "true"}); err != nil || again.GetSnapshotId() != "vol-a/snap-d" {
				t.Errorf("repeated detached CreateSnapshot: %+v %v", again, err)
			}
			_, err = s.snapshot("snap-d", "vol-b", map[string]string{"detachedSnapshots": "true"})
			wantCode(t, "detached name used by another volume", err, codes.AlreadyExists)

			// Listing.
			all := []string{"vol-a/snap-d", "vol-a@snap-1", "vol-b@snap-2"}
			for _, tc := range []struct {
				what string
				req  *csi.ListSnapshotsRequest
				want []string
			}{
				{"all", &csi.ListSnapshotsRequest{}, all},
				{"by id", &csi.ListSnapshotsRequest{SnapshotId: "vol-b@snap-2"}, []string{"vol-b@snap-2"}},
				{"by detached id", &csi.ListSnapshotsRequest{SnapshotId: "vol-a/snap-d"}, []string{"vol-a/snap-d"}},
				{"by unknown id", &csi.ListSnapshotsRequest{SnapshotId: "vol-a@nope"}, nil},
				{"by impossible id", &csi.ListSnapshotsRequest{SnapshotId: "no-separator"}, nil},
				{"by source", &csi.ListSnapshotsRequest{SourceVolumeId: "vol-a"}, []string{"vol-a/snap-d", "vol-a@snap-1"}},
				{"by unknown source", &csi.ListSnapshotsRequest{SourceVolumeId: "vol-none"}, nil},
				{"by impossible source", &csi.ListSnapshotsRequest{SourceVolumeId: "-x"}, nil},
				{"after a token", &csi.ListSnapshotsRequest{StartingToken: "after:vol-a@snap-1"}, []string{"vol-b@snap-2"}},
			} {
				resp, err := s.ListSnapshots(ctx, tc.req)
				if err != nil {
					t.Errorf("%s: %v", tc.what, err)
					continue
				}
				if got := snapshotIDs(resp.GetEntries()); !slices.Equal(got, tc.want) || resp.GetNextToken() != "" {
					t.Errorf("%s: %v (next %q), want %v", tc.what, got, resp.GetNextToken(), tc.want)
				}
			}
			var paged []string
			tok := ""
			for range 5 {
				resp, err := s.ListSnapshots(ctx, &csi.ListSnapshotsRequest{MaxEntries: 2, StartingToken: tok})
				if err != nil {
					t.Fatal(err)
				}
				if n := len(resp.GetEntries()); n == 0 || n > 2 {
					t.Fatalf("page of %d entries", n)
				}
				paged = append(paged, snapshotIDs(resp.GetEntries())...)
				if tok = resp.GetNextToken(); tok == "" {
					break
				}
			}
			if !slices.Equal(paged, all) {
				t.Errorf("paged listing %v, want %v", paged, all)
			}
			for _, tc := range []struct {
				what string
				req  *csi.ListSnapshotsRequest
				want codes.Code
			}{
				{"a token not issued", &csi.ListSnapshotsRequest{StartingToken: "garbage"}, codes.Aborted},
				{"an empty after token", &csi.ListSnapshotsRequest{StartingToken: "after:"}, codes.Aborted},
				{"negative max_entries", &csi.ListSnapshotsRequest{MaxEntries: -1}, codes.InvalidArgument},
			} {
				_, err := s.ListSnapshots(ctx, tc.req)
				wantCode(t, tc.what, err, tc.want)
			}

			// GetSnapshot.
			for _, id := range []string{"vol-a@snap-1", "vol-a/snap-d"} {
				got, err := s.GetSnapshot(ctx, &csi.GetSnapshotRequest{SnapshotId: id})
				if err != nil || got.GetSnapshot().GetSnapshotId() != id || got.GetSnapshot().GetSourceVolumeId() != "vol-a" {
					t.Errorf("GetSnapshot %s: %+v %v", id, got, err)
				}
			}
			_, err = s.GetSnapshot(ctx, &csi.GetSnapshotRequest{SnapshotId: "vol-a@nope"})
			wantCode(t, "GetSnapshot of an unknown id", err, codes.NotFound)
			_, err = s.GetSnapshot(ctx, &csi.GetSnapshotRequest{})
			wantCode(t, "GetSnapshot without an id", err, codes.InvalidArgument)

			// Volumes from the snapshots: the content source is echoed and
			// recorded.
			for _, tc := range []struct {
				name, snap string
			}{
				{"from-snap", "vol-a@snap-1"},
				{"from-detached", "vol-a/snap-d"},
			} {
				src := snapshotSource(tc.snap)
				v := s.mustCreateVolume(t, tc.name, mib, src)
				if v.GetContentSource().GetSnapshot().GetSnapshotId() != tc.snap {
					t.Errorf("%s: content source %v", tc.name, v.GetContentSource())
				}
				if origin := zfsGet(t, h, "origin", s.parent+"/"+tc.name); !strings.HasPrefix(origin, s.parent+"/vol-a@") && !strings.HasPrefix(origin, s.detach+"/vol-a/snap-d@") {
					t.Errorf("%s: origin %q", tc.name, origin)
				}
				again, err := s.createVolume(t, tc.name, mib, src)
				if err != nil || again.GetContentSource().GetSnapshot().GetSnapshotId() != tc.snap {
					t.Errorf("%s again: %v %v", tc.name, again, err)
				}
				_, err = s.createVolume(t, tc.name, mib, nil)
				wantCode(t, tc.name+" again without its source", err, codes.AlreadyExists)
				got, err := s.ControllerGetVolume(ctx, &csi.ControllerGetVolumeRequest{VolumeId: tc.name})
				if err != nil || got.GetVolume().GetContentSource().GetSnapshot().GetSnapshotId() != tc.snap {
					t.Errorf("ControllerGetVolume %s: %v %v", tc.name, got, err)
				}
			}
			_, err = s.createVolume(t, "from-nothing", mib, snapshotSource("vol-a@nope"))
			wantCode(t, "a volume from an unknown snapshot", err, codes.NotFound)
			_, err = s.createVolume(t, "from-nothing", mib, snapshotSource("not-a-snapshot-id"))
			wantCode(t, "a volume from an impossible snapshot id", err, codes.NotFound)
			if got := zfsLines(t, h, "list", "-H", "-o", "name", s.parent+"/from-nothing"); len(got) != 0 {
				t.Errorf("a refused clone left %v", got)
			}

			// A volume with a clone cannot go; its snapshot is destroyed
			// deferred and vanishes with the clone.
			_, err = s.DeleteVolume(ctx, &csi.DeleteVolumeRequest{VolumeId: "vol-a"})
			wantCode(t, "DeleteVolume of a cloned volume", err, codes.FailedPrecondition)
			s.mustDeleteSnapshot(t, "vol-a@snap-1")
			if got := zfsGet(t, h, "defer_destroy", s.parent+"/vol-a@snap-1"); got != "on" {
				t.Errorf("defer_destroy of a cloned snapshot after DeleteSnapshot: %q", got)
			}
			s.mustDeleteVolume(t, "from-snap")
			if got := zfsLines(t, h, "list", "-H", "-o", "name", "-t", "snapshot", s.parent+"/vol-a@snap-1"); len(got) != 0 {
				t.Errorf("deferred snapshot survived its clone: %v", got)
			}
			s.mustDeleteVolume(t, "vol-a")
			// The detached snapshot outlives its volume, and its clone too.
			if resp, err := s.ListSnapshots(ctx, &csi.ListSnapshotsRequest{SourceVolumeId: "vol-a"}); err != nil || !slices.Equal(snapshotIDs(resp.GetEntries()), []string{"vol-a/snap-d"}) {
				t.Errorf("snapshots of the deleted vol-a: %v %v", resp, err)
			}
			_, err = s.DeleteVolume(ctx, &csi.DeleteVolumeRequest{VolumeId: "vol-a"})
			if err != nil {
				t.Errorf("repeated DeleteVolume: %v", err)
			}
			s.mustDeleteVolume(t, "from-detached")

			// DeleteSnapshot is idempotent, and removes the detached
			// snapshot's container with it.
			for _, id := range []string{"vol-a/snap-d", "vol-a/snap-d", "vol-b@snap-2", "vol-b@snap-2", "vol-b@never", "no-separator"} {
				s.mustDeleteSnapshot(t, id)
			}
			_, err = s.DeleteSnapshot(ctx, &csi.DeleteSnapshotRequest{})
			wantCode(t, "DeleteSnapshot without an id", err, codes.InvalidArgument)
			if got := zfsLines(t, h, "list", "-H", "-o", "name", s.detach+"/vol-a"); len(got) != 0 {
				t.Errorf("detached snapshot container kept: %v", got)
			}
			if resp, err := s.ListSnapshots(ctx, &csi.ListSnapshotsRequest{}); err != nil || len(resp.GetEntries()) != 0 {
				t.Errorf("snapshots left: %v %v", resp, err)
			}
			s.mustDeleteVolume(t, "vol-b")
			s.assertEmpty(t)
		})
	}
}

// TestSimDetachedSnapshotsNeedTheirParent: without
// zfs.detachedSnapshotsDatasetParentName a detached snapshot is refused and
// ids of detached snapshots name nothing.
func TestSimDetachedSnapshotsNeedTheirParent(t *testing.T) {
	h := startHost(t)
	s := newSimEngine(t, h, "zfs-generic-nfs", "v", func(yaml string) string {
		var keep []string
		for _, l := range strings.Split(yaml, "\n") {
			if !strings.Contains(l, "detachedSnapshotsDatasetParentName") {
				keep = append(keep, l)
			}
		}
		return strings.Join(keep, "\n")
	})
	s.mustCreateVolume(t, "vol-a", mib, nil)
	_, err := s.snapshot("snap-d", "vol-a", map[string]string{"detachedSnapshots": "true"})
	wantCode(t, "a detached snapshot without its parent", err, codes.InvalidArgument)
	if _, err := s.snapshot("snap-1", "vol-a", map[string]string{"detachedSnapshots": "false"}); err != nil {
		t.Fatal(err)
	}
	resp, err := s.ListSnapshots(ctx, &csi.ListSnapshotsRequest{SourceVolumeId: "vol-a"})
	if err != nil || !slices.Equal(snapshotIDs(resp.GetEntries()), []string{"vol-a@snap-1"}) {
		t.Errorf("ListSnapshots: %v %v", resp, err)
	}
	_, err = s.GetSnapshot(ctx, &csi.GetSnapshotRequest{SnapshotId: "vol-a/snap-1"})
	wantCode(t, "GetSnapshot of a detached id", err, codes.NotFound)
	_, err = s.createVolume(t, "from-detached", mib, snapshotSource("vol-a/snap-1"))
	wantCode(t, "a volume from a detached id", err, codes.NotFound)
	s.mustDeleteSnapshot(t, "vol-a/snap-1") // names nothing: success
	s.mustDeleteSnapshot(t, "vol-a@snap-1")
	s.mustDeleteVolume(t, "vol-a")
	s.assertEmpty(t)
}

// TestSimDetachedSnapshotOfUnknownVolume: a detached snapshot of a volume
// that does not exist is NOT_FOUND and leaves nothing on the host.
func TestSimDetachedSnapshotOfUnknownVolume(t *testing.T) {
	h := startHost(t)
	s := newSimEngine(t, h, "zfs-generic-nfs", "v", nil)
	_, err := s.snapshot("snap-d", "vol-none", map[string]string{"detachedSnapshots": "true"})
	wantCode(t, "a detached snapshot of an unknown volume", err, codes.NotFound)
	if got := zfsLines(t, h, "list", "-H", "-o", "name", s.detach+"/vol-none"); len(got) != 0 {
		t.Errorf("a refused detached snapshot left %v", got)
	}
	s.assertEmpty(t)
}

// TestSimVolumeClones makes volumes from volumes: the source is echoed,
// the source volume cannot go while its clone lives, and a zvol clone
// smaller than its source is OUT_OF_RANGE and leaves nothing behind.
func TestSimVolumeClones(t *testing.T) {
	for _, d := range drivers {
		t.Run(d.driver, func(t *testing.T) {
			h := startHost(t)
			s := newSimEngine(t, h, d.driver, "v", nil)
			s.mustCreateVolume(t, "src", 2*mib, nil)

			v := s.mustCreateVolume(t, "copy", 4*mib, volumeSource("src"))
			if v.GetVolumeId() != "copy" || v.GetContentSource().GetVolume().GetVolumeId() != "src" || v.GetCapacityBytes() != 4*mib {
				t.Fatalf("clone %+v", v)
			}
			size := "refquota"
			if d.block {
				size = "volsize"
			}
			if got := zfsGet(t, h, size, s.parent+"/copy"); got != "4194304" {
				t.Errorf("%s of the clone %q", size, got)
			}
			if got := zfsGet(t, h, "democratic-csi:csi_volume_content_source_id", s.parent+"/copy"); got != "src" {
				t.Errorf("recorded content source %q", got)
			}
			again, err := s.createVolume(t, "copy", 4*mib, volumeSource("src"))
			if err != nil || again.GetContentSource().GetVolume().GetVolumeId() != "src" {
				t.Errorf("repeated clone: %v %v", again, err)
			}
			_, err = s.createVolume(t, "copy", 4*mib, volumeSource("other"))
			wantCode(t, "the same name from another source", err, codes.AlreadyExists)
			_, err = s.createVolume(t, "copy2", mib, volumeSource("src-none"))
			wantCode(t, "a clone of an unknown volume", err, codes.NotFound)
			_, err = s.createVolume(t, "copy2", mib, volumeSource("-bad"))
			wantCode(t, "a clone of an impossible volume id", err, codes.NotFound)
			_, err = s.CreateVolume(ctx, &csi.CreateVolumeRequest{Name: "copy2", VolumeCapabilities: []*csi.VolumeCapability{capability(sngw, d.block, "")},
				VolumeContentSource: &csi.VolumeContentSource{}})
			wantCode(t, "an empty content source", err, codes.InvalidArgument)

			if d.block {
				// Smaller than the source: refused, and neither the clone
				// nor the snapshot made for it is left.
				before := zfsLines(t, h, "list", "-H", "-r", "-t", "all", "-o", "name", s.parent)
				_, err := s.createVolume(t, "small", mib, volumeSource("src"))
				wantCode(t, "a zvol clone smaller than its source volume", err, codes.OutOfRange)
				if _, err := s.snapshot("snap-1", "src", nil); err != nil {
					t.Fatal(err)
				}
				_, err = s.createVolume(t, "small", mib, snapshotSource("src@snap-1"))
				wantCode(t, "a zvol clone smaller than its source snapshot", err, codes.OutOfRange)
				s.mustDeleteSnapshot(t, "src@snap-1")
				if after := zfsLines(t, h, "list", "-H", "-r", "-t", "all", "-o", "name", s.parent); !slices.Equal(after, before) {
					t.Errorf("refused clones left %v (before: %v)", after, before)
				}
			}

			_, err = s.DeleteVolume(ctx, &csi.DeleteVolumeRequest{VolumeId: "src"})
			wantCode(t, "DeleteVolume of a volume with a clone", err, codes.FailedPrecondition)
			if st, _ := status.FromError(err); !strings.Contains(st.Message(), "copy") {
				t.Errorf("the refusal does not name the clone: %v", err)
			}
			s.mustDeleteVolume(t, "copy")
			s.mustDeleteVolume(t, "src")
			s.mustDeleteVolume(t, "copy") // again: already gone
			s.assertEmpty(t)
		})
	}
}

// TestSimDetachedVolumes copies sources with zfs send | receive when the
// StorageClass asks (detachedVolumesFrom{Snapshots,Volumes}): the copy has
// no origin, no snapshot is left behind, and the source can go first.
func TestSimDetachedVolumes(t *testing.T) {
	for _, d := range drivers {
		t.Run(d.driver, func(t *testing.T) {
			h := startHost(t)
			s := newSimEngine(t, h, d.driver, "v", nil)
			s.mustCreateVolume(t, "src", mib, nil)
			if _, err := s.snapshot("snap-1", "src", nil); err != nil {
				t.Fatal(err)
			}
			for _, tc := range []struct {
				name, param string
				src         *csi.VolumeContentSource
			}{
				{"copy-of-volume", "detachedVolumesFromVolumes", volumeSource("src")},
				{"copy-of-snapshot", "detachedVolumesFromSnapshots", snapshotSource("src@snap-1")},
			} {
				req := &csi.CreateVolumeRequest{Name: tc.name, VolumeCapabilities: []*csi.VolumeCapability{capability(sngw, d.block, "")},
					CapacityRange: &csi.CapacityRange{RequiredBytes: 2 * mib}, VolumeContentSource: tc.src,
					Parameters: map[string]string{tc.param: "true"}}
				for range 2 { // idempotent
					resp, err := s.CreateVolume(ctx, req)
					if err != nil {
						t.Fatalf("%s: %v", tc.name, err)
					}
					if !proto.Equal(resp.GetVolume().GetContentSource(), tc.src) {
						t.Errorf("%s: content source %v", tc.name, resp.GetVolume().GetContentSource())
					}
				}
				if origin := zfsGet(t, h, "origin", s.parent+"/"+tc.name); origin != "-" {
					t.Errorf("%s: origin %q, want none", tc.name, origin)
				}
				if got := zfsLines(t, h, "list", "-H", "-o", "name", "-t", "snapshot", "-r", s.parent+"/"+tc.name); len(got) != 0 {
					t.Errorf("%s: snapshots left on the copy: %v", tc.name, got)
				}
			}
			if got := zfsLines(t, h, "list", "-H", "-o", "name", "-t", "snapshot", "-r", s.parent+"/src"); !slices.Equal(got, []string{s.parent + "/src@snap-1"}) {
				t.Errorf("snapshots of the source after the copies: %v", got)
			}
			// Nothing depends on the source: it goes first.
			s.mustDeleteSnapshot(t, "src@snap-1")
			s.mustDeleteVolume(t, "src")
			for _, n := range []string{"copy-of-volume", "copy-of-snapshot"} {
				if _, err := s.ControllerGetVolume(ctx, &csi.ControllerGetVolumeRequest{VolumeId: n}); err != nil {
					t.Errorf("%s after its source went: %v", n, err)
				}
				s.mustDeleteVolume(t, n)
			}
			s.assertEmpty(t)
		})
	}
}

// TestSimValidateVolumeCapabilities confirms what each kind of volume
// serves and says why it refuses the rest.
func TestSimValidateVolumeCapabilities(t *testing.T) {
	const (
		mnmw = csi.VolumeCapability_AccessMode_MULTI_NODE_MULTI_WRITER
		mnro = csi.VolumeCapability_AccessMode_MULTI_NODE_READER_ONLY
	)
	type check struct {
		what    string
		caps    []*csi.VolumeCapability
		confirm bool
	}
	h := startHost(t)
	for _, tc := range []struct {
		driver string
		checks []check
	}{
		{"zfs-generic-nfs", []check{
			{"mount, no fs_type", []*csi.VolumeCapability{capability(sngw, false, "")}, true},
			{"mount nfs, multi-node writers", []*csi.VolumeCapability{capability(mnmw, false, "nfs")}, true},
			{"mount nfs and readers", []*csi.VolumeCapability{capability(sngw, false, "nfs"), capability(mnro, false, "")}, true},
			{"mount ext4", []*csi.VolumeCapability{capability(sngw, false, "ext4")}, false},
			{"block", []*csi.VolumeCapability{capability(sngw, true, "")}, false},
			{"one good, one block", []*csi.VolumeCapability{capability(sngw, false, ""), capability(sngw, true, "")}, false},
			{"access mode UNKNOWN", []*csi.VolumeCapability{capability(csi.VolumeCapability_AccessMode_UNKNOWN, false, "")}, false},
			{"no access mode", []*csi.VolumeCapability{{AccessType: &csi.VolumeCapability_Mount{Mount: &csi.VolumeCapability_MountVolume{}}}}, false},
			{"no access type", []*csi.VolumeCapability{{AccessMode: &csi.VolumeCapability_AccessMode{Mode: sngw}}}, false},
			{"an empty capability", []*csi.VolumeCapability{nil}, false},
		}},
		{"zfs-generic-iscsi", []check{
			{"block", []*csi.VolumeCapability{capability(sngw, true, "")}, true},
			{"block, multi-node writers", []*csi.VolumeCapability{capability(mnmw, true, "")}, true},
			{"mount ext4", []*csi.VolumeCapability{capability(sngw, false, "ext4")}, true},
			{"mount xfs", []*csi.VolumeCapability{capability(sngw, false, "xfs")}, true},
			{"mount nfs", []*csi.VolumeCapability{capability(sngw, false, "nfs")}, false},
			{"mount, multi-node writers", []*csi.VolumeCapability{capability(mnmw, false, "ext4")}, false},
		}},
	} {
		t.Run(tc.driver, func(t *testing.T) {
			s := newSimEngine(t, h, tc.driver, strings.TrimPrefix(tc.driver, "zfs-generic-"), nil)
			s.mustCreateVolume(t, "vol", mib, nil)
			for _, c := range tc.checks {
				resp, err := s.ValidateVolumeCapabilities(ctx, &csi.ValidateVolumeCapabilitiesRequest{VolumeId: "vol", VolumeCapabilities: c.caps,
					Parameters: map[string]string{"p": "1"}, VolumeContext: map[string]string{"k": "v"}})
				if err != nil {
					t.Errorf("%s: %v", c.what, err)
					continue
				}
				if c.confirm {
					conf := resp.GetConfirmed()
					if conf == nil || len(conf.GetVolumeCapabilities()) != len(c.caps) || conf.GetParameters()["p"] != "1" || conf.GetVolumeContext()["k"] != "v" {
						t.Errorf("%s: not confirmed as asked: %v", c.what, resp)
					}
				} else if resp.GetConfirmed() != nil || resp.GetMessage() == "" {
					t.Errorf("%s: confirmed or without a reason: %v", c.what, resp)
				}
			}
			for _, bad := range []struct {
				what string
				req  *csi.ValidateVolumeCapabilitiesRequest
				want codes.Code
			}{
				{"no volume id", &csi.ValidateVolumeCapabilitiesRequest{VolumeCapabilities: []*csi.VolumeCapability{capability(sngw, s.block, "")}}, codes.InvalidArgument},
				{"no capabilities", &csi.ValidateVolumeCapabilitiesRequest{VolumeId: "vol"}, codes.InvalidArgument},
				{"unknown volume", &csi.ValidateVolumeCapabilitiesRequest{VolumeId: "vol-none", VolumeCapabilities: []*csi.VolumeCapability{capability(sngw, s.block, "")}}, codes.NotFound},
				{"impossible volume id", &csi.ValidateVolumeCapabilitiesRequest{VolumeId: "a b", VolumeCapabilities: []*csi.VolumeCapability{capability(sngw, s.block, "")}}, codes.NotFound},
			} {
				_, err := s.ValidateVolumeCapabilities(ctx, bad.req)
				wantCode(t, bad.what, err, bad.want)
			}
			// A capability the driver cannot serve is refused at creation.
			_, err := s.CreateVolume(ctx, &csi.CreateVolumeRequest{Name: "vol2", VolumeCapabilities: []*csi.VolumeCapability{capability(sngw, false, "zfs")}})
			wantCode(t, "CreateVolume with an unsupported fs_type", err, codes.InvalidArgument)
			s.mustDeleteVolume(t, "vol")
			s.assertEmpty(t)
		})
	}
}

// TestSimGetCapacity reports the pool's free space under the parent, which
// it makes on a fresh host, and 0 for capabilities the driver cannot serve.
func TestSimGetCapacity(t *testing.T) {
	h := startHost(t)
	s := newSimEngine(t, h, "zfs-generic-nfs", "v", nil)
	if got := zfsLines(t, h, "list", "-H", "-o", "name", s.parent); len(got) != 0 {
		t.Fatalf("the parent exists before GetCapacity: %v", got)
	}
	resp, err := s.GetCapacity(ctx, &csi.GetCapacityRequest{})
	if err != nil {
		t.Fatal(err)
	}
	free := resp.GetAvailableCapacity()
	if free <= 0 || free > zfshost.DefaultPoolSize {
		t.Fatalf("available %d of a %d byte pool", free, int64(zfshost.DefaultPoolSize))
	}
	if got := zfsGet(t, h, "available", s.parent); got == "" {
		t.Errorf("GetCapacity did not make %s", s.parent)
	}
	resp, err = s.GetCapacity(ctx, &csi.GetCapacityRequest{VolumeCapabilities: []*csi.VolumeCapability{capability(sngw, false, "nfs")}})
	if err != nil || resp.GetAvailableCapacity() <= 0 {
		t.Errorf("with a served capability: %v %v", resp, err)
	}
	resp, err = s.GetCapacity(ctx, &csi.GetCapacityRequest{VolumeCapabilities: []*csi.VolumeCapability{capability(sngw, true, "")}})
	if err != nil || resp.GetAvailableCapacity() != 0 {
		t.Errorf("with block access on a filesystem driver: %v %v", resp, err)
	}

	// A zvol takes its size from the pool (the simulator reserves no
	// space for it, so only check that the answer is still sane).
	z := newSimEngine(t, h, "zfs-generic-iscsi", "z", nil)
	z.mustCreateVolume(t, "vol", 64*mib, nil)
	resp, err = z.GetCapacity(ctx, &csi.GetCapacityRequest{})
	if err != nil || resp.GetAvailableCapacity() <= 0 || resp.GetAvailableCapacity() > free {
		t.Errorf("zvol driver: %v %v (filesystem driver saw %d)", resp, err, free)
	}
	z.mustDeleteVolume(t, "vol")
	z.assertEmpty(t)
	s.assertEmpty(t)
}

// TestSimExpandVolume grows quotas and zvols, never shrinks them, and asks
// the node to grow a zvol's filesystem.
func TestSimExpandVolume(t *testing.T) {
	for _, d := range drivers {
		t.Run(d.driver, func(t *testing.T) {
			h := startHost(t)
			s := newSimEngine(t, h, d.driver, "v", nil)
			s.mustCreateVolume(t, "vol", 2*mib, nil)
			size := "refquota"
			if d.block {
				size = "volsize"
			}
			for _, tc := range []struct {
				what      string
				r         *csi.CapacityRange
				want      int64 // reported and on the host
				wantState string
			}{
				{"grow", &csi.CapacityRange{RequiredBytes: 4 * mib}, 4 * mib, "4194304"},
				{"the same size", &csi.CapacityRange{RequiredBytes: 4 * mib}, 4 * mib, "4194304"},
				{"shrink is a no-op", &csi.CapacityRange{RequiredBytes: mib}, 4 * mib, "4194304"},
				{"grow by a byte", &csi.CapacityRange{RequiredBytes: 4*mib + 1}, map[bool]int64{false: 4*mib + 1, true: 4*mib + 16<<10}[d.block],
					map[bool]string{false: "4194305", true: "4210688"}[d.block]},
			} {
				resp, err := s.ControllerExpandVolume(ctx, &csi.ControllerExpandVolumeRequest{VolumeId: "vol", CapacityRange: tc.r})
				if err != nil {
					t.Errorf("%s: %v", tc.what, err)
					continue
				}
				if resp.GetCapacityBytes() != tc.want || resp.GetNodeExpansionRequired() != d.block {
					t.Errorf("%s: %v, want %d bytes, node expansion %v", tc.what, resp, tc.want, d.block)
				}
				if got := zfsGet(t, h, size, s.parent+"/vol"); got != tc.wantState {
					t.Errorf("%s: %s on the host %q, want %s", tc.what, size, got, tc.wantState)
				}
			}
			got, err := s.ControllerGetVolume(ctx, &csi.ControllerGetVolumeRequest{VolumeId: "vol"})
			if err != nil || got.GetVolume().GetCapacityBytes() < 4*mib+1 {
				t.Errorf("ControllerGetVolume after expanding: %v %v", got, err)
			}
			for _, tc := range []struct {
				what string
				req  *csi.ControllerExpandVolumeRequest
				want codes.Code
			}{
				{"no volume id", &csi.ControllerExpandVolumeRequest{CapacityRange: &csi.CapacityRange{RequiredBytes: mib}}, codes.InvalidArgument},
				{"no capacity range", &csi.ControllerExpandVolumeRequest{VolumeId: "vol"}, codes.InvalidArgument},
				{"limit below required", &csi.ControllerExpandVolumeRequest{VolumeId: "vol", CapacityRange: &csi.CapacityRange{RequiredBytes: 8 * mib, LimitBytes: 6 * mib}}, codes.OutOfRange},
				{"unknown volume", &csi.ControllerExpandVolumeRequest{VolumeId: "vol-none", CapacityRange: &csi.CapacityRange{RequiredBytes: mib}}, codes.NotFound},
				{"impossible volume id", &csi.ControllerExpandVolumeRequest{VolumeId: "../vol", CapacityRange: &csi.CapacityRange{RequiredBytes: mib}}, codes.NotFound},
			} {
				_, err := s.ControllerExpandVolume(ctx, tc.req)
				wantCode(t, tc.what, err, tc.want)
			}
			s.mustDeleteVolume(t, "vol")
			s.assertEmpty(t)
		})
	}
}

// TestSimListVolumes lists the provisioned volumes in pages, with their
// content sources, and skips datasets the driver did not finish.
func TestSimListVolumes(t *testing.T) {
	h := startHost(t)
	s := newSimEngine(t, h, "zfs-generic-iscsi", "v", nil)
	resp, err := s.ListVolumes(ctx, &csi.ListVolumesRequest{})
	if err != nil || len(resp.GetEntries()) != 0 {
		t.Fatalf("ListVolumes before the parent exists: %v %v", resp, err)
	}
	for _, n := range []string{"vol-c", "vol-a", "vol-b"} {
		s.mustCreateVolume(t, n, mib, nil)
	}
	s.mustCreateVolume(t, "vol-d", mib, volumeSource("vol-a"))
	// A dataset that is not a finished volume of this driver.
	if got := zfsLines(t, h, "create", "-V", "1M", s.parent+"/stray"); got != nil {
		t.Fatalf("zfs create: %v", got)
	}
	var ids []string
	tok := ""
	for range 5 {
		resp, err := s.ListVolumes(ctx, &csi.ListVolumesRequest{MaxEntries: 3, StartingToken: tok})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range resp.GetEntries() {
			v := e.GetVolume()
			ids = append(ids, v.GetVolumeId())
			if v.GetCapacityBytes() != mib || v.GetVolumeContext()["node_attach_driver"] != "nfs" || v.GetVolumeContext()["provisioner_driver"] != "zfs-generic-iscsi" {
				t.Errorf("listed %+v", v)
			}
			if src := v.GetContentSource().GetVolume().GetVolumeId(); (v.GetVolumeId() == "vol-d") != (src == "vol-a") {
				t.Errorf("%s: content source %v", v.GetVolumeId(), v.GetContentSource())
			}
		}
		if tok = resp.GetNextToken(); tok == "" {
			break
		}
	}
	if want := []string{"vol-a", "vol-b", "vol-c", "vol-d"}; !slices.Equal(ids, want) {
		t.Errorf("listed %v, want %v", ids, want)
	}
	_, err = s.ListVolumes(ctx, &csi.ListVolumesRequest{StartingToken: "vol-a"})
	wantCode(t, "a token not issued", err, codes.Aborted)
	_, err = s.ListVolumes(ctx, &csi.ListVolumesRequest{MaxEntries: -1})
	wantCode(t, "negative max_entries", err, codes.InvalidArgument)
	_, err = s.ControllerGetVolume(ctx, &csi.ControllerGetVolumeRequest{VolumeId: "stray"})
	wantCode(t, "ControllerGetVolume of a stray dataset", err, codes.NotFound)

	zfsLines(t, h, "destroy", s.parent+"/stray")
	for _, n := range []string{"vol-d", "vol-a", "vol-b", "vol-c"} {
		s.mustDeleteVolume(t, n)
	}
	s.assertEmpty(t)
}
