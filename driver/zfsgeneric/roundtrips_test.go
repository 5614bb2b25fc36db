package zfsgeneric_test

import (
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"

	"github.com/switchyard-csi/switchyard/driver/zfsgeneric"
	"github.com/switchyard-csi/switchyard/lab/zfshost"
	"github.com/switchyard-csi/switchyard/simulators/zfsssh"
)

// execs counts the SSH exec requests (sessions) the server saw, and the
// connections they came on.
func execs(recs []zfsssh.Record) (sessions, conns int) {
	type key struct{ conn, session uint64 }
	seen, connSeen := map[key]bool{}, map[uint64]bool{}
	for _, r := range recs {
		seen[key{r.Conn, r.Session}] = true
		connSeen[r.Conn] = true
	}
	return len(seen), len(connSeen)
}

// In the steady state (the host probed and the parent's mountpoint known,
// here from GetCapacity) every provisioning call of zfs-generic-nfs and
// -smb is one exec, counted at the SSH server, all on one connection.
// ControllerExpandVolume is two: whether to grow depends on the size read
// first, and a program of plain command lists cannot compare it (see
// docs/performance.md).
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
				{"ControllerExpandVolume", 2, func() error {
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
