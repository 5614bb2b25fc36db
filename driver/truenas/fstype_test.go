package truenas_test

import (
	"context"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"

	"github.com/switchyard-csi/switchyard/lab/truenashost"
)

// A share mounts as its protocol's file system; a block volume as one the
// node formats. freenas-nfs/smb once accepted only the block file systems.
func TestFSTypes(t *testing.T) {
	h := startHost(t, truenashost.Options{Version: "25.10", SSH: true})
	for _, c := range []struct {
		driver    string
		ok, wrong string
	}{
		{"freenas-api-nfs", "nfs", "ext4"},
		{"freenas-nfs", "nfs", "xfs"},
		{"freenas-api-smb", "cifs", "nfs"},
		{"freenas-api-iscsi", "ext4", "nfs"},
		{"freenas-api-nvmeof", "xfs", "cifs"},
	} {
		t.Run(c.driver, func(t *testing.T) {
			d := newDriver(t, h.DriverConfig(c.driver, "fs-"+c.driver, ""))
			for fs, want := range map[string]bool{c.ok: true, c.wrong: false, "": true} {
				capab := &csi.VolumeCapability{
					AccessMode: &csi.VolumeCapability_AccessMode{Mode: csi.VolumeCapability_AccessMode_SINGLE_NODE_WRITER},
					AccessType: &csi.VolumeCapability_Mount{Mount: &csi.VolumeCapability_MountVolume{FsType: fs}},
				}
				_, err := d.CreateVolume(context.Background(), &csi.CreateVolumeRequest{Name: "pvc-fs-" + fs,
					VolumeCapabilities: []*csi.VolumeCapability{capab}, CapacityRange: &csi.CapacityRange{RequiredBytes: 1 << 30}})
				if got := err == nil; got != want {
					t.Errorf("fs_type %q: err = %v; want accepted = %v", fs, err, want)
				}
			}
		})
	}
}
