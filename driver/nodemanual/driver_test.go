package nodemanual

import (
	"context"
	"strings"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/driver/backend"
)

func mountCap(fs string, mode csi.VolumeCapability_AccessMode_Mode) *csi.VolumeCapability {
	return &csi.VolumeCapability{
		AccessType: &csi.VolumeCapability_Mount{Mount: &csi.VolumeCapability_MountVolume{FsType: fs}},
		AccessMode: &csi.VolumeCapability_AccessMode{Mode: mode},
	}
}

func blockCap(mode csi.VolumeCapability_AccessMode_Mode) *csi.VolumeCapability {
	return &csi.VolumeCapability{
		AccessType: &csi.VolumeCapability_Block{Block: &csi.VolumeCapability_BlockVolume{}},
		AccessMode: &csi.VolumeCapability_AccessMode{Mode: mode},
	}
}

const (
	rwo = csi.VolumeCapability_AccessMode_SINGLE_NODE_WRITER
	rwx = csi.VolumeCapability_AccessMode_MULTI_NODE_MULTI_WRITER
	rox = csi.VolumeCapability_AccessMode_MULTI_NODE_READER_ONLY
)

func TestProvisioningIsUnimplemented(t *testing.T) {
	d, _ := New(backend.Options{})
	ctx := context.Background()
	if _, err := d.CreateVolume(ctx, &csi.CreateVolumeRequest{Name: "x"}); status.Code(err) != codes.Unimplemented || !strings.Contains(err.Error(), "static PersistentVolumes") {
		t.Errorf("CreateVolume: %v", err)
	}
	if _, err := d.DeleteVolume(ctx, &csi.DeleteVolumeRequest{VolumeId: "x"}); status.Code(err) != codes.Unimplemented {
		t.Errorf("DeleteVolume: %v", err)
	}
	for _, call := range []func() error{
		func() error { _, err := d.CreateSnapshot(ctx, &csi.CreateSnapshotRequest{}); return err },
		func() error {
			_, err := d.ControllerExpandVolume(ctx, &csi.ControllerExpandVolumeRequest{})
			return err
		},
		func() error { _, err := d.ListVolumes(ctx, &csi.ListVolumesRequest{}); return err },
		func() error { _, err := d.GetCapacity(ctx, &csi.GetCapacityRequest{}); return err },
	} {
		if status.Code(call()) != codes.Unimplemented {
			t.Errorf("want UNIMPLEMENTED, got %v", call())
		}
	}
	caps, err := d.ControllerGetCapabilities(ctx, &csi.ControllerGetCapabilitiesRequest{})
	if err != nil || len(caps.GetCapabilities()) != 0 {
		t.Errorf("capabilities %v %v, want none (as democratic-csi)", caps, err)
	}
}

func TestCheckCapability(t *testing.T) {
	tests := []struct {
		kind string
		c    *csi.VolumeCapability
		ok   bool
	}{
		{"nfs", mountCap("", rwx), true},
		{"nfs", mountCap("nfs", rwo), true},
		{"nfs", mountCap("ext4", rwo), false},
		{"nfs", blockCap(rwo), false},
		{"smb", mountCap("cifs", rwx), true},
		{"smb", mountCap("nfs", rwx), false},
		{"lustre", mountCap("lustre", rox), true},
		{"hostpath", mountCap("", rwo), true},
		{"hostpath", mountCap("ext4", rwo), false},
		{"iscsi", mountCap("ext4", rwo), true},
		{"iscsi", mountCap("xfs", rox), true},
		{"iscsi", mountCap("ext4", rwx), false}, // a block file system on many nodes corrupts
		{"iscsi", blockCap(rwx), true},
		{"nvmeof", mountCap("nfs", rwo), false},
		{"nvmeof", blockCap(rwo), true},
		{"zfs-local", mountCap("zfs", rwo), true},
		{"zfs-local", mountCap("ext4", rox), false},
		{"objectivefs", mountCap("", rwo), false},
	}
	for _, tt := range tests {
		msg := CheckCapability(tt.kind, tt.c)
		if (msg == "") != tt.ok {
			t.Errorf("%s %v: %q, want ok=%v", tt.kind, tt.c, msg, tt.ok)
		}
	}
}

func TestValidateNamesTheMissingAttribute(t *testing.T) {
	d, _ := New(backend.Options{})
	tests := []struct {
		vc   map[string]string
		want string
	}{
		{map[string]string{"server": "10.0.0.5", "share": "/x"}, "node_attach_driver"},
		{map[string]string{"node_attach_driver": "nfs", "share": "/x"}, "server"},
		{map[string]string{"node_attach_driver": "smb", "server": "files"}, "share"},
		{map[string]string{"node_attach_driver": "iscsi", "portal": "10.0.0.5:3260", "lun": "0"}, "iqn"},
		{map[string]string{"node_attach_driver": "nvmeof", "transport": "tcp://10.0.0.5:4420", "nsid": "1"}, "nqn"},
		{map[string]string{"node_attach_driver": "nvmeof", "nqn": "nqn.2014-08.org.example:x", "nsid": "1"}, "transport"},
		{map[string]string{"node_attach_driver": "objectivefs"}, "objectivefs"},
	}
	for _, tt := range tests {
		_, err := d.ValidateVolumeCapabilities(context.Background(), &csi.ValidateVolumeCapabilitiesRequest{
			VolumeId: "pv-1", VolumeContext: tt.vc, VolumeCapabilities: []*csi.VolumeCapability{mountCap("", rwo)}})
		if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v: got %v, want INVALID_ARGUMENT naming %s", tt.vc, err, tt.want)
		}
	}
	resp, err := d.ValidateVolumeCapabilities(context.Background(), &csi.ValidateVolumeCapabilitiesRequest{
		VolumeId: "pv-1", VolumeContext: map[string]string{"node_attach_driver": "nfs", "server": "h", "share": "/s"},
		VolumeCapabilities: []*csi.VolumeCapability{mountCap("ext4", rwo)}})
	if err != nil || resp.GetConfirmed() != nil || !strings.Contains(resp.GetMessage(), "ext4") {
		t.Errorf("unsuitable capability: %v %v", resp, err)
	}
}

// TestDemocraticCSIExampleBlockPVsValidate: the volumeAttributes of
// democratic-csi's examples/node-manual-{iscsi,nvmeof}-pv.yaml (filled in,
// the nvmeof one with its trailing comma after the transport) are a valid
// volume_context for their fsType ext4, ReadWriteOnce.
func TestDemocraticCSIExampleBlockPVsValidate(t *testing.T) {
	d, _ := New(backend.Options{})
	for _, vc := range []map[string]string{
		{"portal": "10.0.0.5:3260", "iqn": "iqn.2005-10.org.freenas.ctl:pv1", "lun": "0", "node_attach_driver": "iscsi", "provisioner_driver": "node-manual"},
		{"transport": "tcp://10.0.0.5:4420,", "nqn": "nqn.2011-06.com.truenas:uuid:x:pv1", "nsid": "1", "node_attach_driver": "nvmeof", "provisioner_driver": "node-manual"},
	} {
		resp, err := d.ValidateVolumeCapabilities(context.Background(), &csi.ValidateVolumeCapabilitiesRequest{
			VolumeId: "unique-volumeid", VolumeContext: vc, VolumeCapabilities: []*csi.VolumeCapability{mountCap("ext4", rwo)}})
		if err != nil || resp.GetConfirmed() == nil {
			t.Errorf("%v: %v %v", vc, resp, err)
		}
	}
}
