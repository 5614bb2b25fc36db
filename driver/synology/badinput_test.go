package synology_test

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"

	"github.com/switchyard-csi/switchyard/driver/backend"
	"github.com/switchyard-csi/switchyard/driver/config"
	"github.com/switchyard-csi/switchyard/driver/synology"
	sim "github.com/switchyard-csi/switchyard/simulators/synology"
)

// TestConfigProblems: each bad key is named.
func TestConfigProblems(t *testing.T) {
	for _, tc := range []struct {
		cfg  string
		keys []string
	}{
		{"driver: synology-iscsi\n", []string{"httpConnection.host", "httpConnection.username", "httpConnection.password", "iscsi.targetPortal", "iscsi.baseiqn"}},
		{"driver: synology-nfs\nhttpConnection: {host: h, username: u, password: p, port: 99999, protocol: ftp}\n", []string{"httpConnection.port", "httpConnection.protocol", "nfs.shareHost"}},
		{"driver: synology-iscsi\nhttpConnection: {host: h, username: u, password: p}\niscsi: {targetPortal: h, baseiqn: nope, targetTemplate: {auth_type: 1, user: u, password: short}}\n",
			[]string{"iscsi.baseiqn", "iscsi.targetTemplate"}},
		{"driver: synology-smb\nhttpConnection: {host: h, username: u, password: p}\nsmb: {shareHost: h, namePrefix: 'a/b'}\n", []string{"smb.namePrefix"}},
		{"driver: synology-nfs\nhttpConnection: {host: h, username: u, password: p}\nnfs: {shareHost: h, rootSquash: maybe}\n", []string{"nfs.rootSquash"}},
	} {
		tree, err := config.Parse([]byte(tc.cfg))
		if err != nil {
			t.Fatal(err)
		}
		ps := synology.Validate(tree)
		got := config.Problems(ps).Error()
		for _, k := range tc.keys {
			if !strings.Contains(got, k+":") {
				t.Errorf("%q: problems %q do not name %s", tc.cfg, got, k)
			}
		}
		if len(ps) != len(tc.keys) {
			t.Errorf("%q: %d problems, want %d: %s", tc.cfg, len(ps), len(tc.keys), got)
		}
	}
}

// TestSessionExpiry: a session DSM forgot mid-use is renewed once and the
// call goes through.
func TestSessionExpiry(t *testing.T) {
	r := newRig(t, synology.DriverISCSI, "", sim.Options{})
	r.mustCreate("pvc-a", gib, nil)
	if n := r.d.Client().Logins(); n != 1 {
		t.Fatalf("logins %d", n)
	}
	r.srv.ExpireSessions()
	r.mustCreate("pvc-b", gib, nil)
	if n := r.d.Client().Logins(); n != 2 {
		t.Fatalf("logins after expiry %d, want 2", n)
	}
}

