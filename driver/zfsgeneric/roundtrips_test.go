package zfsgeneric_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/driver/zfsgeneric"
	"github.com/switchyard-csi/switchyard/lab/zfshost"
	"github.com/switchyard-csi/switchyard/simulators/zfsssh"
)

// execs counts the SSH exec requests (sessions) the server saw, and the
// connections they came on.
func execs(recs []zfsssh.Record) (sessions, conns int) {
	type key struct{ conn, session, program uint64 }
	seen, connSeen := map[key]bool{}, map[uint64]bool{}
	for _, r := range recs {
		seen[key{r.Conn, r.Session, r.Program}] = true
		connSeen[r.Conn] = true
	}
	return len(seen), len(connSeen)
}

// In the steady state (the host probed and the parent's mountpoint known,
// here from GetCapacity) every provisioning call of zfs-generic-nfs and
// -smb is one exec, counted at the SSH server, all on one connection
// (ControllerExpandVolume too: its size comparison runs on the host, see
// expand_test.go).
func TestOneExecPerCall(t *testing.T) {
	for _, driver := range []string{zfsgeneric.DriverNFS, zfsgeneric.DriverSMB} {
		t.Run(driver, func(t *testing.T) {
			h := startHost(t, zfshost.Options{})
			d := newDriver(t, genericConfig(h, driver, ""))
			if _, err := d.GetCapacity(ctx, &csi.GetCapacityRequest{}); err != nil {
				t.Fatal(err)
			}
			var vol *csi.Volume
			var snap *csi.Snapshot
			steps := []struct {
				name string
				want int
				run  func() error
			}{
				{"CreateVolume", 1, func() error {
					r, err := d.CreateVolume(ctx, createReq("pvc-one", 1<<30))
					vol = r.GetVolume()
					return err
				}},
				{"CreateVolume again", 1, func() error { _, err := d.CreateVolume(ctx, createReq("pvc-one", 1<<30)); return err }},
				{"CreateSnapshot", 1, func() error {
					r, err := d.CreateSnapshot(ctx, &csi.CreateSnapshotRequest{Name: "snap-one", SourceVolumeId: vol.GetVolumeId()})
					snap = r.GetSnapshot()
					return err
				}},
				{"CreateSnapshot again", 1, func() error {
					_, err := d.CreateSnapshot(ctx, &csi.CreateSnapshotRequest{Name: "snap-one", SourceVolumeId: vol.GetVolumeId()})
					return err
				}},
				{"DeleteSnapshot", 1, func() error {
					_, err := d.DeleteSnapshot(ctx, &csi.DeleteSnapshotRequest{SnapshotId: snap.GetSnapshotId()})
					return err
				}},
				{"ControllerExpandVolume", 1, func() error {
					_, err := d.ControllerExpandVolume(ctx, &csi.ControllerExpandVolumeRequest{VolumeId: vol.GetVolumeId(), CapacityRange: &csi.CapacityRange{RequiredBytes: 2 << 30}})
					return err
				}},
				{"DeleteVolume", 1, func() error {
					_, err := d.DeleteVolume(ctx, &csi.DeleteVolumeRequest{VolumeId: vol.GetVolumeId()})
					return err
				}},
				{"DeleteVolume again", 1, func() error {
					_, err := d.DeleteVolume(ctx, &csi.DeleteVolumeRequest{VolumeId: vol.GetVolumeId()})
					return err
				}},
			}
			for _, s := range steps {
				h.Server.ResetCommands()
				if err := s.run(); err != nil {
					t.Fatalf("%s: %v", s.name, err)
				}
				n, conns := execs(h.Server.Commands())
				if n != s.want || conns != 1 {
					t.Errorf("%s: %d execs on %d connections, want %d on 1: %v", s.name, n, conns, s.want, h.Server.Commands())
				}
			}
			if got := zfsLines(t, h, "list", "-H", "-o", "name", "-r", "tank/k8s/v"); len(got) != 1 {
				t.Fatalf("left on the host: %v", got)
			}
		})
	}
}

