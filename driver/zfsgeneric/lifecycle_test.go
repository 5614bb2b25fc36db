package zfsgeneric_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/driver/backend"
	"github.com/switchyard-csi/switchyard/driver/config"
	"github.com/switchyard-csi/switchyard/lab/zfshost"
)

// A volume's whole controller life on the simulated ZFS host, for a
// filesystem backend (NFS, quotas on) and a zvol backend (iSCSI): create
// (idempotent, conflicts refused), get, validate, expand, snapshots
// (attached and detached), clones from snapshots and volumes, listing with
// pages, and deletes that are idempotent and leave nothing on the host.

func blockCaps() []*csi.VolumeCapability {
	return []*csi.VolumeCapability{{
		AccessType: &csi.VolumeCapability_Block{Block: &csi.VolumeCapability_BlockVolume{}},
		AccessMode: &csi.VolumeCapability_AccessMode{Mode: csi.VolumeCapability_AccessMode_SINGLE_NODE_WRITER},
	}}
}

// wantStatus fails unless err has code and its message holds every sub.
func wantStatus(t *testing.T, what string, err error, code codes.Code, subs ...string) {
	t.Helper()
	s, _ := status.FromError(err)
	if err == nil || s.Code() != code {
		t.Fatalf("%s: %v, want %v", what, err, code)
	}
	for _, sub := range subs {
		if !strings.Contains(s.Message(), sub) {
			t.Fatalf("%s: message %q lacks %q", what, s.Message(), sub)
		}
	}
}

func fromSnapshot(id string) *csi.VolumeContentSource {
	return &csi.VolumeContentSource{Type: &csi.VolumeContentSource_Snapshot{Snapshot: &csi.VolumeContentSource_SnapshotSource{SnapshotId: id}}}
}

func fromVolume(id string) *csi.VolumeContentSource {
	return &csi.VolumeContentSource{Type: &csi.VolumeContentSource_Volume{Volume: &csi.VolumeContentSource_VolumeSource{VolumeId: id}}}
}

func snapshotIDs(entries []*csi.ListSnapshotsResponse_Entry) []string {
	var ids []string
	for _, e := range entries {
		ids = append(ids, e.GetSnapshot().GetSnapshotId())
	}
	return ids
}

func volumeIDs(entries []*csi.ListVolumesResponse_Entry) []string {
	var ids []string
	for _, e := range entries {
		ids = append(ids, e.GetVolume().GetVolumeId())
	}
	return ids
}

