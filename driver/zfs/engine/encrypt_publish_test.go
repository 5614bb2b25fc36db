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

// propShare is a sharer whose shares are dataset properties (sharenfs),
// as zfs-generic's NFS and SMB sharers are.
type propShare struct{ *fakeSharer }

func (propShare) PropertiesOnly() {}

// TestPublishLoadsKeyAndShares: the commands of a publish that finds the
// key unloaded, for a share-property (NFS) filesystem: the read with the
// key status, load-key on the encryption root with the key on stdin only,
// mount of the volume and zfs share of it (zfs load-key mounts and shares
// nothing, and the host's boot-time zfs share -a passed over it); a host
// that says "already shared" is fine.
func TestPublishLoadsKeyAndShares(t *testing.T) {
	const ds, root = "tank/k8s/vols/pvc-1", "tank/k8s/vols/pvc-0"
	volume := strings.Join([]string{
		ds + "\ttype\tfilesystem\t-",
		ds + "\tdemocratic-csi:managed_resource\ttrue\tlocal",
		ds + "\tdemocratic-csi:provision_success\ttrue\tlocal",
		ds + "\tdemocratic-csi:csi_share_volume_context\t{\"server\":\"h\",\"share\":\"/tank/k8s/vols/pvc-1\",\"node_attach_driver\":\"nfs\"}\tlocal",
		ds + "\tkeystatus\tunavailable\t-",
		ds + "\tencryptionroot\t" + root + "\t-",
	}, "\n") + "\n"
	exec := &recordingExec{answer: func(line string) zfs.Output {
		switch {
		case strings.Contains(line, " get "):
			return zfs.Output{Stdout: volume}
		case strings.Contains(line, " share "):
			return zfs.Output{Code: 1, Stderr: "cannot share '" + ds + "': filesystem already shared"}
		}
		return zfs.Output{}
	}}
	e := newCLIEngine(t, false, exec)
	e.share = propShare{e.share.(*fakeSharer)}
	_, err := e.ControllerPublishVolume(context.Background(), &csi.ControllerPublishVolumeRequest{VolumeId: "pvc-1", NodeId: "n=a",
		Secrets: map[string]string{SecretEncryptionKey: passphrase},
		VolumeCapability: &csi.VolumeCapability{AccessType: &csi.VolumeCapability_Mount{Mount: &csi.VolumeCapability_MountVolume{}},
			AccessMode: &csi.VolumeCapability_AccessMode{Mode: csi.VolumeCapability_AccessMode_SINGLE_NODE_WRITER}}})
	if err != nil {
		t.Fatalf("publish: %v; commands %q", err, exec.lines)
	}
	want := []string{" get ", " load-key -L prompt " + root, " mount " + ds, " share " + ds}
	if len(exec.lines) != len(want) {
		t.Fatalf("commands %q, want %d", exec.lines, len(want))
	}
	for i, w := range want {
		if !strings.Contains(exec.lines[i], w) {
			t.Errorf("command %d: %q, want %q", i, exec.lines[i], w)
		}
		if strings.Contains(exec.lines[i], passphrase) {
			t.Errorf("the key on a command line: %q", exec.lines[i])
		}
	}
	if string(exec.stdins[1]) != passphrase+"\n" {
		t.Errorf("load-key stdin %q", exec.stdins[1])
	}
}
