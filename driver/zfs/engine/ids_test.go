package engine

import (
	"strings"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func TestParseSnapshotID(t *testing.T) {
	d := &Engine{cfg: settings{parent: "tank/v", snapshot: "tank/s"}}
	cases := []struct {
		id       string
		ok       bool
		dataset  string
		detached bool
	}{
		{"pvc-1@snapshot-1", true, "tank/v/pvc-1@snapshot-1", false},
		{"pvc-1/snapshot-1", true, "tank/s/pvc-1/snapshot-1", true},
		{"pvc-1", false, "", false},
		{"@x", false, "", false},
		{"pvc-1@a b", false, "", false},
		{"../x@y", false, "", false},
		{"pvc-1/../../etc", false, "", false},
		{strings.Repeat("a", 300) + "@x", false, "", false},
	}
	for _, c := range cases {
		ref, ok := d.parseSnapshotID(c.id)
		if ok != c.ok || ref.dataset != c.dataset || ref.detached != c.detached {
			t.Errorf("parseSnapshotID(%q) = %+v, %v", c.id, ref, ok)
		}
	}
	// Without a detached parent, "/" ids name nothing.
	d.cfg.snapshot = ""
	if _, ok := d.parseSnapshotID("pvc-1/snapshot-1"); ok {
		t.Error("detached id accepted without detachedSnapshotsDatasetParentName")
	}
}

func TestPageTokens(t *testing.T) {
	keys := []string{"a", "b", "c", "d", "e"}
	key := func(i int) string { return keys[i] }
	from, to, next := page(len(keys), key, "", 2)
	if from != 0 || to != 2 || next != "after:b" {
		t.Fatalf("first page %d..%d %q", from, to, next)
	}
	after, err := parseToken(next)
	if err != nil || after != "b" {
		t.Fatalf("parseToken: %q %v", after, err)
	}
	// "b" deleted in between: the next page still starts at "c".
	keys = []string{"a", "c", "d", "e"}
	from, to, next = page(len(keys), key, after, 0)
	if keys[from] != "c" || to != 4 || next != "" {
		t.Fatalf("second page %d..%d %q", from, to, next)
	}
	for _, bad := range []string{"invalid-token", "after:", "10"} {
		if _, err := parseToken(bad); status.Code(err) != codes.Aborted {
			t.Errorf("parseToken(%q) = %v, want ABORTED", bad, err)
		}
	}
}

func TestCheckCapability(t *testing.T) {
	mount := func(fs string, m csi.VolumeCapability_AccessMode_Mode) *csi.VolumeCapability {
		return &csi.VolumeCapability{AccessType: &csi.VolumeCapability_Mount{Mount: &csi.VolumeCapability_MountVolume{FsType: fs}},
			AccessMode: &csi.VolumeCapability_AccessMode{Mode: m}}
	}
	block := &csi.VolumeCapability{AccessType: &csi.VolumeCapability_Block{Block: &csi.VolumeCapability_BlockVolume{}},
		AccessMode: &csi.VolumeCapability_AccessMode{Mode: csi.VolumeCapability_AccessMode_MULTI_NODE_MULTI_WRITER}}
	nfs := &Engine{cfg: settings{driver: "zfs-generic-nfs", kind: filesystem}, fsTypes: NFSFSTypes}
	iscsi := &Engine{cfg: settings{driver: "zfs-generic-iscsi", kind: volume}, fsTypes: BlockFSTypes}
	rwx := csi.VolumeCapability_AccessMode_MULTI_NODE_MULTI_WRITER
	rwo := csi.VolumeCapability_AccessMode_SINGLE_NODE_WRITER
	cases := []struct {
		d  *Engine
		c  *csi.VolumeCapability
		ok bool
	}{
		{nfs, mount("", rwx), true}, {nfs, mount("nfs", rwo), true}, {nfs, mount("ext4", rwo), false}, {nfs, block, false},
		{iscsi, mount("ext4", rwo), true}, {iscsi, mount("xfs", rwx), false}, {iscsi, block, true}, {iscsi, mount("nfs", rwo), false},
	}
	for i, c := range cases {
		if why := c.d.checkCapability(c.c); (why == "") != c.ok {
			t.Errorf("case %d: %q", i, why)
		}
	}
}