func TestLifecycle(t *testing.T) {
	for _, tc := range []struct {
		driver string
		block  bool   // zvols
		size   string // the zfs property holding the size
	}{
		{"zfs-generic-nfs", false, "refquota"},
		{"zfs-generic-iscsi", true, "volsize"},
	} {
		t.Run(tc.driver, func(t *testing.T) {
			h := startHost(t, zfshost.Options{})
			d := newDriver(t, genericConfig(h, tc.driver, ""))
			const parent, snapParent = "tank/k8s/v", "tank/k8s/v-snapshots"
			sizeOnHost := func(ds string) string {
				t.Helper()
				return strings.Join(zfsLines(t, h, "get", "-Hp", "-o", "value", tc.size, ds), "")
			}

			caps, err := d.ControllerGetCapabilities(ctx, &csi.ControllerGetCapabilitiesRequest{})
			if err != nil {
				t.Fatal(err)
			}
			var rpcs []csi.ControllerServiceCapability_RPC_Type
			for _, c := range caps.GetCapabilities() {
				rpcs = append(rpcs, c.GetRpc().GetType())
			}
			for _, want := range []csi.ControllerServiceCapability_RPC_Type{
				csi.ControllerServiceCapability_RPC_CREATE_DELETE_SNAPSHOT, csi.ControllerServiceCapability_RPC_CLONE_VOLUME,
				csi.ControllerServiceCapability_RPC_EXPAND_VOLUME, csi.ControllerServiceCapability_RPC_LIST_VOLUMES,
				csi.ControllerServiceCapability_RPC_LIST_SNAPSHOTS, csi.ControllerServiceCapability_RPC_GET_VOLUME,
				csi.ControllerServiceCapability_RPC_GET_CAPACITY,
			} {
				if !slices.Contains(rpcs, want) {
					t.Errorf("capabilities %v lack %v", rpcs, want)
				}
			}

			// A fresh pool answers GetCapacity: the parent is made first.
			capResp, err := d.GetCapacity(ctx, &csi.GetCapacityRequest{})
			if err != nil || capResp.GetAvailableCapacity() <= 0 {
				t.Fatalf("capacity: %v %v", capResp, err)
			}
			if got := zfsLines(t, h, "list", "-H", "-o", "name", parent); len(got) != 1 {
				t.Fatalf("GetCapacity did not make %s: %v", parent, got)
			}
			if !tc.block {
				// A filesystem backend has no room for block volumes.
				none, err := d.GetCapacity(ctx, &csi.GetCapacityRequest{VolumeCapabilities: blockCaps()})
				if err != nil || none.GetAvailableCapacity() != 0 {
					t.Fatalf("capacity for block on %s: %v %v", tc.driver, none, err)
				}
			}

			// Create, twice: the same volume; then a size that does not fit.
			req := createReq("pvc-a", 1<<30)
			vol, err := d.CreateVolume(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			v := vol.GetVolume()
			if v.GetVolumeId() != "pvc-a" || v.GetCapacityBytes() != 1<<30 || v.GetVolumeContext()["provisioner_driver"] != tc.driver {
				t.Fatalf("created %+v", v)
			}
			if got := sizeOnHost(parent + "/pvc-a"); got != "1073741824" {
				t.Fatalf("%s on the host: %q", tc.size, got)
			}
			again, err := d.CreateVolume(ctx, req)
			if err != nil || again.GetVolume().GetVolumeId() != "pvc-a" || !mapsEqual(again.GetVolume().GetVolumeContext(), v.GetVolumeContext()) {
				t.Fatalf("create again: %+v %v", again, err)
			}
			_, err = d.CreateVolume(ctx, createReq("pvc-a", 3<<30))
			wantStatus(t, "create bigger", err, codes.AlreadyExists, `volume "pvc-a" already exists with 1073741824 bytes`)

			// Get and validate.
			got, err := d.ControllerGetVolume(ctx, &csi.ControllerGetVolumeRequest{VolumeId: "pvc-a"})
			if err != nil || got.GetVolume().GetCapacityBytes() != 1<<30 || !mapsEqual(got.GetVolume().GetVolumeContext(), v.GetVolumeContext()) {
				t.Fatalf("get: %+v %v", got, err)
			}
			_, err = d.ControllerGetVolume(ctx, &csi.ControllerGetVolumeRequest{VolumeId: "pvc-none"})
			wantStatus(t, "get unknown", err, codes.NotFound, "pvc-none", parent+"/pvc-none")
			_, err = d.ControllerGetVolume(ctx, &csi.ControllerGetVolumeRequest{})
			wantStatus(t, "get without id", err, codes.InvalidArgument, "volume_id is required")
			val, err := d.ValidateVolumeCapabilities(ctx, &csi.ValidateVolumeCapabilitiesRequest{VolumeId: "pvc-a", VolumeCapabilities: mountCaps()})
			if err != nil || val.GetConfirmed() == nil || len(val.GetConfirmed().GetVolumeCapabilities()) != 1 {
				t.Fatalf("validate: %+v %v", val, err)
			}
			if !tc.block {
				val, err = d.ValidateVolumeCapabilities(ctx, &csi.ValidateVolumeCapabilitiesRequest{VolumeId: "pvc-a", VolumeCapabilities: blockCaps()})
				if err != nil || val.GetConfirmed() != nil || val.GetMessage() == "" {
					t.Fatalf("validate block on %s: %+v %v", tc.driver, val, err)
				}
			}
			_, err = d.ValidateVolumeCapabilities(ctx, &csi.ValidateVolumeCapabilitiesRequest{VolumeId: "pvc-none", VolumeCapabilities: mountCaps()})
			wantStatus(t, "validate unknown", err, codes.NotFound, "pvc-none")
			_, err = d.ValidateVolumeCapabilities(ctx, &csi.ValidateVolumeCapabilitiesRequest{VolumeId: "pvc-a"})
			wantStatus(t, "validate without capabilities", err, codes.InvalidArgument, "volume_capabilities is required")
			_, err = d.ValidateVolumeCapabilities(ctx, &csi.ValidateVolumeCapabilitiesRequest{VolumeCapabilities: mountCaps()})
			wantStatus(t, "validate without id", err, codes.InvalidArgument, "volume_id is required")

			// Expand: grows, never shrinks, and a zvol needs the node too.
			exp, err := d.ControllerExpandVolume(ctx, &csi.ControllerExpandVolumeRequest{VolumeId: "pvc-a", CapacityRange: &csi.CapacityRange{RequiredBytes: 2 << 30}})
			if err != nil || exp.GetCapacityBytes() != 2<<30 || exp.GetNodeExpansionRequired() != tc.block {
				t.Fatalf("expand: %+v %v", exp, err)
			}
			if got := sizeOnHost(parent + "/pvc-a"); got != "2147483648" {
				t.Fatalf("%s after expand: %q", tc.size, got)
			}
			exp, err = d.ControllerExpandVolume(ctx, &csi.ControllerExpandVolumeRequest{VolumeId: "pvc-a", CapacityRange: &csi.CapacityRange{RequiredBytes: 1 << 30}})
			if err != nil || exp.GetCapacityBytes() != 2<<30 {
				t.Fatalf("expand to less: %+v %v", exp, err)
			}
			if got := sizeOnHost(parent + "/pvc-a"); got != "2147483648" {
				t.Fatalf("%s after a smaller expand: %q", tc.size, got)
			}
			_, err = d.ControllerExpandVolume(ctx, &csi.ControllerExpandVolumeRequest{VolumeId: "pvc-none", CapacityRange: &csi.CapacityRange{RequiredBytes: 1 << 30}})
			wantStatus(t, "expand unknown", err, codes.NotFound, "pvc-none")
			_, err = d.ControllerExpandVolume(ctx, &csi.ControllerExpandVolumeRequest{VolumeId: "pvc-a"})
			wantStatus(t, "expand without range", err, codes.InvalidArgument, "capacity_range is required")
			_, err = d.ControllerExpandVolume(ctx, &csi.ControllerExpandVolumeRequest{CapacityRange: &csi.CapacityRange{RequiredBytes: 1 << 30}})
			wantStatus(t, "expand without id", err, codes.InvalidArgument, "volume_id is required")
			_, err = d.ControllerExpandVolume(ctx, &csi.ControllerExpandVolumeRequest{VolumeId: "../x", CapacityRange: &csi.CapacityRange{RequiredBytes: 1 << 30}})
			wantStatus(t, "expand a bad id", err, codes.NotFound, "../x")

			// Snapshots: a zfs snapshot, and a detached copy.
			snapReq := &csi.CreateSnapshotRequest{Name: "snap-1", SourceVolumeId: "pvc-a"}
			snap, err := d.CreateSnapshot(ctx, snapReq)
			if err != nil {
				t.Fatal(err)
			}
			s := snap.GetSnapshot()
			if s.GetSnapshotId() != "pvc-a@snap-1" || s.GetSourceVolumeId() != "pvc-a" || !s.GetReadyToUse() || s.GetCreationTime().GetSeconds() <= 0 {
				t.Fatalf("snapshot %+v", s)
			}
			if tc.block && s.GetSizeBytes() != 2<<30 {
				t.Errorf("zvol snapshot size %d, want the volume's", s.GetSizeBytes())
			}
			if got := zfsLines(t, h, "list", "-H", "-o", "name", "-t", "snapshot", parent+"/pvc-a@snap-1"); len(got) != 1 {
				t.Fatalf("no zfs snapshot on the host: %v", got)
			}
			snapAgain, err := d.CreateSnapshot(ctx, snapReq)
			if err != nil || snapAgain.GetSnapshot().GetSnapshotId() != "pvc-a@snap-1" {
				t.Fatalf("snapshot again: %+v %v", snapAgain, err)
			}
			detached, err := d.CreateSnapshot(ctx, &csi.CreateSnapshotRequest{Name: "snap-d", SourceVolumeId: "pvc-a", Parameters: map[string]string{"detachedSnapshots": "true"}})
			if err != nil || detached.GetSnapshot().GetSnapshotId() != "pvc-a/snap-d" || detached.GetSnapshot().GetSourceVolumeId() != "pvc-a" {
				t.Fatalf("detached snapshot: %+v %v", detached, err)
			}
			if got := zfsLines(t, h, "list", "-H", "-o", "name", snapParent+"/pvc-a/snap-d"); len(got) != 1 {
				t.Fatalf("no detached copy on the host: %v", got)
			}
			if got := zfsLines(t, h, "list", "-H", "-o", "name", "-t", "snapshot", "-r", parent+"/pvc-a"); !slices.Equal(got, []string{parent + "/pvc-a@snap-1"}) {
				t.Fatalf("the detached copy left snapshots behind: %v", got)
			}
			if _, err := d.CreateSnapshot(ctx, &csi.CreateSnapshotRequest{Name: "snap-d", SourceVolumeId: "pvc-a", Parameters: map[string]string{"detachedSnapshots": "true"}}); err != nil {
				t.Fatalf("detached snapshot again: %v", err)
			}
			if _, err := d.CreateVolume(ctx, createReq("pvc-b", 1<<30)); err != nil {
				t.Fatal(err)
			}
			_, err = d.CreateSnapshot(ctx, &csi.CreateSnapshotRequest{Name: "snap-1", SourceVolumeId: "pvc-b"})
			wantStatus(t, "snapshot name of another volume", err, codes.AlreadyExists, `"snap-1"`, "pvc-a")
			_, err = d.CreateSnapshot(ctx, &csi.CreateSnapshotRequest{Name: "snap-d", SourceVolumeId: "pvc-b"})
			wantStatus(t, "detached snapshot name of another volume", err, codes.AlreadyExists, `"snap-d"`, "pvc-a")

			// Listing snapshots: all, by source, by id, in pages.
			list, err := d.ListSnapshots(ctx, &csi.ListSnapshotsRequest{})
			if err != nil || !slices.Equal(snapshotIDs(list.GetEntries()), []string{"pvc-a/snap-d", "pvc-a@snap-1"}) {
				t.Fatalf("list snapshots: %v %v", snapshotIDs(list.GetEntries()), err)
			}
			list, err = d.ListSnapshots(ctx, &csi.ListSnapshotsRequest{SourceVolumeId: "pvc-a"})
			if err != nil || len(list.GetEntries()) != 2 {
				t.Fatalf("list snapshots of pvc-a: %v %v", snapshotIDs(list.GetEntries()), err)
			}
			for _, src := range []string{"pvc-b", "pvc-none", "../bad"} {
				list, err = d.ListSnapshots(ctx, &csi.ListSnapshotsRequest{SourceVolumeId: src})
				if err != nil || len(list.GetEntries()) != 0 {
					t.Fatalf("list snapshots of %s: %v %v", src, snapshotIDs(list.GetEntries()), err)
				}
			}
			for _, id := range []string{"pvc-a@snap-1", "pvc-a/snap-d"} {
				list, err = d.ListSnapshots(ctx, &csi.ListSnapshotsRequest{SnapshotId: id})
				if err != nil || !slices.Equal(snapshotIDs(list.GetEntries()), []string{id}) {
					t.Fatalf("list snapshot %s: %v %v", id, snapshotIDs(list.GetEntries()), err)
				}
				one, err := d.GetSnapshot(ctx, &csi.GetSnapshotRequest{SnapshotId: id})
				if err != nil || one.GetSnapshot().GetSnapshotId() != id || one.GetSnapshot().GetSourceVolumeId() != "pvc-a" {
					t.Fatalf("get snapshot %s: %+v %v", id, one, err)
				}
			}
			for _, id := range []string{"pvc-a@nope", "pvc-a/nope", "no-such-form", "pvc-a@bad name"} {
				list, err = d.ListSnapshots(ctx, &csi.ListSnapshotsRequest{SnapshotId: id})
				if err != nil || len(list.GetEntries()) != 0 {
					t.Fatalf("list snapshot %q: %v %v", id, snapshotIDs(list.GetEntries()), err)
				}
				_, err = d.GetSnapshot(ctx, &csi.GetSnapshotRequest{SnapshotId: id})
				wantStatus(t, "get snapshot "+id, err, codes.NotFound, id)
			}
			_, err = d.GetSnapshot(ctx, &csi.GetSnapshotRequest{})
			wantStatus(t, "get snapshot without id", err, codes.InvalidArgument, "snapshot_id is required")
			page1, err := d.ListSnapshots(ctx, &csi.ListSnapshotsRequest{MaxEntries: 1})
			if err != nil || !slices.Equal(snapshotIDs(page1.GetEntries()), []string{"pvc-a/snap-d"}) || page1.GetNextToken() == "" {
				t.Fatalf("first page: %v %q %v", snapshotIDs(page1.GetEntries()), page1.GetNextToken(), err)
			}
			page2, err := d.ListSnapshots(ctx, &csi.ListSnapshotsRequest{MaxEntries: 1, StartingToken: page1.GetNextToken()})
			if err != nil || !slices.Equal(snapshotIDs(page2.GetEntries()), []string{"pvc-a@snap-1"}) || page2.GetNextToken() != "" {
				t.Fatalf("second page: %v %q %v", snapshotIDs(page2.GetEntries()), page2.GetNextToken(), err)
			}
			_, err = d.ListSnapshots(ctx, &csi.ListSnapshotsRequest{StartingToken: "page-2"})
			wantStatus(t, "snapshots with a foreign token", err, codes.Aborted, `"page-2"`)
			_, err = d.ListSnapshots(ctx, &csi.ListSnapshotsRequest{MaxEntries: -1})
			wantStatus(t, "snapshots with negative max_entries", err, codes.InvalidArgument, "max_entries")

			// Volumes from a snapshot, a detached snapshot and a volume.
			sources := map[string]*csi.VolumeContentSource{
				"pvc-from-snap":     fromSnapshot("pvc-a@snap-1"),
				"pvc-from-detached": fromSnapshot("pvc-a/snap-d"),
				"pvc-from-vol":      fromVolume("pvc-a"),
			}
			for name, src := range sources {
				r := createReq(name, 2<<30)
				r.VolumeContentSource = src
				cv, err := d.CreateVolume(ctx, r)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if cv.GetVolume().GetVolumeId() != name || cv.GetVolume().GetContentSource().String() != src.String() {
					t.Fatalf("%s: %+v", name, cv.GetVolume())
				}
				if _, err := d.CreateVolume(ctx, r); err != nil {
					t.Fatalf("%s again: %v", name, err)
				}
				g, err := d.ControllerGetVolume(ctx, &csi.ControllerGetVolumeRequest{VolumeId: name})
				if err != nil || g.GetVolume().GetContentSource().String() != src.String() {
					t.Fatalf("get %s: %+v %v", name, g, err)
				}
			}
			if got := zfsLines(t, h, "get", "-H", "-o", "value", "origin", parent+"/pvc-from-snap"); !slices.Equal(got, []string{parent + "/pvc-a@snap-1"}) {
				t.Errorf("pvc-from-snap's origin: %v", got)
			}
			other := createReq("pvc-from-snap", 2<<30)
			other.VolumeContentSource = fromVolume("pvc-b")
			_, err = d.CreateVolume(ctx, other)
			wantStatus(t, "same name, other source", err, codes.AlreadyExists, "pvc-from-snap", "pvc-b")
			for _, bad := range []struct {
				src  *csi.VolumeContentSource
				subs []string
			}{
				{fromSnapshot("pvc-a@nope"), []string{"pvc-a@nope"}},
				{fromSnapshot("not a snapshot id"), []string{"not a snapshot id"}},
				{fromVolume("pvc-none"), []string{"pvc-none"}},
				{fromVolume("../etc"), []string{"../etc"}},
			} {
				r := createReq("pvc-from-nothing", 2<<30)
				r.VolumeContentSource = bad.src
				_, err := d.CreateVolume(ctx, r)
				wantStatus(t, "source "+bad.src.String(), err, codes.NotFound, bad.subs...)
				if got := zfsLines(t, h, "list", "-H", "-o", "name", parent+"/pvc-from-nothing"); len(got) != 0 {
					t.Fatalf("source %v left %v", bad.src, got)
				}
			}
			if tc.block {
				small := createReq("pvc-too-small", 1<<30)
				small.VolumeContentSource = fromVolume("pvc-a")
				_, err := d.CreateVolume(ctx, small)
				wantStatus(t, "a clone smaller than its source", err, codes.OutOfRange, "2147483648", "1073741824")
				// The refused clone stays on the host (see
				// TestRefusedCloneLeavesNothing); remove it so pvc-a can go.
				if _, err := d.DeleteVolume(ctx, &csi.DeleteVolumeRequest{VolumeId: "pvc-too-small"}); err != nil {
					t.Fatal(err)
				}
			}

			// Listing volumes, in pages.
			all := []string{"pvc-a", "pvc-b", "pvc-from-detached", "pvc-from-snap", "pvc-from-vol"}
			vl, err := d.ListVolumes(ctx, &csi.ListVolumesRequest{})
			if err != nil || !slices.Equal(volumeIDs(vl.GetEntries()), all) {
				t.Fatalf("list volumes: %v %v", volumeIDs(vl.GetEntries()), err)
			}
			for _, e := range vl.GetEntries() {
				if e.GetVolume().GetVolumeContext()["provisioner_driver"] != tc.driver {
					t.Errorf("listed %+v", e.GetVolume())
				}
			}
			var paged []string
			tok := ""
			for i := 0; ; i++ {
				p, err := d.ListVolumes(ctx, &csi.ListVolumesRequest{MaxEntries: 2, StartingToken: tok})
				if err != nil || len(p.GetEntries()) > 2 || i > 3 {
					t.Fatalf("page %d: %v %v", i, volumeIDs(p.GetEntries()), err)
				}
				paged = append(paged, volumeIDs(p.GetEntries())...)
				if tok = p.GetNextToken(); tok == "" {
					break
				}
			}
			if !slices.Equal(paged, all) {
				t.Fatalf("paged volumes: %v", paged)
			}
			_, err = d.ListVolumes(ctx, &csi.ListVolumesRequest{StartingToken: "after:"})
			wantStatus(t, "volumes with an empty token", err, codes.Aborted, "was not issued by this driver")
			_, err = d.ListVolumes(ctx, &csi.ListVolumesRequest{MaxEntries: -2})
			wantStatus(t, "volumes with negative max_entries", err, codes.InvalidArgument, "max_entries must not be negative")

			// Deletes: refused while clones depend on the volume; then
			// idempotent, and the host is left empty.
			_, err = d.DeleteVolume(ctx, &csi.DeleteVolumeRequest{VolumeId: "pvc-a"})
			wantStatus(t, "delete a cloned volume", err, codes.FailedPrecondition, "pvc-a", "dependent clones")
			for _, id := range []string{"pvc-from-snap", "pvc-from-detached", "pvc-from-vol", "pvc-from-vol"} {
				if _, err := d.DeleteVolume(ctx, &csi.DeleteVolumeRequest{VolumeId: id}); err != nil {
					t.Fatalf("delete %s: %v", id, err)
				}
			}
			for _, id := range []string{"pvc-a@snap-1", "pvc-a@snap-1", "pvc-a/snap-d", "pvc-a/snap-d", "not a snapshot id"} {
				if _, err := d.DeleteSnapshot(ctx, &csi.DeleteSnapshotRequest{SnapshotId: id}); err != nil {
					t.Fatalf("delete snapshot %s: %v", id, err)
				}
			}
			_, err = d.DeleteSnapshot(ctx, &csi.DeleteSnapshotRequest{})
			wantStatus(t, "delete snapshot without id", err, codes.InvalidArgument, "snapshot_id is required")
			for _, id := range []string{"pvc-a", "pvc-a", "pvc-b", "../not-an-id"} {
				if _, err := d.DeleteVolume(ctx, &csi.DeleteVolumeRequest{VolumeId: id}); err != nil {
					t.Fatalf("delete %s: %v", id, err)
				}
			}
			_, err = d.DeleteVolume(ctx, &csi.DeleteVolumeRequest{})
			wantStatus(t, "delete without id", err, codes.InvalidArgument, "volume_id is required")
			if vl, err := d.ListVolumes(ctx, &csi.ListVolumesRequest{}); err != nil || len(vl.GetEntries()) != 0 {
				t.Fatalf("volumes left: %v %v", volumeIDs(vl.GetEntries()), err)
			}
			if sl, err := d.ListSnapshots(ctx, &csi.ListSnapshotsRequest{}); err != nil || len(sl.GetEntries()) != 0 {
				t.Fatalf("snapshots left: %v %v", snapshotIDs(sl.GetEntries()), err)
			}
			left := zfsLines(t, h, "list", "-H", "-r", "-t", "all", "-o", "name", "tank/k8s")
			for _, ds := range left {
				if ds != "tank/k8s" && ds != parent && ds != snapParent {
					t.Errorf("left on the host: %s", ds)
				}
			}
		})
	}
}

// A zvol clone asked smaller than its source is refused (OUT_OF_RANGE),
// and, like every refused CreateVolume, must leave nothing behind: no
// volume is returned, so DeleteVolume will never be called for it.
func TestRefusedCloneLeavesNothing(t *testing.T) {
	h := startHost(t, zfshost.Options{})
	d := newDriver(t, genericConfig(h, "zfs-generic-iscsi", ""))
	if _, err := d.CreateVolume(ctx, createReq("pvc-src", 2<<30)); err != nil {
		t.Fatal(err)
	}
	small := createReq("pvc-small", 1<<30)
	small.VolumeContentSource = fromVolume("pvc-src")
	_, err := d.CreateVolume(ctx, small)
	wantStatus(t, "a clone smaller than its source", err, codes.OutOfRange, "2147483648", "1073741824")
	left := zfsLines(t, h, "list", "-H", "-r", "-t", "all", "-o", "name", "tank/k8s/v")
	if !slices.Equal(left, []string{"tank/k8s/v", "tank/k8s/v/pvc-src"}) {
		t.Fatalf("a refused clone left %v; want only the source", left)
	}
	// The source is whole again: it can be deleted (no clone holds it).
	if _, err := d.DeleteVolume(ctx, &csi.DeleteVolumeRequest{VolumeId: "pvc-src"}); err != nil {
		t.Fatalf("deleting the source: %v", err)
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// Snapshot requests that cannot be served are refused before the host.
func TestSnapshotBadInput(t *testing.T) {
	h := startHost(t, zfshost.Options{})
	d := newDriver(t, genericConfig(h, "zfs-generic-nfs", ""))
	if _, err := d.CreateVolume(ctx, createReq("pvc-a", 1<<30)); err != nil {
		t.Fatal(err)
	}
	noDetached := newDriver(t, strings.Replace(genericConfig(h, "zfs-generic-nfs", ""), "  detachedSnapshotsDatasetParentName: tank/k8s/v-snapshots\n", "", 1))
	for _, c := range []struct {
		name string
		d    backend.Driver
		req  *csi.CreateSnapshotRequest
		code codes.Code
		subs []string
	}{
		{"no name", d, &csi.CreateSnapshotRequest{SourceVolumeId: "pvc-a"}, codes.InvalidArgument, []string{"name is required"}},
		{"no source", d, &csi.CreateSnapshotRequest{Name: "s"}, codes.InvalidArgument, []string{"source_volume_id is required"}},
		{"bad name", d, &csi.CreateSnapshotRequest{Name: "s;rm -rf /", SourceVolumeId: "pvc-a"}, codes.InvalidArgument, []string{`"s;rm -rf /"`, "invalid characters"}},
		{"bad source id", d, &csi.CreateSnapshotRequest{Name: "s", SourceVolumeId: "../etc"}, codes.NotFound, []string{"../etc"}},
		{"unknown source", d, &csi.CreateSnapshotRequest{Name: "s", SourceVolumeId: "pvc-none"}, codes.NotFound, []string{"pvc-none"}},
		{"unknown source, detached", d, &csi.CreateSnapshotRequest{Name: "s", SourceVolumeId: "pvc-none", Parameters: map[string]string{"detachedSnapshots": "true"}}, codes.NotFound, []string{"pvc-none"}},
		{"detached without a parent", noDetached, &csi.CreateSnapshotRequest{Name: "s", SourceVolumeId: "pvc-a", Parameters: map[string]string{"detachedSnapshots": "true"}}, codes.InvalidArgument, []string{"detachedSnapshotsDatasetParentName", "zfs-generic-nfs"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := len(h.Server.Commands())
			_, err := c.d.CreateSnapshot(ctx, c.req)
			wantStatus(t, c.name, err, c.code, c.subs...)
			if c.code == codes.InvalidArgument && c.name != "detached without a parent" && len(h.Server.Commands()) != before {
				t.Errorf("the host was asked: %v", h.Server.Commands()[before:])
			}
		})
	}
	if got := zfsLines(t, h, "list", "-H", "-r", "-t", "snapshot", "-o", "name", "tank"); len(got) != 0 {
		t.Errorf("snapshots made: %v", got)
	}
	// A detached-snapshot-less config lists only attached snapshots.
	if _, err := noDetached.CreateSnapshot(ctx, &csi.CreateSnapshotRequest{Name: "s1", SourceVolumeId: "pvc-a"}); err != nil {
		t.Fatal(err)
	}
	list, err := noDetached.ListSnapshots(ctx, &csi.ListSnapshotsRequest{SourceVolumeId: "pvc-a"})
	if err != nil || !slices.Equal(snapshotIDs(list.GetEntries()), []string{"pvc-a@s1"}) {
		t.Fatalf("list: %v %v", snapshotIDs(list.GetEntries()), err)
	}
	// "pvc-a/s1" names a detached snapshot, which this config cannot have.
	if _, err := noDetached.GetSnapshot(ctx, &csi.GetSnapshotRequest{SnapshotId: "pvc-a/s1"}); status.Code(err) != codes.NotFound {
		t.Fatalf("get a detached id without detached snapshots: %v", err)
	}
}

// deleteStrategy: retain keeps the dataset when its volume is deleted.
func TestDeleteStrategyRetain(t *testing.T) {
	h := startHost(t, zfshost.Options{})
	d := newDriver(t, genericConfig(h, "zfs-generic-nfs", "")+"_private:\n  csi:\n    volume:\n      deleteStrategy: retain\n")
	if _, err := d.CreateVolume(ctx, createReq("pvc-kept", 1<<30)); err != nil {
		t.Fatal(err)
	}
	if _, err := d.DeleteVolume(ctx, &csi.DeleteVolumeRequest{VolumeId: "pvc-kept"}); err != nil {
		t.Fatal(err)
	}
	if got := zfsLines(t, h, "list", "-H", "-o", "name", "tank/k8s/v/pvc-kept"); len(got) != 1 {
		t.Fatalf("retain removed the dataset: %v", got)
	}
}

// Validate (what `switchyard config check` runs) names the key to fix.
func TestValidate(t *testing.T) {
	h := startHost(t, zfshost.Options{})
	ty, ok := backend.Lookup("zfs-generic-iscsi")
	if !ok || ty.Validate == nil {
		t.Fatal("zfs-generic-iscsi is not registered with a validator")
	}
	good := genericConfig(h, "zfs-generic-iscsi", "")
	for _, c := range []struct {
		name, extra string
		key, msg    string
	}{
		{"good", "", "", ""},
		{"blocksize", "  zvolBlocksize: 3K\n", "zfs.zvolBlocksize", "power of two"},
		{"permissions mode", "  datasetPermissionsMode: rwx\n", "zfs.datasetPermissionsMode", "octal"},
		{"template", "  datasetProperties:\n    \"org.example:x\": \"{{ nope\"\n", "zfs.datasetProperties.org.example:x", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			tree := parseTree(t, genericConfig(h, "zfs-generic-iscsi", c.extra))
			ps := ty.Validate(tree)
			if c.key == "" {
				if len(ps) != 0 {
					t.Fatalf("problems in a good config: %v", ps)
				}
				return
			}
			for _, p := range ps {
				if p.Key == c.key && strings.Contains(p.Msg, c.msg) {
					return
				}
			}
			t.Fatalf("no problem at %s (%q): %v", c.key, c.msg, ps)
		})
	}
	for _, c := range []struct {
		name, cfg, key, msg string
	}{
		{"no parent", strings.Replace(good, "  datasetParentName: tank/k8s/v\n", "", 1), "zfs.datasetParentName", "required"},
		{"overlapping parents", strings.Replace(good, "tank/k8s/v-snapshots", "tank/k8s/v/snaps", 1), "zfs.detachedSnapshotsDatasetParentName", "must not overlap"},
		{"id template", good + "_private:\n  csi:\n    volume:\n      idTemplate: x\n", "_private.csi.volume.idTemplate", "not supported"},
		{"delete strategy", good + "_private:\n  csi:\n    volume:\n      deleteStrategy: keep\n", "_private.csi.volume.deleteStrategy", `"keep"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			ps := ty.Validate(parseTree(t, c.cfg))
			for _, p := range ps {
				if p.Key == c.key && strings.Contains(p.Msg, c.msg) {
					return
				}
			}
			t.Fatalf("no problem at %s (%q): %v", c.key, c.msg, ps)
		})
	}
}

func parseTree(t *testing.T, yaml string) config.Tree {
	t.Helper()
	tree, err := config.Parse([]byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	return tree
}
