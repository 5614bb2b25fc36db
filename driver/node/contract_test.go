package node

import (
	"slices"
	"testing"

	"github.com/switchyard-csi/switchyard/driver/volumecontext"
)

// TestAttachersMatchContract: the node has an attacher for every kind the
// controllers can write (driver/volumecontext), and no attacher the
// contract does not know.
func TestAttachersMatchContract(t *testing.T) {
	var names []string
	for _, a := range BuiltinAttachers() {
		names = append(names, a.Name())
	}
	slices.Sort(names)
	if want := volumecontext.AttachDrivers(); !slices.Equal(names, want) {
		t.Fatalf("node attachers %v, volume_context kinds %v", names, want)
	}
}

// TestAttachersValidateEncodedContexts: what a controller encodes for each
// kind passes the node's attacher validation.
func TestAttachersValidateEncodedContexts(t *testing.T) {
	byName := map[string]Attacher{}
	for _, a := range BuiltinAttachers() {
		byName[a.Name()] = a
	}
	for _, c := range []volumecontext.Context{
		{Attach: volumecontext.NFS{Server: "10.0.0.5", Share: "/tank/v/pvc-1"}, Provisioner: volumecontext.Provisioner{Driver: "zfs-generic-nfs"}},
		{Attach: volumecontext.SMB{Server: "10.0.0.5", Share: "tank_v_pvc-1"}},
		{Attach: volumecontext.Lustre{Server: "10.0.0.1@tcp", Share: "/lfs"}},
		{Attach: volumecontext.ISCSI{Portal: "10.0.0.5", Portals: []string{"10.0.1.5:3260"}, IQN: "iqn.2003-01.org.linux-iscsi:pvc-1"}},
		{Attach: volumecontext.NVMeoF{Transport: "tcp://10.0.0.5:4420", NQN: "nqn.x:pvc-1", NSID: 1},
			Ownership: volumecontext.Ownership{OwnerUID: "1000", GroupUID: "1000", Perms: "0750"}},
		{Attach: volumecontext.HostPath{Path: "/var/lib/csi-local-hostpath/v/pvc-1"}},
		{Attach: volumecontext.ZFSLocal{AssetName: "tank/local/pvc-1"}},
	} {
		name := c.Attach.AttachDriver()
		v := &Volume{ID: "pvc-1", Context: c.Encode(), Capability: mountCap(snw)}
		if err := byName[name].Validate(v); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}
