package node

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/driver/volumecontext"
)

const (
	testIQN  = "iqn.2003-01.org.linux-iscsi.tank:pvc-1"
	chapPass = "Chap-S3cret-Value"
)

func iscsiCtx(kv ...string) map[string]string {
	vc := map[string]string{
		volumecontext.KeyAttachDriver: "iscsi", "provisioner_driver": "zfs-generic-iscsi",
		volumecontext.KeyPortal: "10.0.0.5", volumecontext.KeyPortals: "", volumecontext.KeyInterface: "", volumecontext.KeyIQN: testIQN, volumecontext.KeyLUN: "0",
	}
	for i := 0; i+1 < len(kv); i += 2 {
		vc[kv[i]] = kv[i+1]
	}
	return vc
}

// iscsiTarget is a fake open-iscsi with testIQN (LUN 0, 1 GiB) reachable
// at 10.0.0.5:3260 and 10.0.0.7:3260.
func iscsiTargetSim(f *attachFixture) *fakeISCSI {
	k := newFakeISCSI(f)
	k.luns[testIQN] = map[int]int64{0: 1 << 30}
	k.portals["10.0.0.5:3260"] = true
	k.portals["10.0.0.7:3260"] = true
	return k
}

func chapSecrets() map[string]string {
	return map[string]string{
		"node-db.node.session.auth.authmethod": "CHAP",
		"node-db.node.session.auth.username":   "initiator-user",
		// democratic-csi's prefixed form for one provisioner driver
		"democratic-csi.org/zfs-generic-iscsi/node-db.node.session.auth.password": chapPass,
		"mount_flags": "noatime",
	}
}

// The command lines per portal, CHAP from the secrets, redacted in logs.
func TestISCSIStageCommandLines(t *testing.T) {
	f := newAttachFixture(t)
	k := iscsiTargetSim(f)
	k.chap[testIQN] = chapPass
	r := f.stageCtx(iscsiCtx(volumecontext.KeyInterface, "default"), mountCap(snw))
	r.Secrets = chapSecrets()
	f.mustStage(t, r)

	node := "iscsiadm -m node -T " + testIQN + " -p 10.0.0.5:3260 -I default"
	want := []string{
		node + " -o new",
		node + " -o update -n node.startup -v manual",
		node + " -o update -n node.session.auth.authmethod -v CHAP",
		node + " -o update -n node.session.auth.password -v " + chapPass,
		node + " -o update -n node.session.auth.username -v initiator-user",
		node + " -l",
		node + " -R",
	}
	if got := f.sim.lines("iscsiadm"); !slices.Equal(got, want) {
		t.Fatalf("iscsiadm commands\n got %q\nwant %q", got, want)
	}
	if strings.Contains(f.logs.String(), chapPass) || strings.Contains(f.logs.String(), "initiator-user") {
		t.Fatalf("CHAP credentials logged: %s", f.logs.String())
	}
	if !strings.Contains(f.logs.String(), redacted) {
		t.Fatalf("no redaction marker in the logs: %s", f.logs.String())
	}
	dev := f.tree.path("dev/sdb")
	mp, ok := f.mountAt(f.staging)
	if !ok || mp.Device != dev || !slices.Contains(mp.Opts, "noatime") {
		t.Fatalf("staging mount %+v (%t), want %s with noatime", mp, ok, dev)
	}
}

func TestISCSIAlreadyLoggedIn(t *testing.T) {
	f := newAttachFixture(t)
	k := iscsiTargetSim(f)
	// A session exists already (exit 15 on login, and on -o new).
	for _, op := range [][]string{{"-o", "new"}, {"-l"}} {
		if _, err := k.node(append([]string{"iscsiadm", "-m", "node", "-T", testIQN, "-p", "10.0.0.5:3260"}, op...)); err != nil {
			t.Fatal(err)
		}
	}
	f.mustStage(t, f.stageCtx(iscsiCtx(), mountCap(snw)))
	if n := len(f.sim.lines("iscsiadm -m node -T " + testIQN + " -p 10.0.0.5:3260 -l")); n != 1 {
		t.Fatalf("%d logins, want 1: exit 15 is success", n)
	}
}

