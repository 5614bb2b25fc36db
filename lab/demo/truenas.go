package demo

import (
	"context"
	"fmt"
	"path/filepath"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"

	"github.com/switchyard-csi/switchyard/lab/csiclient"
	"github.com/switchyard-csi/switchyard/lab/truenashost"
)

// truenasConnections are the demo's connection files for the simulated
// TrueNAS (25.10, JSON-RPC over TLS WebSocket): NFS and NVMe-oF, both
// through the API.
func truenasConnections(dir string, h *truenashost.Host) map[string]string {
	conns := filepath.Join(dir, "connections")
	return map[string]string{
		filepath.Join(conns, "truenas-nfs.yaml"):  h.DriverConfig("truenas-api-nfs", "tn-nfs", ""),
		filepath.Join(conns, "truenas-nvme.yaml"): h.DriverConfig("truenas-api-nvmeof", "tn-nvme", ""),
	}
}

// truenasTour provisions through the TrueNAS API: an NFS share and an
// NVMe-oF subsystem, a snapshot, and shows what TrueNAS then holds.
func (w *walk) truenasTour(ctx context.Context, c *csiclient.Client, h *truenashost.Host) error {
	var nfs, nvme *csipb.Volume
	var snap *csipb.Snapshot
	blockCap := &csipb.VolumeCapability{AccessType: &csipb.VolumeCapability_Block{Block: &csipb.VolumeCapability_BlockVolume{}},
		AccessMode: &csipb.VolumeCapability_AccessMode{Mode: csipb.VolumeCapability_AccessMode_SINGLE_NODE_WRITER}}
	h.Server.ResetCalls()
	steps := []struct {
		call, args string
		fn         func() (string, error)
	}{
		{"CreateVolume", "name=pvc-media connection=truenas-nfs 1GiB", func() (string, error) {
			r, err := c.Controller.CreateVolume(ctx, createReq("pvc-media", "truenas-nfs", nil))
			nfs = r.GetVolume()
			vc := nfs.GetVolumeContext()
			return fmt.Sprintf("volume_id=%s nfs %s:%s (pool.dataset.create + sharing.nfs.create)", nfs.GetVolumeId(), vc["server"], vc["share"]), err
		}},
		{"CreateSnapshot", "name=snap-media of pvc-media", func() (string, error) {
			r, err := c.Controller.CreateSnapshot(ctx, &csipb.CreateSnapshotRequest{Name: "snap-media", SourceVolumeId: nfs.GetVolumeId()})
			snap = r.GetSnapshot()
			return "snapshot_id=" + snap.GetSnapshotId() + " (pool.snapshot.create)", err
		}},
		{"CreateVolume", "name=pvc-pg connection=truenas-nvme 1GiB block", func() (string, error) {
			req := createReq("pvc-pg", "truenas-nvme", nil)
			req.VolumeCapabilities = []*csipb.VolumeCapability{blockCap}
			r, err := c.Controller.CreateVolume(ctx, req)
			nvme = r.GetVolume()
			vc := nvme.GetVolumeContext()
			return fmt.Sprintf("volume_id=%s nvme %s nqn=%s", nvme.GetVolumeId(), vc["transports"], vc["nqn"]), err
		}},
		{"ControllerExpandVolume", "pvc-pg to 2GiB", func() (string, error) {
			r, err := c.Controller.ControllerExpandVolume(ctx, &csipb.ControllerExpandVolumeRequest{VolumeId: nvme.GetVolumeId(), CapacityRange: &csipb.CapacityRange{RequiredBytes: 2 * gib}, VolumeCapability: blockCap})
			return fmt.Sprintf("capacity=%dGiB (pool.dataset.update volsize)", r.GetCapacityBytes()/gib), err
		}},
	}
	for _, s := range steps {
		if err := w.step(s.call, s.args, s.fn); err != nil {
			return err
		}
	}
	st := h.Server.Sharing().State()
	w.say("on TrueNAS %s (%d API calls so far, one TLS WebSocket):", h.Version, len(h.Server.Calls()))
	for _, s := range st.NFSShares {
		w.say("  sharing.nfs %d  path %s", s.ID, s.Path)
	}
	for _, s := range st.NVMetSubsystems {
		w.say("  nvmet.subsys %d  %s", s.ID, s.SubNQN)
	}
	if err := w.deleteAll(ctx, c, []deletion{{"DeleteSnapshot", snap.GetSnapshotId()}, {"DeleteVolume", nfs.GetVolumeId()}, {"DeleteVolume", nvme.GetVolumeId()}}); err != nil {
		return err
	}
	return w.step("sharing state", "on TrueNAS after the deletes", func() (string, error) {
		st := h.Server.Sharing().State()
		if n := len(st.NFSShares) + len(st.NVMetSubsystems) + len(st.NVMetNamespaces); n != 0 {
			return "", fmt.Errorf("left on TrueNAS: %+v", st)
		}
		return "no NFS share, no NVMe-oF subsystem or namespace left", nil
	})
}
