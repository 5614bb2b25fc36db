package demo

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"

	"github.com/switchyard-csi/switchyard/lab/csiclient"
	"github.com/switchyard-csi/switchyard/simulators/synology"
)

// startSynology runs the DSM 7 Web API simulator in this process over
// https (its own certificate) on a free port. Its LUNs are sparse files in
// dir; they are not served over iSCSI (the host kernel has no target).
// Deleted LUNs linger 20 ms, as DSM deletes in the background, so the
// demo's DeleteVolume waits for that like it would on a NAS.
func startSynology(dir string) (*synology.Server, error) {
	srv, err := synology.New(synology.Options{
		StateDir: dir, DeleteDelay: 20 * time.Millisecond,
		Volumes: []synology.Volume{{Path: synology.DefaultVolume, Size: 100 << 30}},
		Logger:  slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		return nil, err
	}
	if err := srv.Start("127.0.0.1:0"); err != nil {
		srv.Close()
		return nil, err
	}
	return srv, nil
}

// synologyConnections is the demo's synology-iscsi connection file, in
// democratic-csi's keys. allowInsecure: the simulator's certificate is
// self-signed, as a DSM's own is out of the box.
func synologyConnections(dir string, srv *synology.Server) map[string]string {
	u, _ := url.Parse(srv.URL())
	return map[string]string{filepath.Join(dir, "connections", "synology-iscsi.yaml"): fmt.Sprintf(`driver: synology-iscsi
httpConnection:
  protocol: https
  host: %s
  port: %s
  username: %s
  password: %s
  allowInsecure: true
synology:
  volume: %s
iscsi:
  targetPortal: 127.0.0.1:3260
  baseiqn: "iqn.2000-01.com.synology:demo."
  namePrefix: k8s-
  lunTemplate:
    type: BLUN   # thin provisioned on btrfs
  targetTemplate:
    auth_type: 0
    max_sessions: 0
`, u.Hostname(), u.Port(), synology.DefaultUser, synology.DefaultPassword, synology.DefaultVolume)}
}

// synologyTour provisions iSCSI LUNs on the simulated DSM: a block volume,
// a snapshot, a clone of the snapshot, an expansion, and shows the LUNs and
// targets DSM then holds and how many Web API requests it took.
func (w *walk) synologyTour(ctx context.Context, c *csiclient.Client, srv *synology.Server) error {
	blockCap := &csipb.VolumeCapability{AccessType: &csipb.VolumeCapability_Block{Block: &csipb.VolumeCapability_BlockVolume{}},
		AccessMode: &csipb.VolumeCapability_AccessMode{Mode: csipb.VolumeCapability_AccessMode_SINGLE_NODE_WRITER}}
	var vol, clone *csipb.Volume
	var snap *csipb.Snapshot
	before := srv.Requests()
	steps := []struct {
		call, args string
		fn         func() (string, error)
	}{
		{"CreateVolume", "name=pvc-vault connection=synology-iscsi 1GiB block", func() (string, error) {
			req := createReq("pvc-vault", "synology-iscsi", nil)
			req.VolumeCapabilities = []*csipb.VolumeCapability{blockCap}
			r, err := c.Controller.CreateVolume(ctx, req)
			vol = r.GetVolume()
			vc := vol.GetVolumeContext()
			return fmt.Sprintf("volume_id=%s iscsi %s iqn=%s lun=%s (LUN create, target create, map_target)", vol.GetVolumeId(), vc["portal"], vc["iqn"], vc["lun"]), err
		}},
		{"CreateSnapshot", "name=snap-vault of pvc-vault", func() (string, error) {
			r, err := c.Controller.CreateSnapshot(ctx, &csipb.CreateSnapshotRequest{Name: "snap-vault", SourceVolumeId: vol.GetVolumeId()})
			snap = r.GetSnapshot()
			return "snapshot_id=" + snap.GetSnapshotId() + " (SYNO.Core.ISCSI.LUN take_snapshot)", err
		}},
		{"CreateVolume", "name=pvc-vault-copy from the snapshot", func() (string, error) {
			req := createReq("pvc-vault-copy", "synology-iscsi", &csipb.VolumeContentSource{
				Type: &csipb.VolumeContentSource_Snapshot{Snapshot: &csipb.VolumeContentSource_SnapshotSource{SnapshotId: snap.GetSnapshotId()}}})
			req.VolumeCapabilities = []*csipb.VolumeCapability{blockCap}
			r, err := c.Controller.CreateVolume(ctx, req)
			clone = r.GetVolume()
			return "volume_id=" + clone.GetVolumeId() + " (clone_snapshot: a new LUN with the snapshot's data)", err
		}},
		{"ControllerExpandVolume", "pvc-vault to 2GiB", func() (string, error) {
			r, err := c.Controller.ControllerExpandVolume(ctx, &csipb.ControllerExpandVolumeRequest{VolumeId: vol.GetVolumeId(),
				CapacityRange: &csipb.CapacityRange{RequiredBytes: 2 * gib}, VolumeCapability: blockCap})
			return fmt.Sprintf("capacity=%dGiB node_expansion_required=%v (LUN set new_size)", r.GetCapacityBytes()/gib, r.GetNodeExpansionRequired()), err
		}},
	}
	for _, s := range steps {
		if err := w.step(s.call, s.args, s.fn); err != nil {
			return err
		}
	}
	inv := srv.Inventory()
	w.say("on DSM (%d Web API requests for these steps; %d open session: switchyard logs in once and reuses the sid):", srv.Requests()-before, srv.Sessions())
	for _, l := range inv.LUNs {
		w.say("  LUN %-22s %d GiB  mapped to %s", l.Name, l.Size/gib, strings.Join(l.Targets, ", "))
	}
	w.say("  %d LUN snapshot(s): %s", len(inv.Snapshots), strings.Join(inv.Snapshots, ", "))
	if !w.kernel {
		w.say("(staging these on a node needs an iSCSI initiator; this host's kernel has none, so the demo stops at the controller)")
	}
	if err := w.deleteAll(ctx, c, []deletion{{"DeleteVolume", clone.GetVolumeId()}, {"DeleteSnapshot", snap.GetSnapshotId()}, {"DeleteVolume", vol.GetVolumeId()}}); err != nil {
		return err
	}
	return w.step("LUNs and targets", "on DSM after the deletes", func() (string, error) {
		if inv := srv.Inventory(); !inv.Empty() {
			return "", fmt.Errorf("left on DSM: %+v", inv)
		}
		return "no LUN, snapshot or target left (DeleteVolume waited for DSM's background LUN delete)", nil
	})
}
