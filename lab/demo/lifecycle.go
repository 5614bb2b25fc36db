package demo

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"

	"github.com/switchyard-csi/switchyard/lab/csiclient"
)

// attached is a volume staged and published by the demo.
type attached struct{ id, staging, target string }

// lifecycle is the walkthrough: create → stage → publish → write →
// snapshot → restore → expand → unpublish → delete.
func (w *walk) lifecycle(ctx context.Context, c *csiclient.Client) error {
	var vol, restored, other *csipb.Volume
	var snap *csipb.Snapshot
	steps := []struct {
		call, args string
		fn         func() (string, error)
	}{
		{"GetPluginInfo", "", func() (string, error) {
			r, err := c.Identity.GetPluginInfo(ctx, &csipb.GetPluginInfoRequest{})
			return fmt.Sprintf("%s %s", r.GetName(), r.GetVendorVersion()), err
		}},
		{"NodeGetInfo", "", func() (string, error) {
			r, err := c.Node.NodeGetInfo(ctx, &csipb.NodeGetInfoRequest{})
			return fmt.Sprintf("node_id=%s topology=%v", r.GetNodeId(), r.GetAccessibleTopology().GetSegments()), err
		}},
		{"CreateVolume", "name=pvc-demo connection=fast 1GiB", func() (string, error) {
			r, err := c.Controller.CreateVolume(ctx, createReq("pvc-demo", "fast", nil))
			vol = r.GetVolume()
			return fmt.Sprintf("volume_id=%s topology=%v", vol.GetVolumeId(), vol.GetAccessibleTopology()[0].GetSegments()), err
		}},
		{"CreateVolume", "name=pvc-logs connection=archive 1GiB", func() (string, error) {
			r, err := c.Controller.CreateVolume(ctx, createReq("pvc-logs", "archive", nil))
			other = r.GetVolume()
			return "volume_id=" + other.GetVolumeId() + " (another connection, same driver)", err
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
	a, err := w.attach(ctx, c, vol, "pvc-demo")
	if err != nil {
		return err
	}
	const content = "hello from switchyard\n"
	if err := w.step("write", "a file through the published path", func() (string, error) {
		p := filepath.Join(a.target, "hello.txt")
		return p, os.WriteFile(p, []byte(content), 0o644)
	}); err != nil {
		return err
	}
	more := []struct {
		call, args string
		fn         func() (string, error)
	}{
		{"CreateSnapshot", "name=snap-demo source=" + vol.GetVolumeId(), func() (string, error) {
			r, err := c.Controller.CreateSnapshot(ctx, &csipb.CreateSnapshotRequest{Name: "snap-demo", SourceVolumeId: vol.GetVolumeId()})
			snap = r.GetSnapshot()
			return fmt.Sprintf("snapshot_id=%s size=%dB ready=%v", snap.GetSnapshotId(), snap.GetSizeBytes(), snap.GetReadyToUse()), err
		}},
		{"CreateVolume", "name=pvc-restored from the snapshot", func() (string, error) {
			r, err := c.Controller.CreateVolume(ctx, createReq("pvc-restored", "fast", &csipb.VolumeContentSource{
				Type: &csipb.VolumeContentSource_Snapshot{Snapshot: &csipb.VolumeContentSource_SnapshotSource{SnapshotId: snap.GetSnapshotId()}}}))
			restored = r.GetVolume()
			return "volume_id=" + restored.GetVolumeId(), err
		}},
	}
	for _, s := range more {
		if err := w.step(s.call, s.args, s.fn); err != nil {
			return err
		}
	}
	b, err := w.attach(ctx, c, restored, "pvc-restored")
	if err != nil {
		return err
	}
	if err := w.step("read", "the file back from the restored volume", func() (string, error) {
		got, err := os.ReadFile(filepath.Join(b.target, "hello.txt"))
		if err == nil && string(got) != content {
			err = fmt.Errorf("restored content %q; want %q", got, content)
		}
		return fmt.Sprintf("%q: same bytes as written before the snapshot", string(got)), err
	}); err != nil {
		return err
	}
	last := []struct {
		call, args string
		fn         func() (string, error)
	}{
		{"ControllerExpandVolume", vol.GetVolumeId() + " to 2GiB", func() (string, error) {
			r, err := c.Controller.ControllerExpandVolume(ctx, &csipb.ControllerExpandVolumeRequest{VolumeId: vol.GetVolumeId(), CapacityRange: &csipb.CapacityRange{RequiredBytes: 2 * gib}, VolumeCapability: mountCap})
			return fmt.Sprintf("capacity=%dGiB node_expansion_required=%v", r.GetCapacityBytes()/gib, r.GetNodeExpansionRequired()), err
		}},
		{"NodeExpandVolume", vol.GetVolumeId(), func() (string, error) {
			r, err := c.Node.NodeExpandVolume(ctx, &csipb.NodeExpandVolumeRequest{VolumeId: vol.GetVolumeId(), VolumePath: a.target, StagingTargetPath: a.staging, CapacityRange: &csipb.CapacityRange{RequiredBytes: 2 * gib}, VolumeCapability: mountCap})
			return fmt.Sprintf("capacity=%dGiB (a directory has no size to grow)", r.GetCapacityBytes()/gib), err
		}},
		{"NodeGetVolumeStats", vol.GetVolumeId(), func() (string, error) {
			r, err := c.Node.NodeGetVolumeStats(ctx, &csipb.NodeGetVolumeStatsRequest{VolumeId: vol.GetVolumeId(), VolumePath: a.target})
			var s []string
			for _, u := range r.GetUsage() {
				s = append(s, fmt.Sprintf("%s used=%d available=%d", u.GetUnit(), u.GetUsed(), u.GetAvailable()))
			}
			return fmt.Sprint(s), err
		}},
	}
	for _, s := range last {
		if err := w.step(s.call, s.args, s.fn); err != nil {
			return err
		}
	}
	for _, x := range []attached{a, b} {
		if err := w.detach(ctx, c, x); err != nil {
			return err
		}
	}
	deletes := []struct {
		call, args string
		fn         func() (string, error)
	}{
		{"DeleteSnapshot", snap.GetSnapshotId(), func() (string, error) {
			_, err := c.Controller.DeleteSnapshot(ctx, &csipb.DeleteSnapshotRequest{SnapshotId: snap.GetSnapshotId()})
			return "deleted", err
		}},
	}
	for _, v := range []*csipb.Volume{restored, other, vol} {
		id := v.GetVolumeId()
		deletes = append(deletes, struct {
			call, args string
			fn         func() (string, error)
		}{"DeleteVolume", id, func() (string, error) {
			_, err := c.Controller.DeleteVolume(ctx, &csipb.DeleteVolumeRequest{VolumeId: id})
			return "deleted", err
		}})
	}
	for _, s := range deletes {
		if err := w.step(s.call, s.args, s.fn); err != nil {
			return err
		}
	}
	return w.step("ListVolumes", "after the deletes", func() (string, error) {
		r, err := c.Controller.ListVolumes(ctx, &csipb.ListVolumesRequest{})
		if err == nil && len(r.GetEntries()) != 0 {
			err = fmt.Errorf("%d volumes left", len(r.GetEntries()))
		}
		return "no volumes left", err
	})
}

func createReq(name, conn string, src *csipb.VolumeContentSource) *csipb.CreateVolumeRequest {
	return &csipb.CreateVolumeRequest{Name: name, Parameters: map[string]string{"connection": conn},
		CapacityRange: &csipb.CapacityRange{RequiredBytes: gib}, VolumeCapabilities: []*csipb.VolumeCapability{mountCap}, VolumeContentSource: src}
}

// attach stages and publishes a volume as the kubelet would.
func (w *walk) attach(ctx context.Context, c *csiclient.Client, v *csipb.Volume, name string) (attached, error) {
	a := attached{id: v.GetVolumeId(), staging: filepath.Join(w.dir, "kubelet", name, "globalmount"), target: filepath.Join(w.dir, "kubelet", name, "pod-mount")}
	if err := os.MkdirAll(a.staging, 0o750); err != nil {
		return a, err
	}
	if err := w.step("NodeStageVolume", a.id, func() (string, error) {
		_, err := c.Node.NodeStageVolume(ctx, &csipb.NodeStageVolumeRequest{VolumeId: a.id, StagingTargetPath: a.staging, VolumeCapability: mountCap, VolumeContext: v.GetVolumeContext()})
		return "staged at " + a.staging + " (attacher " + v.GetVolumeContext()["node_attach_driver"] + ")", err
	}); err != nil {
		return a, err
	}
	return a, w.step("NodePublishVolume", a.id, func() (string, error) {
		_, err := c.Node.NodePublishVolume(ctx, &csipb.NodePublishVolumeRequest{VolumeId: a.id, StagingTargetPath: a.staging, TargetPath: a.target, VolumeCapability: mountCap, VolumeContext: v.GetVolumeContext()})
		return "published at " + a.target, err
	})
}

func (w *walk) detach(ctx context.Context, c *csiclient.Client, a attached) error {
	if err := w.step("NodeUnpublishVolume", a.id, func() (string, error) {
		_, err := c.Node.NodeUnpublishVolume(ctx, &csipb.NodeUnpublishVolumeRequest{VolumeId: a.id, TargetPath: a.target})
		return "unmounted " + a.target, err
	}); err != nil {
		return err
	}
	return w.step("NodeUnstageVolume", a.id, func() (string, error) {
		_, err := c.Node.NodeUnstageVolume(ctx, &csipb.NodeUnstageVolumeRequest{VolumeId: a.id, StagingTargetPath: a.staging})
		return "unmounted " + a.staging, err
	})
}
