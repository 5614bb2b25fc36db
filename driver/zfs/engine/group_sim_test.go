package engine_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"

	"github.com/switchyard-csi/switchyard/driver/zfs/engine"
)

// A group snapshot over the simulated host: one zfs snapshot command makes
// every member (so they share a creation time and a group label), members
// restore like ordinary snapshots, and get/delete find them by the group.
func TestSimGroupSnapshot(t *testing.T) {
	h := startHost(t)
	s := newSimEngine(t, h, "zfs-generic-nfs", "group", nil)
	g := s.GroupController()
	if g == nil {
		t.Fatal("a zfs command line engine serves no group controller")
	}
	a := s.mustCreateVolume(t, "pvc-a", 64*mib, nil)
	b := s.mustCreateVolume(t, "pvc-b", 64*mib, nil)
	srcs := []string{a.GetVolumeId(), b.GetVolumeId()}

	req := &csi.CreateVolumeGroupSnapshotRequest{Name: "groupsnapshot-1", SourceVolumeIds: srcs}
	resp, err := g.CreateVolumeGroupSnapshot(ctx, req)
	if err != nil {
		t.Fatalf("CreateVolumeGroupSnapshot: %v", err)
	}
	gs := resp.GetGroupSnapshot()
	if len(gs.GetSnapshots()) != 2 || !gs.GetReadyToUse() || gs.GetGroupSnapshotId() == "" {
		t.Fatalf("group snapshot = %v", gs)
	}
	var ids, got []string
	for _, sn := range gs.GetSnapshots() {
		ids = append(ids, sn.GetSnapshotId())
		got = append(got, sn.GetSourceVolumeId())
		if sn.GetGroupSnapshotId() != gs.GetGroupSnapshotId() {
			t.Errorf("member %s has group %q", sn.GetSnapshotId(), sn.GetGroupSnapshotId())
		}
		// A member is an ordinary snapshot too.
		if _, err := s.GetSnapshot(ctx, &csi.GetSnapshotRequest{SnapshotId: sn.GetSnapshotId()}); err != nil {
			t.Errorf("GetSnapshot of member %s: %v", sn.GetSnapshotId(), err)
		}
	}
	slices.Sort(got)
	if want := slices.Sorted(slices.Values(srcs)); !slices.Equal(got, want) {
		t.Errorf("member sources %v, want %v", got, want)
	}
	// Atomic: both zfs snapshots have the same creation time (one txg in
	// the model: one command).
	ca := zfsGet(t, h, "creation", s.parent+"/"+ids[0])
	cb := zfsGet(t, h, "creation", s.parent+"/"+ids[1])
	if ca == "" || ca != cb {
		t.Errorf("member creation times %q and %q differ", ca, cb)
	}

	// Idempotent; the same name with other volumes is ALREADY_EXISTS.
	again, err := g.CreateVolumeGroupSnapshot(ctx, req)
	if err != nil || again.GetGroupSnapshot().GetGroupSnapshotId() != gs.GetGroupSnapshotId() {
		t.Errorf("repeated create: %v %v", again, err)
	}
	_, err = g.CreateVolumeGroupSnapshot(ctx, &csi.CreateVolumeGroupSnapshotRequest{Name: "groupsnapshot-1", SourceVolumeIds: srcs[:1]})
	wantCode(t, "same name, other volumes", err, codes.AlreadyExists)

	// A missing member: nothing is made for the others.
	_, err = g.CreateVolumeGroupSnapshot(ctx, &csi.CreateVolumeGroupSnapshotRequest{Name: "groupsnapshot-2", SourceVolumeIds: []string{a.GetVolumeId(), "pvc-missing"}})
	wantCode(t, "group with a missing volume", err, codes.NotFound)
	if left := zfsLines(t, h, "list", "-H", "-t", "snapshot", "-o", "name", s.parent+"/"+a.GetVolumeId()+"@groupsnapshot-2"); len(left) != 0 {
		t.Errorf("a failed group left %v", left)
	}
	_, err = g.CreateVolumeGroupSnapshot(ctx, &csi.CreateVolumeGroupSnapshotRequest{SourceVolumeIds: srcs})
	wantCode(t, "no name", err, codes.InvalidArgument)
	_, err = g.CreateVolumeGroupSnapshot(ctx, &csi.CreateVolumeGroupSnapshotRequest{Name: "g", SourceVolumeIds: []string{srcs[0], srcs[0]}})
	wantCode(t, "a volume twice", err, codes.InvalidArgument)

	// Get, with and without the member list; a wrong list is a mismatch.
	if _, err := g.GetVolumeGroupSnapshot(ctx, &csi.GetVolumeGroupSnapshotRequest{GroupSnapshotId: gs.GetGroupSnapshotId(), SnapshotIds: ids}); err != nil {
		t.Errorf("GetVolumeGroupSnapshot: %v", err)
	}
	_, err = g.GetVolumeGroupSnapshot(ctx, &csi.GetVolumeGroupSnapshotRequest{GroupSnapshotId: gs.GetGroupSnapshotId(), SnapshotIds: ids[:1]})
	wantCode(t, "get with a wrong member list", err, codes.InvalidArgument)
	_, err = g.GetVolumeGroupSnapshot(ctx, &csi.GetVolumeGroupSnapshotRequest{GroupSnapshotId: "nope"})
	wantCode(t, "get of an unknown group", err, codes.NotFound)

	// Restore one member.
	r := s.mustCreateVolume(t, "pvc-restored", 64*mib, snapshotSource(ids[0]))

	// Delete: every member goes (the restored one's deferred), twice is OK.
	del := &csi.DeleteVolumeGroupSnapshotRequest{GroupSnapshotId: gs.GetGroupSnapshotId(), SnapshotIds: ids}
	if _, err := g.DeleteVolumeGroupSnapshot(ctx, del); err != nil {
		t.Fatalf("DeleteVolumeGroupSnapshot: %v", err)
	}
	if _, err := g.DeleteVolumeGroupSnapshot(ctx, del); err != nil {
		t.Errorf("second delete: %v", err)
	}
	if _, err := g.DeleteVolumeGroupSnapshot(ctx, &csi.DeleteVolumeGroupSnapshotRequest{GroupSnapshotId: "not/a@group"}); err != nil {
		t.Errorf("delete of an invalid id: %v", err)
	}
	_, err = g.GetVolumeGroupSnapshot(ctx, &csi.GetVolumeGroupSnapshotRequest{GroupSnapshotId: gs.GetGroupSnapshotId()})
	wantCode(t, "get after delete", err, codes.NotFound)
	for _, id := range []string{r.GetVolumeId(), a.GetVolumeId(), b.GetVolumeId()} {
		s.mustDeleteVolume(t, id)
	}
	s.assertEmpty(t)
}