// The one-exec create predicts the share path from the parent's mountpoint:
// when an administrator moves the parent, the read-back shows the real
// mountpoint and the stored and returned share follow it.
func TestOneExecCreateFollowsAMovedParent(t *testing.T) {
	h := startHost(t, zfshost.Options{})
	d := newDriver(t, genericConfig(h, zfsgeneric.DriverNFS, ""))
	if _, err := d.GetCapacity(ctx, &csi.GetCapacityRequest{}); err != nil {
		t.Fatal(err)
	}
	zfsLines(t, h, "set", "mountpoint=/srv/moved", "tank/k8s/v")
	r, err := d.CreateVolume(ctx, createReq("pvc-moved", 1<<30))
	if err != nil {
		t.Fatal(err)
	}
	if got := r.GetVolume().GetVolumeContext()["share"]; got != "/srv/moved/pvc-moved" {
		t.Fatalf("share %q, want /srv/moved/pvc-moved", got)
	}
	again, err := d.CreateVolume(ctx, createReq("pvc-moved", 1<<30))
	if err != nil || again.GetVolume().GetVolumeContext()["share"] != "/srv/moved/pvc-moved" {
		t.Fatalf("retry: %v %v", again.GetVolume().GetVolumeContext(), err)
	}
	// Learnt: the next volume is predicted right, in one exec.
	h.Server.ResetCommands()
	r, err = d.CreateVolume(ctx, createReq("pvc-next", 1<<30))
	if err != nil || r.GetVolume().GetVolumeContext()["share"] != "/srv/moved/pvc-next" {
		t.Fatalf("next: %v %v", r.GetVolume().GetVolumeContext(), err)
	}
	if n, _ := execs(h.Server.Commands()); n != 1 {
		t.Fatalf("next create: %d execs, want 1", n)
	}
}

// A snapshot name another volume holds is refused, and the snapshot the
// one-exec program made before it could see the conflict is gone again.
func TestOneExecSnapshotConflictLeavesNothing(t *testing.T) {
	h := startHost(t, zfshost.Options{})
	d := newDriver(t, genericConfig(h, zfsgeneric.DriverNFS, ""))
	if _, err := d.GetCapacity(ctx, &csi.GetCapacityRequest{}); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, n := range []string{"pvc-a", "pvc-b"} {
		r, err := d.CreateVolume(ctx, createReq(n, 1<<30))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.GetVolume().GetVolumeId())
	}
	if _, err := d.CreateSnapshot(ctx, &csi.CreateSnapshotRequest{Name: "s", SourceVolumeId: ids[0]}); err != nil {
		t.Fatal(err)
	}
	_, err := d.CreateSnapshot(ctx, &csi.CreateSnapshotRequest{Name: "s", SourceVolumeId: ids[1]})
	if status.Code(err) != codes.AlreadyExists {
		t.Fatalf("got %v, want ALREADY_EXISTS", err)
	}
	if got := zfsLines(t, h, "list", "-H", "-o", "name", "-t", "snapshot", "-r", "tank/k8s/v"); len(got) != 1 {
		t.Fatalf("snapshots left: %v, want only %s@s", got, ids[0])
	}
}

