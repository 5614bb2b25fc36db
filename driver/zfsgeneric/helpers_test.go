package zfsgeneric

import (
	"github.com/switchyard-csi/switchyard/driver/backend"
	"strings"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func TestCapacity(t *testing.T) {
	const g = 1 << 30
	cases := []struct {
		name     string
		req, lim int64
		block    int64
		want     int64
		code     codes.Code
	}{
		{"default", 0, 0, 0, g, codes.OK},
		{"required", 5 * g, 0, 0, 5 * g, codes.OK},
		{"limit only", 0, 2 * g, 0, 2 * g, codes.OK},
		{"aligned up", 1000, 0, 16384, 16384, codes.OK},
		{"req > limit", 2 * g, g, 0, 0, codes.OutOfRange},
		{"alignment passes limit", 1000, 1000, 16384, 0, codes.OutOfRange},
		{"negative", -1, 0, 0, 0, codes.OutOfRange},
	}
	for _, c := range cases {
		got, err := backend.Capacity(&csi.CapacityRange{RequiredBytes: c.req, LimitBytes: c.lim}, c.block)
		if status.Code(err) != c.code || (c.code == codes.OK && got != c.want) {
			t.Errorf("%s: capacity = %d, %v; want %d, %v", c.name, got, err, c.want, c.code)
		}
	}
}

func TestParseSnapshotID(t *testing.T) {
	d := &Driver{cfg: settings{parent: "tank/v", snapshot: "tank/s"}}
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

func TestAssetName(t *testing.T) {
	tmpl, _ := parseTemplate("{{ parameters.[csi.storage.k8s.io/pvc/namespace] }}-{{ parameters.[csi.storage.k8s.io/pvc/name] }}")
	d := &Driver{cfg: settings{share: shareSettings{namePrefix: "K8s-", nameTemplate: &tmpl}}}
	r := ShareRequest{ID: "pvc-1", Name: "pvc-1", Params: map[string]string{"csi.storage.k8s.io/pvc/namespace": "Apps", "csi.storage.k8s.io/pvc/name": "db"}}
	if got, err := d.assetName("iscsi", r); err != nil || got != "k8s-apps-db" {
		t.Fatalf("assetName = %q, %v", got, err)
	}
	r.Params["csi.storage.k8s.io/pvc/name"] = "db\ncd /; delete"
	if _, err := d.assetName("iscsi", r); status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "nameTemplate") {
		t.Fatalf("a newline in an asset name: %v", err)
	}
	if err := checkQualifiedName("IQN", "iqn.x:"+strings.Repeat("a", 220), "iscsi"); status.Code(err) != codes.FailedPrecondition {
		t.Fatalf("long IQN: %v", err)
	}
}

func TestCheckCapability(t *testing.T) {
	mount := func(fs string, m csi.VolumeCapability_AccessMode_Mode) *csi.VolumeCapability {
		return &csi.VolumeCapability{AccessType: &csi.VolumeCapability_Mount{Mount: &csi.VolumeCapability_MountVolume{FsType: fs}},
			AccessMode: &csi.VolumeCapability_AccessMode{Mode: m}}
	}
	block := &csi.VolumeCapability{AccessType: &csi.VolumeCapability_Block{Block: &csi.VolumeCapability_BlockVolume{}},
		AccessMode: &csi.VolumeCapability_AccessMode{Mode: csi.VolumeCapability_AccessMode_MULTI_NODE_MULTI_WRITER}}
	nfs := &Driver{cfg: settings{driver: DriverNFS, kind: filesystem}}
	iscsi := &Driver{cfg: settings{driver: DriverISCSI, kind: volume}}
	rwx := csi.VolumeCapability_AccessMode_MULTI_NODE_MULTI_WRITER
	rwo := csi.VolumeCapability_AccessMode_SINGLE_NODE_WRITER
	cases := []struct {
		d  *Driver
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