func TestISCSILoginRefused(t *testing.T) {
	f := newAttachFixture(t)
	k := iscsiTargetSim(f)
	k.chap[testIQN] = "the-right-one"
	r := f.stageCtx(iscsiCtx(), mountCap(snw))
	r.Secrets = chapSecrets()
	_, err := f.svc.NodeStageVolume(context.Background(), r)
	wantCode(t, err, codes.Internal)
	msg := status.Convert(err).Message()
	for _, s := range []string{"10.0.0.5:3260", testIQN, "authorization failure", "exit 24"} {
		if !strings.Contains(msg, s) {
			t.Errorf("message %q lacks %q", msg, s)
		}
	}
	if strings.Contains(msg, chapPass) || strings.Contains(f.logs.String(), chapPass) {
		t.Fatal("CHAP password in the error or the logs")
	}
	if n := len(f.sim.lines("iscsiadm -m node -T " + testIQN + " -p 10.0.0.5:3260 -l")); n != 1 {
		t.Fatalf("%d logins: a refused login is not retried", n)
	}
}

func TestISCSIUnreachablePortalIsRetried(t *testing.T) {
	f := newAttachFixture(t)
	iscsiTargetSim(f)
	_, err := f.svc.NodeStageVolume(context.Background(), f.stageCtx(iscsiCtx(volumecontext.KeyPortal, "10.0.0.9:3260"), mountCap(snw)))
	wantCode(t, err, codes.Internal)
	if !strings.Contains(err.Error(), "portal 10.0.0.9:3260") || !strings.Contains(err.Error(), "connection timed out") {
		t.Fatalf("error %q should name the portal and carry iscsiadm's message", err)
	}
	if n := len(f.sim.lines("iscsiadm -m node -T " + testIQN + " -p 10.0.0.9:3260 -l")); n != 3 {
		t.Fatalf("%d logins, want 3", n)
	}
}

// Several portals: a session per portal and the multipath map over them.
func TestISCSIMultipath(t *testing.T) {
	f := newAttachFixture(t)
	k := iscsiTargetSim(f)
	k.dmMultipath = true
	f.mustStage(t, f.stageCtx(iscsiCtx(volumecontext.KeyPortal, "", volumecontext.KeyPortals, "10.0.0.5:3260, storage.example"), blockCap(snw)))
	for _, p := range []string{"10.0.0.5:3260", "10.0.0.7:3260"} {
		if n := len(f.sim.lines("iscsiadm -m node -T " + testIQN + " -p " + p + " -l")); n != 1 {
			t.Errorf("%d logins through %s", n, p)
		}
	}
	mp, ok := f.mountAt(filepath.Join(f.staging, StagedBlockDevice))
	if !ok || mp.Device != f.tree.path("dev/dm-0") {
		t.Fatalf("block_device mount %+v (%t), want the multipath map dev/dm-0", mp, ok)
	}
}

func TestISCSIMultipathMissing(t *testing.T) {
	f := newAttachFixture(t)
	iscsiTargetSim(f) // no multipathd
	_, err := f.svc.NodeStageVolume(context.Background(), f.stageCtx(iscsiCtx(volumecontext.KeyPortals, "10.0.0.7"), mountCap(snw)))
	wantCode(t, err, codes.Internal)
	if !strings.Contains(err.Error(), "multipathd") {
		t.Fatalf("error %q should point at multipathd", err)
	}
}