// The group's zfs command is one line naming every member: the engine
// never falls back to one snapshot per volume.
func TestSimGroupSnapshotIsOneCommand(t *testing.T) {
	h := startHost(t)
	s := newSimEngine(t, h, "zfs-generic-iscsi", "group1", nil)
	a := s.mustCreateVolume(t, "pvc-a", 16*mib, nil)
	b := s.mustCreateVolume(t, "pvc-b", 16*mib, nil)
	c := s.mustCreateVolume(t, "pvc-c", 16*mib, nil)
	h.Server.ResetCommands()
	if _, err := s.GroupController().CreateVolumeGroupSnapshot(ctx, &csi.CreateVolumeGroupSnapshotRequest{Name: "gs",
		SourceVolumeIds: []string{a.GetVolumeId(), b.GetVolumeId(), c.GetVolumeId()}}); err != nil {
		t.Fatal(err)
	}
	var snaps []string
	for _, r := range h.Server.Commands() {
		if len(r.Argv) > 1 && strings.HasSuffix(r.Argv[0], "zfs") && r.Argv[1] == "snapshot" {
			snaps = append(snaps, strings.Join(r.Argv, " "))
		}
	}
	if len(snaps) != 1 || strings.Count(snaps[0], "@gs") != 3 {
		t.Errorf("zfs snapshot commands: %q, want one naming the three members", snaps)
	}
}

var _ = engine.GroupControllerCapabilities
