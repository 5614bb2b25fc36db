package engine

import (
	"context"
	"strings"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"

	"github.com/switchyard-csi/switchyard/driver/zfs"
)

// TestPublishOnHostWithoutEncryption: a host whose zfs has no encryption
// properties (zfs-fuse, OpenZFS before 0.8) refuses `zfs get keystatus`;
// publishing reads the volume again without them and succeeds (such a
// host has no encrypted volume), and loads nothing.
func TestPublishOnHostWithoutEncryption(t *testing.T) {
	const ds = "tank/k8s/vols/pvc-1"
	volume := strings.Join([]string{
		ds + "\ttype\tfilesystem\t-",
		ds + "\tdemocratic-csi:managed_resource\ttrue\tlocal",
		ds + "\tdemocratic-csi:provision_success\ttrue\tlocal",
		ds + "\tdemocratic-csi:csi_volume_name\tpvc-1\tlocal",
		ds + "\tdemocratic-csi:csi_share_volume_context\t{\"server\":\"h\",\"share\":\"/tank/k8s/vols/pvc-1\",\"node_attach_driver\":\"nfs\"}\tlocal",
	}, "\n") + "\n"
	exec := &recordingExec{answer: func(line string) zfs.Output {
		if strings.Contains(line, " get ") && strings.Contains(line, "keystatus") {
			return zfs.Output{Code: 2, Stderr: "bad property list: invalid property 'keystatus'\nusage:\n\tget [-rHp] ..."}
		}
		if strings.Contains(line, " get ") {
			return zfs.Output{Stdout: volume}
		}
		return zfs.Output{Code: 1, Stderr: "unexpected"}
	}}
	e := newCLIEngine(t, false, exec)
	_, err := e.ControllerPublishVolume(context.Background(), &csi.ControllerPublishVolumeRequest{VolumeId: "pvc-1", NodeId: "n=a",
		VolumeCapability: &csi.VolumeCapability{AccessType: &csi.VolumeCapability_Mount{Mount: &csi.VolumeCapability_MountVolume{}},
			AccessMode: &csi.VolumeCapability_AccessMode{Mode: csi.VolumeCapability_AccessMode_SINGLE_NODE_WRITER}}})
	if err != nil {
		t.Fatalf("publish: %v; commands %q", err, exec.lines)
	}
	if len(exec.lines) != 2 || strings.Contains(exec.lines[1], "keystatus") {
		t.Errorf("commands %q, want the read with the key status, then one without", exec.lines)
	}
}