// Drivers built from the same connection settings (the proxy's rebuild of
// a changed connection file, or two files naming one host) share one SSH
// connection, which outlives the first driver's Close and goes with the
// last.
func TestDriversShareOneSSHConnection(t *testing.T) {
	h := startHost(t, zfshost.Options{})
	cfg := genericConfig(h, zfsgeneric.DriverNFS, "")
	old, cur := newDriver(t, cfg), newDriver(t, cfg)
	conns := func() map[uint64]bool {
		seen := map[uint64]bool{}
		for _, r := range h.Server.Commands() {
			seen[r.Conn] = true
		}
		return seen
	}
	if _, err := old.GetCapacity(ctx, &csi.GetCapacityRequest{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cur.CreateVolume(ctx, createReq("pvc-shared", 1<<30)); err != nil {
		t.Fatal(err)
	}
	old.Close() // the retired generation
	if _, err := cur.DeleteVolume(ctx, &csi.DeleteVolumeRequest{VolumeId: "pvc-shared"}); err != nil {
		t.Fatalf("after the old driver closed: %v", err)
	}
	if n := len(conns()); n != 1 {
		t.Fatalf("%d SSH connections for one host and login, want 1", n)
	}
	cur.Close()
	h.Server.ResetCommands()
	next := newDriver(t, cfg)
	if _, err := next.GetCapacity(ctx, &csi.GetCapacityRequest{}); err != nil {
		t.Fatal(err)
	}
	for c := range conns() {
		if c == 1 {
			t.Fatalf("the connection was kept after its last driver closed")
		}
	}
}

// Block volumes (iSCSI, NVMe-oF) make their target with targetcli or
// nvmetcli in a run of its own; the rest of a new volume is one create
// (without a read first, the parent being known) and the final labels:
// three execs in the steady state, and the host probe once per connection.
func TestBlockCreateExecs(t *testing.T) {
	for _, driver := range []string{zfsgeneric.DriverISCSI, zfsgeneric.DriverNVMeoF} {
		t.Run(driver, func(t *testing.T) {
			h := startHost(t, zfshost.Options{})
			d := newDriver(t, genericConfig(h, driver, ""))
			if _, err := d.GetCapacity(ctx, &csi.GetCapacityRequest{}); err != nil {
				t.Fatal(err)
			}
			if _, err := d.CreateVolume(ctx, &csi.CreateVolumeRequest{Name: "pvc-first", VolumeCapabilities: blockCaps(), CapacityRange: &csi.CapacityRange{RequiredBytes: 1 << 30}}); err != nil {
				t.Fatal(err)
			}
			h.Server.ResetCommands()
			r, err := d.CreateVolume(ctx, &csi.CreateVolumeRequest{Name: "pvc-b", VolumeCapabilities: blockCaps(), CapacityRange: &csi.CapacityRange{RequiredBytes: 1 << 30}})
			if err != nil {
				t.Fatal(err)
			}
			if n, _ := execs(h.Server.Commands()); n != 3 {
				t.Errorf("CreateVolume: %d execs, want 3: %v", n, h.Server.Commands())
			}
			// A repeated create finds the volume with one read.
			h.Server.ResetCommands()
			again, err := d.CreateVolume(ctx, &csi.CreateVolumeRequest{Name: "pvc-b", VolumeCapabilities: blockCaps(), CapacityRange: &csi.CapacityRange{RequiredBytes: 1 << 30}})
			if err != nil || again.GetVolume().GetVolumeId() != r.GetVolume().GetVolumeId() {
				t.Fatalf("repeat: %v %v", again, err)
			}
			if n, _ := execs(h.Server.Commands()); n > 2 {
				t.Errorf("repeated CreateVolume: %d execs, want at most 2 (the refused create, the read)", n)
			}
		})
	}
}

// The nvmet readiness check (configIsImportedFilePath) shares the nvmetcli
// exec: a host whose flag file is missing gets no nvmetcli run, and the
// call answers UNAVAILABLE naming the key.
func TestNVMeoFNotReadyInTheSameExec(t *testing.T) {
	h := startHost(t, zfshost.Options{})
	cfg := strings.Replace(genericConfig(h, zfsgeneric.DriverNVMeoF, ""), "/var/run/nvmet-config-loaded", "/var/run/not-restored-yet", 1)
	d := newDriver(t, cfg)
	_, err := d.CreateVolume(ctx, &csi.CreateVolumeRequest{Name: "pvc-n", VolumeCapabilities: blockCaps(), CapacityRange: &csi.CapacityRange{RequiredBytes: 1 << 30}})
	wantStatus(t, "create before nvmet is restored", err, codes.Unavailable, "/var/run/not-restored-yet", "configIsImportedFilePath")
	for _, r := range h.Server.Commands() {
		if strings.Contains(strings.Join(r.Argv, " "), "nvmetcli") {
			t.Fatalf("nvmetcli ran although the flag file is missing: %v", r.Argv)
		}
	}
}

// A one-exec create whose prediction was wrong and whose answer was lost
// (the connection dropped after the create took effect) is corrected by
// the retry, even from a driver that knows nothing of the parent yet (a
// restarted process).
func TestWrongPredictionCorrectedByTheRetry(t *testing.T) {
	h := startHost(t, zfshost.Options{})
	cfg := genericConfig(h, zfsgeneric.DriverNFS, "")
	d := newDriver(t, cfg)
	if _, err := d.GetCapacity(ctx, &csi.GetCapacityRequest{}); err != nil {
		t.Fatal(err)
	}
	zfsLines(t, h, "set", "mountpoint=/srv/elsewhere", "tank/k8s/v")
	h.Server.Faults().DropAfter(1) // the zfs create runs; its answer is lost
	if _, err := d.CreateVolume(ctx, createReq("pvc-lost", 1<<30)); status.Code(err) != codes.Unavailable {
		t.Fatalf("got %v, want UNAVAILABLE from the dropped connection", err)
	}
	restarted := newDriver(t, cfg)
	r, err := restarted.CreateVolume(ctx, createReq("pvc-lost", 1<<30))
	if err != nil {
		t.Fatal(err)
	}
	if got := r.GetVolume().GetVolumeContext()["share"]; got != "/srv/elsewhere/pvc-lost" {
		t.Fatalf("share %q after the retry, want /srv/elsewhere/pvc-lost", got)
	}
	stored := zfsLines(t, h, "get", "-H", "-o", "value", "democratic-csi:csi_share_volume_context", "tank/k8s/v/pvc-lost")
	if len(stored) != 1 || !strings.Contains(stored[0], "/srv/elsewhere/pvc-lost") {
		t.Fatalf("stored context %v", stored)
	}
}

// The connection drops after the n-th command of a steady-state create
// (the parent known: the one-exec program for NFS, create-first for block
// volumes). The command took effect, its answer is lost; the retries must
// converge on exactly one provisioned dataset and one target.
func TestDroppedConnectionMidProgramConverges(t *testing.T) {
	for _, driver := range []string{zfsgeneric.DriverNFS, zfsgeneric.DriverISCSI, zfsgeneric.DriverNVMeoF} {
		for n := 1; n <= 5; n++ {
			t.Run(fmt.Sprintf("%s/after-%d", driver, n), func(t *testing.T) {
				h := startHost(t, zfshost.Options{})
				d := newDriver(t, genericConfig(h, driver, ""))
				if _, err := d.GetCapacity(ctx, &csi.GetCapacityRequest{}); err != nil {
					t.Fatal(err)
				}
				caps := mountCaps()
				if driver != zfsgeneric.DriverNFS {
					caps = blockCaps()
				}
				req := &csi.CreateVolumeRequest{Name: "pvc-1", VolumeCapabilities: caps, CapacityRange: &csi.CapacityRange{RequiredBytes: 1 << 30}}
				h.Server.Faults().DropAfter(n)
				var err error
				var resp *csi.CreateVolumeResponse
				failures := 0
				for range 5 {
					if resp, err = d.CreateVolume(ctx, req); err == nil {
						break
					}
					failures++
					if status.Code(err) != codes.Unavailable {
						t.Fatalf("%v (want UNAVAILABLE while the connection drops)", err)
					}
				}
				if err != nil {
					t.Fatalf("never converged: %v", err)
				}
				if n <= 2 && failures == 0 {
					t.Fatalf("the drop after %d commands never hit the create", n)
				}
				if got := zfsLines(t, h, "list", "-H", "-o", "name", "-r", "-t", "filesystem,volume", "tank/k8s/v"); len(got) != 2 {
					t.Fatalf("datasets: %v", got)
				}
				if got := zfsLines(t, h, "get", "-H", "-o", "value", "democratic-csi:provision_success", "tank/k8s/v/pvc-1"); len(got) != 1 || got[0] != "true" {
					t.Fatalf("provision_success: %v", got)
				}
				switch driver {
				case zfsgeneric.DriverISCSI:
					if lio := h.Server.LIO(); len(lio.Targets) != 1 || len(lio.StorageObjects) != 1 {
						t.Fatalf("LIO: %+v", lio)
					}
				case zfsgeneric.DriverNVMeoF:
					if k := len(h.Server.NVMet().Subsystems); k != 1 {
						t.Fatalf("nvmet subsystems: %d", k)
					}
				case zfsgeneric.DriverNFS:
					if got := resp.GetVolume().GetVolumeContext()["share"]; got != "/tank/k8s/v/pvc-1" {
						t.Fatalf("share %q", got)
					}
				}
			})
		}
	}
}