// Logout and node record deletion per portal, only when no other staged
// volume of the node uses the target; a vanished session is no error.
func TestISCSIUnstage(t *testing.T) {
	f := newAttachFixture(t)
	k := iscsiTargetSim(f)
	k.luns[testIQN][1] = 1 << 30
	stgA, stgB := filepath.Join(f.root, "stg-a"), filepath.Join(f.root, "stg-b")
	f.mustStage(t, &csi.NodeStageVolumeRequest{VolumeId: "vol-a", StagingTargetPath: stgA, VolumeCapability: mountCap(snw), VolumeContext: iscsiCtx()})
	f.mustStage(t, &csi.NodeStageVolumeRequest{VolumeId: "vol-b", StagingTargetPath: stgB, VolumeCapability: mountCap(snw), VolumeContext: iscsiCtx(volumecontext.KeyLUN, "1")})

	f.sim.reset()
	if err := f.unstage("vol-a", stgA); err != nil {
		t.Fatal(err)
	}
	if got := f.sim.lines("iscsiadm"); len(got) != 0 {
		t.Fatalf("vol-b still uses the target, but unstage of vol-a ran %q", got)
	}
	// The target vanished: the session is gone (exit 21 on logout).
	delete(k.sessions, testIQN+"@10.0.0.5:3260")
	if err := f.unstage("vol-b", stgB); err != nil {
		t.Fatalf("unstage after the target vanished: %v", err)
	}
	node := "iscsiadm -m node -T " + testIQN + " -p 10.0.0.5:3260"
	if got, want := f.sim.lines("iscsiadm"), []string{node + " -u", node + " -o delete"}; !slices.Equal(got, want) {
		t.Fatalf("unstage ran %q, want %q", got, want)
	}
	if len(k.records) != 0 {
		t.Fatalf("node records left: %v", k.records)
	}
	// Nothing left to undo: unstage is still fine.
	if err := f.unstage("vol-b", stgB); err != nil {
		t.Fatal(err)
	}
}

func TestISCSIValidation(t *testing.T) {
	tests := []struct {
		name    string
		vc      map[string]string
		secrets map[string]string
		mention string
	}{
		{"no iqn", iscsiCtx(volumecontext.KeyIQN, ""), nil, `"iqn"`},
		{"no lun", iscsiCtx(volumecontext.KeyLUN, ""), nil, `"lun"`},
		{"lun not a number", iscsiCtx(volumecontext.KeyLUN, "first"), nil, "lun"},
		{"no portal", iscsiCtx(volumecontext.KeyPortal, ""), nil, `"portal"`},
		{"bad portal", iscsiCtx(volumecontext.KeyPortal, "10.0.0.5:http"), nil, "bad port"},
		{"bad node setting", iscsiCtx(), map[string]string{"node-db.node.session;reboot": "x"}, "node-db.node.session;reboot"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newAttachFixture(t)
			r := f.stageCtx(tt.vc, mountCap(snw))
			r.Secrets = tt.secrets
			_, err := f.svc.NodeStageVolume(context.Background(), r)
			wantCode(t, err, codes.InvalidArgument)
			if msg := status.Convert(err).Message(); !strings.Contains(msg, tt.mention) {
				t.Fatalf("message %q does not mention %q", msg, tt.mention)
			}
		})
	}
}

func TestNormalizePortal(t *testing.T) {
	tests := []struct{ in, want, wantErr string }{
		{"10.0.0.5", "10.0.0.5:3260", ""},
		{"10.0.0.5:3261", "10.0.0.5:3261", ""},
		{"san.example", "san.example:3260", ""},
		{"[fd00::5]", "[fd00::5]:3260", ""},
		{"[fd00::5]:3262", "[fd00::5]:3262", ""},
		{"fd00::5", "[fd00::5]:3260", ""},
		{"[fd00::5", "", "unclosed"},
		{":3260", "", "no host"},
		{"10.0.0.5:0", "", "bad port"},
	}
	for _, tt := range tests {
		got, err := normalizePortal(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("normalizePortal(%q) err = %v, want %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("normalizePortal(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}