// TestDSMErrors: DSM's refusals become gRPC codes that name the cause and
// nothing is left behind.
func TestDSMErrors(t *testing.T) {
	r := newRig(t, synology.DriverISCSI, "", sim.Options{Volumes: []sim.Volume{{Path: "/volume1", Size: 10 * gib}}})

	// A long name is shortened to a 64-byte id; a long namePrefix can
	// still push the LUN name past DSM's 128 characters.
	long := r.mustCreate(strings.Repeat("a", 129), gib, nil)
	if len(long.GetVolumeId()) != 64 {
		t.Fatalf("id of a 129-byte name: %q", long.GetVolumeId())
	}
	d := r.driver(configFor(synology.DriverISCSI, r.srv.URL(), "  namePrefix: "+strings.Repeat("p", 70)+"\n"))
	_, err := d.CreateVolume(r.ctx, &csi.CreateVolumeRequest{Name: strings.Repeat("a", 64), VolumeCapabilities: mountCap()})
	wantCode(t, err, codes.InvalidArgument, "134 characters", "DSM allows 128", "iscsi.namePrefix")
	_, err = d.CreateVolume(r.ctx, &csi.CreateVolumeRequest{Name: "bad.name", VolumeCapabilities: mountCap()})
	wantCode(t, err, codes.InvalidArgument, "invalid characters")
	if _, err := r.d.DeleteVolume(r.ctx, &csi.DeleteVolumeRequest{VolumeId: long.GetVolumeId()}); err != nil {
		t.Fatal(err)
	}

	_, err = r.create("too-big", 20*gib, nil)
	wantCode(t, err, codes.ResourceExhausted, "18990002", "out of disk space")

	bad := r.driver(strings.Replace(configFor(synology.DriverISCSI, r.srv.URL(), ""), "type: BLUN", "type: THIN", 1))
	_, err = bad.CreateVolume(r.ctx, &csi.CreateVolumeRequest{Name: "thin", VolumeCapabilities: mountCap()})
	wantCode(t, err, codes.InvalidArgument, "18990318", "iscsi.lunTemplate.type")

	_, err = r.d.CreateVolume(r.ctx, &csi.CreateVolumeRequest{Name: "p", VolumeCapabilities: mountCap(), Parameters: map[string]string{"lunTemplate": "type: [oops"}})
	wantCode(t, err, codes.InvalidArgument, "parameters.lunTemplate")

	_, err = r.d.CreateSnapshot(r.ctx, &csi.CreateSnapshotRequest{SourceVolumeId: "nope", Name: "s"})
	wantCode(t, err, codes.NotFound, "nope")
	_, err = r.d.ControllerExpandVolume(r.ctx, &csi.ControllerExpandVolumeRequest{VolumeId: "nope", CapacityRange: &csi.CapacityRange{RequiredBytes: gib}})
	wantCode(t, err, codes.NotFound)

	if ids := r.volumeIDs(); len(ids) != 0 {
		t.Fatalf("refused calls left volumes: %v", ids)
	}
	luns, _ := r.d.Client().ListLUNs(r.ctx)
	if len(luns) != 0 {
		t.Fatalf("refused calls left LUNs: %v", luns)
	}
}

