package demo

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"

	"github.com/switchyard-csi/switchyard/lab/csiclient"
	"github.com/switchyard-csi/switchyard/lab/zfshost"
)

// zfsConnections are the demo's connection files for the simulated ZFS
// host: one NFS and one NVMe-oF, both zfs-generic over SSH.
func zfsConnections(dir string, h *zfshost.Host) map[string]string {
	conns := filepath.Join(dir, "connections")
	return map[string]string{
		filepath.Join(conns, "zfs-nfs.yaml"):  h.DriverConfig("zfs-generic-nfs", "nfs", ""),
		filepath.Join(conns, "zfs-nvme.yaml"): h.DriverConfig("zfs-generic-nvmeof", "nvme", ""),
	}
}

// zfsTour provisions on the simulated ZFS host through the same switchyard:
// an NFS dataset, a snapshot and a clone of it, an NVMe-oF zvol that grows,
// and shows what the host then holds. Attaching them on a node needs a
// kernel NFS client and NVMe/TCP, which the storage VM tier provides.
func (w *walk) zfsTour(ctx context.Context, c *csiclient.Client, h *zfshost.Host) error {
	var nfs, clone, nvme *csipb.Volume
	var snap *csipb.Snapshot
	blockCap := &csipb.VolumeCapability{AccessType: &csipb.VolumeCapability_Block{Block: &csipb.VolumeCapability_BlockVolume{}},
		AccessMode: &csipb.VolumeCapability_AccessMode{Mode: csipb.VolumeCapability_AccessMode_SINGLE_NODE_WRITER}}
	steps := []struct {
		call, args string
		fn         func() (string, error)
	}{
		{"CreateVolume", "name=pvc-share connection=zfs-nfs 1GiB", func() (string, error) {
			r, err := c.Controller.CreateVolume(ctx, createReq("pvc-share", "zfs-nfs", nil))
			nfs = r.GetVolume()
			vc := nfs.GetVolumeContext()
			return fmt.Sprintf("volume_id=%s nfs %s:%s", nfs.GetVolumeId(), vc["server"], vc["share"]), err
		}},
		{"CreateSnapshot", "name=snap-share of pvc-share", func() (string, error) {
			r, err := c.Controller.CreateSnapshot(ctx, &csipb.CreateSnapshotRequest{Name: "snap-share", SourceVolumeId: nfs.GetVolumeId()})
			snap = r.GetSnapshot()
			return "snapshot_id=" + snap.GetSnapshotId() + " (a zfs snapshot)", err
		}},
		{"CreateVolume", "name=pvc-share-copy from the snapshot", func() (string, error) {
			r, err := c.Controller.CreateVolume(ctx, createReq("pvc-share-copy", "zfs-nfs", &csipb.VolumeContentSource{
				Type: &csipb.VolumeContentSource_Snapshot{Snapshot: &csipb.VolumeContentSource_SnapshotSource{SnapshotId: snap.GetSnapshotId()}}}))
			clone = r.GetVolume()
			return "volume_id=" + clone.GetVolumeId() + " (a zfs clone: instant, shares blocks)", err
		}},
		{"CreateVolume", "name=pvc-db connection=zfs-nvme 1GiB block", func() (string, error) {
			req := createReq("pvc-db", "zfs-nvme", nil)
			req.VolumeCapabilities = []*csipb.VolumeCapability{blockCap}
			r, err := c.Controller.CreateVolume(ctx, req)
			nvme = r.GetVolume()
			vc := nvme.GetVolumeContext()
			return fmt.Sprintf("volume_id=%s nvme %s nqn=%s nsid=%s", nvme.GetVolumeId(), vc["transports"], vc["nqn"], vc["nsid"]), err
		}},
		{"ControllerExpandVolume", "pvc-db to 2GiB", func() (string, error) {
			r, err := c.Controller.ControllerExpandVolume(ctx, &csipb.ControllerExpandVolumeRequest{VolumeId: nvme.GetVolumeId(), CapacityRange: &csipb.CapacityRange{RequiredBytes: 2 * gib}, VolumeCapability: blockCap})
			return fmt.Sprintf("capacity=%dGiB node_expansion_required=%v (zvol volsize)", r.GetCapacityBytes()/gib, r.GetNodeExpansionRequired()), err
		}},
		{"GetCapacity", "connection=zfs-nvme", func() (string, error) {
			r, err := c.Controller.GetCapacity(ctx, &csipb.GetCapacityRequest{Parameters: map[string]string{"connection": "zfs-nvme"}})
			return fmt.Sprintf("%d GiB available in tank/k8s/nvme", r.GetAvailableCapacity()/gib), err
		}},
		{"ListVolumes", "across all connections", func() (string, error) {
			r, err := c.Controller.ListVolumes(ctx, &csipb.ListVolumesRequest{})
			var ids []string
			for _, e := range r.GetEntries() {
				ids = append(ids, e.GetVolume().GetVolumeId())
			}
			return fmt.Sprint(ids), err
		}},
	}
	for _, s := range steps {
		if err := w.step(s.call, s.args, s.fn); err != nil {
			return err
		}
	}
	w.say("on the ZFS host (zfs list -o name,refquota,volsize,sharenfs -r tank/k8s):")
	for _, l := range hostLines(h, "list", "-o", "name,refquota,volsize,sharenfs", "-r", "tank/k8s") {
		w.say("  %s", l)
	}
	for _, s := range h.Server.NVMet().Subsystems {
		w.say("  nvmet subsystem %s", s.NQN)
	}
	w.say("(staging these on a node needs a kernel NFS client and NVMe/TCP: the storage VM tier does that)")
	if err := w.deleteAll(ctx, c, []deletion{{"DeleteVolume", clone.GetVolumeId()}, {"DeleteSnapshot", snap.GetSnapshotId()}, {"DeleteVolume", nfs.GetVolumeId()}, {"DeleteVolume", nvme.GetVolumeId()}}); err != nil {
		return err
	}
	left := hostLines(h, "list", "-H", "-o", "name", "-t", "all", "-r", "tank/k8s/nfs", "tank/k8s/nvme")
	return w.step("zfs list", "on the host after the deletes", func() (string, error) {
		if len(left) != 2 || len(h.Server.NVMet().Subsystems) != 0 {
			return "", fmt.Errorf("left on the host: %v, %d nvmet subsystems", left, len(h.Server.NVMet().Subsystems))
		}
		return "only the two parent datasets remain; no nvmet subsystem", nil
	})
}

func hostLines(h *zfshost.Host, args ...string) []string {
	var out, errb strings.Builder
	if h.Model.ZFS(args, nil, &out, &errb) != 0 {
		return []string{strings.TrimSpace(errb.String())}
	}
	return strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
}
