package demo

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"

	"github.com/switchyard-csi/switchyard/lab/csiclient"
	"github.com/switchyard-csi/switchyard/lab/mounts"
)

// kernelTour runs only inside the storage VM (Options.Kernel): the
// simulators' shares and subsystems are real there, so the node plugin
// mounts an NFS export with the kernel NFS client and connects an
// Infinia volume over NVMe/TCP on all three of its paths, formats it and
// mounts it, then releases both.
func (w *walk) kernelTour(ctx context.Context, c *csiclient.Client, service string) error {
	w.say("── real attach: the storage VM's kernel serves the simulators' shares and subsystems ──")
	nfsReq := createReq("pvc-vm-nfs", "zfs-nfs", nil)
	nvmeReq := createReq("pvc-red-vm", "infinia", nil)
	nvmeReq.Parameters["service"] = service
	for _, req := range []*csipb.CreateVolumeRequest{nfsReq, nvmeReq} {
		if err := w.realAttach(ctx, c, req); err != nil {
			return err
		}
	}
	return nil
}

// realAttach is create → (publish) → stage → publish → write → show →
// unpublish → unstage → (unpublish) → delete for one volume.
func (w *walk) realAttach(ctx context.Context, c *csiclient.Client, req *csipb.CreateVolumeRequest) error {
	var vol *csipb.Volume
	if err := w.step("CreateVolume", fmt.Sprintf("name=%s connection=%s 1GiB", req.Name, req.Parameters["connection"]), func() (string, error) {
		r, err := c.Controller.CreateVolume(ctx, req)
		vol = r.GetVolume()
		vc := vol.GetVolumeContext()
		return fmt.Sprintf("volume_id=%s %s %s%s", vol.GetVolumeId(), vc["node_attach_driver"], vc["server"]+vc["share"], vc["transports"]), err
	}); err != nil {
		return err
	}
	id := vol.GetVolumeId()
	var pubCtx map[string]string
	nodeID := ""
	needsPublish := vol.GetVolumeContext()["node_attach_driver"] == "nvmeof" && strings.Contains(id, "infinia")
	if needsPublish {
		if err := w.step("ControllerPublishVolume", id, func() (string, error) {
			ni, err := c.Node.NodeGetInfo(ctx, &csipb.NodeGetInfoRequest{})
			if err != nil {
				return "", err
			}
			nodeID = ni.GetNodeId()
			r, err := c.Controller.ControllerPublishVolume(ctx, &csipb.ControllerPublishVolumeRequest{VolumeId: id, NodeId: nodeID, VolumeCapability: mountCap, VolumeContext: vol.GetVolumeContext()})
			pubCtx = r.GetPublishContext()
			return "this node's host NQN may now connect", err
		}); err != nil {
			return err
		}
	}
	staging := filepath.Join(w.dir, "kubelet", req.Name, "globalmount")
	target := filepath.Join(w.dir, "kubelet", req.Name, "pod-mount")
	if err := os.MkdirAll(staging, 0o750); err != nil {
		return err
	}
	steps := []struct {
		call, args string
		fn         func() (string, error)
	}{
		{"NodeStageVolume", id, func() (string, error) {
			_, err := c.Node.NodeStageVolume(ctx, &csipb.NodeStageVolumeRequest{VolumeId: id, StagingTargetPath: staging, VolumeCapability: mountCap,
				VolumeContext: vol.GetVolumeContext(), PublishContext: pubCtx})
			return "mounted " + mountSource(staging), err
		}},
		{"NodePublishVolume", id, func() (string, error) {
			_, err := c.Node.NodePublishVolume(ctx, &csipb.NodePublishVolumeRequest{VolumeId: id, StagingTargetPath: staging, TargetPath: target,
				VolumeCapability: mountCap, VolumeContext: vol.GetVolumeContext(), PublishContext: pubCtx})
			return "published at " + target, err
		}},
		{"write", "a file through the pod's mount", func() (string, error) {
			f := filepath.Join(target, "hello.txt")
			if err := os.WriteFile(f, []byte("written through "+req.Name+"\n"), 0o644); err != nil {
				return "", err
			}
			b, err := os.ReadFile(f)
			return fmt.Sprintf("read back %q", strings.TrimSpace(string(b))), err
		}},
		{"NodeUnpublishVolume", id, func() (string, error) {
			_, err := c.Node.NodeUnpublishVolume(ctx, &csipb.NodeUnpublishVolumeRequest{VolumeId: id, TargetPath: target})
			return "unmounted " + target, err
		}},
		{"NodeUnstageVolume", id, func() (string, error) {
			_, err := c.Node.NodeUnstageVolume(ctx, &csipb.NodeUnstageVolumeRequest{VolumeId: id, StagingTargetPath: staging})
			return fmt.Sprintf("unmounted and released (NVMe controllers left: %d)", nvmeControllers()), err
		}},
	}
	for _, s := range steps {
		if err := w.step(s.call, s.args, s.fn); err != nil {
			return err
		}
	}
	if needsPublish {
		if err := w.step("ControllerUnpublishVolume", id, func() (string, error) {
			_, err := c.Controller.ControllerUnpublishVolume(ctx, &csipb.ControllerUnpublishVolumeRequest{VolumeId: id, NodeId: nodeID})
			return "host NQN revoked", err
		}); err != nil {
			return err
		}
	}
	return w.deleteAll(ctx, c, []deletion{{"DeleteVolume", id}})
}

// mountSource describes what is mounted at path (from /proc/self/mountinfo),
// and for an NVMe namespace how many paths its subsystem has.
func mountSource(path string) string {
	m, ok, err := mounts.At(path)
	if err != nil {
		return "?"
	}
	if !ok {
		return "nothing"
	}
	src := fmt.Sprintf("%s (%s)", m.Source, m.FsType)
	if strings.HasPrefix(m.Source, "/dev/nvme") {
		src += fmt.Sprintf(", NVMe/TCP controllers connected: %d", nvmeControllers())
	}
	return src
}

// nvmeControllers counts the NVMe-oF controllers (one per path) the node
// has connected.
func nvmeControllers() int {
	m, _ := filepath.Glob("/sys/class/nvme/nvme*")
	return len(m)
}