// TestWrongPassword: UNAUTHENTICATED naming the keys, and the password in
// no message or log line.
func TestWrongPassword(t *testing.T) {
	r := newRig(t, synology.DriverNFS, "", sim.Options{})
	var logs bytes.Buffer
	cfg := strings.Replace(configFor(synology.DriverNFS, r.srv.URL(), ""), "password: "+sim.DefaultPassword, "password: Sekr1t-Pw", 1)
	tree, _ := config.Parse([]byte(cfg))
	d, err := synology.New(backend.Options{Config: tree, Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	_, err = d.CreateVolume(r.ctx, &csi.CreateVolumeRequest{Name: "v", VolumeCapabilities: mountCap()})
	wantCode(t, err, codes.Unauthenticated, "400", "incorrect password", "httpConnection.password")
	if strings.Contains(err.Error()+logs.String(), "Sekr1t") {
		t.Fatal("the password leaked")
	}
}

// TestUnreachable: no DSM at the address is UNAVAILABLE naming the keys.
func TestUnreachable(t *testing.T) {
	r := newRig(t, synology.DriverSMB, "", sim.Options{})
	url := r.srv.URL()
	r.srv.Close()
	d := r.driver(configFor(synology.DriverSMB, url, ""))
	_, err := d.GetCapacity(r.ctx, &csi.GetCapacityRequest{})
	wantCode(t, err, codes.Unavailable, "httpConnection.protocol, host, port")
}

// TestCapabilities: shares refuse block, LUNs refuse mounted multi-writer.
func TestCapabilities(t *testing.T) {
	r := newRig(t, synology.DriverNFS, "", sim.Options{})
	block := []*csi.VolumeCapability{{AccessType: &csi.VolumeCapability_Block{Block: &csi.VolumeCapability_BlockVolume{}},
		AccessMode: &csi.VolumeCapability_AccessMode{Mode: csi.VolumeCapability_AccessMode_SINGLE_NODE_WRITER}}}
	_, err := r.d.CreateVolume(r.ctx, &csi.CreateVolumeRequest{Name: "b", VolumeCapabilities: block})
	wantCode(t, err, codes.InvalidArgument, "block")
	c, err := r.d.GetCapacity(r.ctx, &csi.GetCapacityRequest{VolumeCapabilities: block})
	if err != nil || c.GetAvailableCapacity() != 0 {
		t.Fatalf("capacity for block on nfs: %v %v", c, err)
	}
	ri := newRig(t, synology.DriverISCSI, "", sim.Options{})
	mnmw := mountCap()
	mnmw[0].AccessMode.Mode = csi.VolumeCapability_AccessMode_MULTI_NODE_MULTI_WRITER
	_, err = ri.d.CreateVolume(ri.ctx, &csi.CreateVolumeRequest{Name: "m", VolumeCapabilities: mnmw})
	wantCode(t, err, codes.InvalidArgument, "MULTI_NODE_MULTI_WRITER")
	block[0].AccessMode.Mode = csi.VolumeCapability_AccessMode_MULTI_NODE_MULTI_WRITER
	if _, err := ri.d.CreateVolume(ri.ctx, &csi.CreateVolumeRequest{Name: "m", VolumeCapabilities: block}); err != nil {
		t.Fatal(err)
	}
}

// TestSessionExpiryMidCall: DSM ends the session between the requests of
// one CreateVolume (after the LUN is made, before its target) and of one
// DeleteVolume; the driver logs in again once and finishes the call,
// making nothing twice and leaving nothing behind. A session lost again
// right after the re-login is UNAVAILABLE saying so, with no login loop and
// no LUN left.
func TestSessionExpiryMidCall(t *testing.T) {
	r := newRig(t, synology.DriverISCSI, "", sim.Options{DeleteDelay: -1})
	expireOn := func(api, method string) {
		var once sync.Once
		r.srv.BeforeCall(func(a, m string) {
			if a == api && m == method {
				once.Do(r.srv.ExpireSessions)
			}
		})
	}
	r.mustCreate("warm-up", gib, nil) // the first login
	expireOn("SYNO.Core.ISCSI.Target", "create")
	v := r.mustCreate("pvc-1", gib, nil)
	if n := r.d.Client().Logins(); n != 2 {
		t.Fatalf("logins %d, want 2 (one re-login mid-call)", n)
	}
	inv := r.srv.Inventory()
	if len(inv.LUNs) != 2 || len(inv.Targets) != 2 {
		t.Fatalf("after the mid-call expiry: %d LUNs, %d targets; want 2 and 2: %+v", len(inv.LUNs), len(inv.Targets), inv)
	}
	expireOn("SYNO.Core.ISCSI.LUN", "delete")
	if _, err := r.d.DeleteVolume(r.ctx, &csi.DeleteVolumeRequest{VolumeId: v.GetVolumeId()}); err != nil {
		t.Fatalf("DeleteVolume across a lost session: %v", err)
	}
	if inv := r.srv.Inventory(); len(inv.LUNs) != 1 || len(inv.Targets) != 1 {
		t.Fatalf("after the delete: %+v", inv)
	}

	// Lost at every LUN create: the re-login does not help.
	r.srv.BeforeCall(func(a, m string) {
		if a == "SYNO.Core.ISCSI.LUN" && m == "create" {
			r.srv.ExpireSessions()
		}
	})
	before := r.d.Client().Logins()
	_, err := r.create("pvc-2", gib, nil)
	wantCode(t, err, codes.Unavailable, "session was lost twice")
	if n := r.d.Client().Logins() - before; n != 1 {
		t.Fatalf("%d logins for one call, want exactly 1 re-login", n)
	}
	r.srv.BeforeCall(nil)
	if inv := r.srv.Inventory(); len(inv.LUNs) != 1 {
		t.Fatalf("the failed create left LUNs: %+v", inv)
	}
}
