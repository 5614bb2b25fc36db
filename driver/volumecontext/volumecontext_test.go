package volumecontext

import (
	"errors"
	"maps"
	"reflect"
	"strings"
	"testing"
)

// every kind with every field set, and with only what it needs.
var kinds = []Attachment{
	NFS{Server: "nas.example", Share: "/tank/k8s/nfs/v/pvc-1"},
	SMB{Server: "10.0.0.5", Share: "tank_k8s_smb_v_pvc-1"},
	Lustre{Server: "10.0.0.1@tcp", Share: "/lfs/v/pvc-1"},
	ISCSI{Portal: "10.0.0.5:3260", Portals: []string{"10.0.1.5", "[fd00::5]:3261"}, Interface: "iface0", IQN: "iqn.2003-01.org.linux-iscsi:pvc-1", LUN: 3},
	ISCSI{Portals: []string{"10.0.1.5"}, IQN: "iqn.2005-10.org.freenas.ctl:pvc-1"},
	NVMeoF{Transport: "tcp://10.0.0.5:4420", Transports: []string{"tcp://10.0.1.5:4420?host-iface=eth1"}, NQN: "nqn.2014-08.org.nvmexpress:pvc-1", NSID: 7, UUID: "3f2b8c1e-0d7a-4a55-9f3e-5b0c9c1d2e4f", DeviceUUID: "3F2B8C1E-0D7A-4A55-9F3E-5B0C9C1D2E4F"},
	NVMeoF{Transport: "rdma://10.0.0.5", NQN: "nqn.x:pvc-1", UUID: "0a0b"},
	HostPath{Path: "/var/lib/csi-local-hostpath/v/pvc-1"},
	ZFSLocal{AssetName: "tank/k8s/local/pvc-1"},
}

func TestKindRoundTrip(t *testing.T) {
	for _, want := range kinds {
		t.Run(want.AttachDriver(), func(t *testing.T) {
			vc := want.Encode()
			if vc[KeyAttachDriver] != want.AttachDriver() {
				t.Fatalf("Encode wrote node_attach_driver %q, want %q", vc[KeyAttachDriver], want.AttachDriver())
			}
			got, err := Decode(vc)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got.Attach, want) {
				t.Fatalf("decoded %#v, want %#v", got.Attach, want)
			}
			if got.Extra != nil || !got.Ownership.IsZero() || got.Provisioner != (Provisioner{}) {
				t.Fatalf("keys of one kind decoded into other parts: %+v", got)
			}
			if again := got.Encode(); !maps.Equal(again, vc) {
				t.Fatalf("re-encoded %v, want %v", again, vc)
			}
		})
	}
}

func TestContextRoundTrip(t *testing.T) {
	want := Context{
		Attach:      NVMeoF{Transport: "tcp://10.0.0.5:4420", NQN: "nqn.x:pvc-1", NSID: 1, UUID: "0a0b"},
		Provisioner: Provisioner{Driver: "infinia-nvmeof", InstanceID: "prod"},
		Ownership:   Ownership{OwnerUID: "1000", GroupUID: "2000", Perms: "0750"},
		Extra:       map[string]string{"storage.kubernetes.io/csiProvisionerIdentity": "123-csi"},
	}
	vc := want.Encode()
	got, err := Decode(vc)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("decoded %#v, want %#v", got, want)
	}
	if got.Ownership.UID() != 1000 || got.Ownership.GID() != 2000 {
		t.Fatalf("uid %d gid %d", got.Ownership.UID(), got.Ownership.GID())
	}
	if m, ok := got.Ownership.Mode(); !ok || m != 0o750 {
		t.Fatalf("mode %o %v", m, ok)
	}
	if o := (Ownership{}); o.UID() != -1 || o.GID() != -1 {
		t.Fatal("unset ids must be -1 (leave as is)")
	}
	if _, ok := (Ownership{}).Mode(); ok {
		t.Fatal("unset perms must not ask for a mode")
	}
}

// TestDemocraticCSI decodes volume_context as democratic-csi's controllers
// write it (src/driver/controller-zfs-generic, freenas/api.js and ssh.js,
// controller-synology, controller-*-client, controller-local-hostpath,
// controller-zfs-local; provisioner keys added by controller-zfs and
// controller-client-common) and as its node-manual examples show static
// PVs (examples/node-manual-*-pv.yaml). JSON numbers (lun, nsid) reach
// the node as strings. Each must decode, and encode back unchanged.
func TestDemocraticCSI(t *testing.T) {
	for _, c := range []struct {
		name string
		vc   map[string]string
		want Attachment
	}{
		{"zfs-generic-nfs", map[string]string{"node_attach_driver": "nfs", "server": "192.168.0.10", "share": "/tank/k8s/nfs/vols/pvc-1",
			"provisioner_driver": "zfs-generic-nfs"},
			NFS{Server: "192.168.0.10", Share: "/tank/k8s/nfs/vols/pvc-1"}},
		{"freenas-api-smb", map[string]string{"node_attach_driver": "smb", "server": "truenas.lan", "share": "tank_k8s_smb_vols_pvc-1",
			"provisioner_driver": "freenas-api-smb", "provisioner_driver_instance_id": "cluster-a"},
			SMB{Server: "truenas.lan", Share: "tank_k8s_smb_vols_pvc-1"}},
		{"smb-client", map[string]string{"node_attach_driver": "smb", "server": "fs.lan", "share": "data/v/pvc-1", "provisioner_driver": "smb-client"},
			SMB{Server: "fs.lan", Share: "data/v/pvc-1"}},
		{"lustre-client", map[string]string{"node_attach_driver": "lustre", "server": "10.0.0.1@tcp", "share": "/lfs/v/pvc-1", "provisioner_driver": "lustre-client"},
			Lustre{Server: "10.0.0.1@tcp", Share: "/lfs/v/pvc-1"}},
		{"zfs-generic-iscsi (single portal)", map[string]string{"node_attach_driver": "iscsi", "portal": "192.168.0.10:3260", "portals": "",
			"interface": "", "iqn": "iqn.2003-01.org.linux-iscsi.zfs:pvc-1", "lun": "0", "provisioner_driver": "zfs-generic-iscsi"},
			ISCSI{Portal: "192.168.0.10:3260", IQN: "iqn.2003-01.org.linux-iscsi.zfs:pvc-1"}},
		{"freenas-iscsi (multipath)", map[string]string{"node_attach_driver": "iscsi", "portal": "", "portals": "10.0.1.10:3260,10.0.2.10:3260",
			"interface": "", "iqn": "iqn.2005-10.org.freenas.ctl:csi-pvc-1-cluster", "lun": "0", "provisioner_driver": "freenas-iscsi"},
			ISCSI{Portals: []string{"10.0.1.10:3260", "10.0.2.10:3260"}, IQN: "iqn.2005-10.org.freenas.ctl:csi-pvc-1-cluster"}},
		{"synology-iscsi", map[string]string{"node_attach_driver": "iscsi", "portal": "syno.lan", "portals": "", "interface": "",
			"iqn": "iqn.2000-01.com.synology:csi.k8s-pvc-1", "lun": "1", "provisioner_driver": "synology-iscsi"},
			ISCSI{Portal: "syno.lan", IQN: "iqn.2000-01.com.synology:csi.k8s-pvc-1", LUN: 1}},
		{"zfs-generic-nvmeof", map[string]string{"node_attach_driver": "nvmeof", "transport": "", "transports": "tcp://192.168.0.10:4420,tcp://[2001:123:456::1]:4420",
			"nqn": "nqn.2003-01.org.linux-nvme:pvc-1", "nsid": "1", "provisioner_driver": "zfs-generic-nvmeof"},
			NVMeoF{Transports: []string{"tcp://192.168.0.10:4420", "tcp://[2001:123:456::1]:4420"}, NQN: "nqn.2003-01.org.linux-nvme:pvc-1", NSID: 1}},
		{"local-hostpath", map[string]string{"node_attach_driver": "hostpath", "path": "/var/lib/csi-local-hostpath/v/pvc-1", "provisioner_driver": "local-hostpath"},
			HostPath{Path: "/var/lib/csi-local-hostpath/v/pvc-1"}},
		{"zfs-local-dataset", map[string]string{"node_attach_driver": "zfs-local", "zfs_asset_name": "tank/k8s/local/v/pvc-1", "provisioner_driver": "zfs-local-dataset"},
			ZFSLocal{AssetName: "tank/k8s/local/v/pvc-1"}},
		{"zfs-local-zvol", map[string]string{"node_attach_driver": "zfs-local", "zfs_asset_name": "tank/k8s/local/zv/pvc-1", "provisioner_driver": "zfs-local-zvol"},
			ZFSLocal{AssetName: "tank/k8s/local/zv/pvc-1"}},
		{"node-manual nfs PV", map[string]string{"server": "nfs.lan", "share": "/some/share", "node_attach_driver": "nfs", "provisioner_driver": "node-manual"},
			NFS{Server: "nfs.lan", Share: "/some/share"}},
		{"node-manual iscsi PV", map[string]string{"portal": "10.0.0.5:3260", "iqn": "iqn.2000-01.com.example:target", "lun": "2",
			"node_attach_driver": "iscsi", "provisioner_driver": "node-manual"},
			ISCSI{Portal: "10.0.0.5:3260", IQN: "iqn.2000-01.com.example:target", LUN: 2}},
		// The example's transport ends in a comma: it is a csv like transports.
		{"node-manual nvmeof PV", map[string]string{"transport": "tcp://10.0.0.5:4420,", "nqn": "nqn.2000-01.com.example:sub", "nsid": "3",
			"node_attach_driver": "nvmeof", "provisioner_driver": "node-manual"},
			NVMeoF{Transport: "tcp://10.0.0.5:4420,", NQN: "nqn.2000-01.com.example:sub", NSID: 3}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := Decode(c.vc)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got.Attach, c.want) {
				t.Fatalf("decoded %#v, want %#v", got.Attach, c.want)
			}
			if got.Provisioner.Driver != c.vc["provisioner_driver"] || got.Provisioner.InstanceID != c.vc["provisioner_driver_instance_id"] {
				t.Fatalf("provisioner %+v", got.Provisioner)
			}
			if got.Extra != nil {
				t.Fatalf("democratic-csi keys left undecoded: %v", got.Extra)
			}
			// Absent optional iSCSI keys (node-manual) come back empty.
			enc := got.Encode()
			for k, v := range c.vc {
				if enc[k] != v {
					t.Fatalf("re-encoded %s=%q, want %q", k, enc[k], v)
				}
			}
			for k, v := range enc {
				if _, ok := c.vc[k]; !ok && v != "" && k != KeyLUN {
					t.Fatalf("re-encoding added %s=%q", k, v)
				}
			}
		})
	}
	t.Run("nvmeof transports union", func(t *testing.T) {
		var c NVMeoF
		if err := c.Decode(map[string]string{"transport": "tcp://a:4420,", "transports": " tcp://b:4420 ,tcp://a:4420", "nqn": "n", "nsid": "1"}); err != nil {
			t.Fatal(err)
		}
		if got := c.AllTransports(); !reflect.DeepEqual(got, []string{"tcp://a:4420", "tcp://b:4420"}) {
			t.Fatalf("transports %q", got)
		}
	})
	t.Run("iscsi portals union", func(t *testing.T) {
		var c ISCSI
		if err := c.Decode(map[string]string{"portal": "a", "portals": "b, a,,c", "iqn": "i", "lun": "0"}); err != nil {
			t.Fatal(err)
		}
		if got := c.AllPortals(); !reflect.DeepEqual(got, []string{"a", "b", "c"}) {
			t.Fatalf("portals %q", got)
		}
	})
}

func TestDecodeErrors(t *testing.T) {
	iscsi := ISCSI{Portal: "p", IQN: "i"}.Encode()
	nvme := NVMeoF{Transport: "tcp://a", NQN: "n", NSID: 1}.Encode()
	with := func(base map[string]string, kv ...string) map[string]string {
		m := maps.Clone(base)
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	for _, c := range []struct {
		name    string
		vc      map[string]string
		key     string
		missing bool
		msg     []string // substrings of the message
	}{
		{"no node_attach_driver", map[string]string{"server": "s"}, KeyAttachDriver, true, []string{`"node_attach_driver" is missing`, "nfs, nvmeof"}},
		{"unknown node_attach_driver", map[string]string{KeyAttachDriver: "objectivefs"}, KeyAttachDriver, false, []string{`key "node_attach_driver" has "objectivefs"`, "hostpath, iscsi"}},
		{"nfs no server", NFS{Share: "/s"}.Encode(), KeyServer, true, []string{`"server" is missing`, "node_attach_driver nfs needs it"}},
		{"smb blank share", SMB{Server: "s", Share: "  "}.Encode(), KeyShare, true, []string{`"share"`, "smb"}},
		{"lustre no share", Lustre{Server: "s"}.Encode(), KeyShare, true, []string{`"share"`, "lustre"}},
		{"iscsi no iqn", with(iscsi, KeyIQN, ""), KeyIQN, true, []string{`"iqn" is missing`, "iscsi"}},
		{"iscsi no lun", with(iscsi, KeyLUN, ""), KeyLUN, true, []string{`"lun" is missing`}},
		{"iscsi lun not a number", with(iscsi, KeyLUN, "first"), KeyLUN, false, []string{`key "lun" has "first": must be a LUN number`}},
		{"iscsi negative lun", with(iscsi, KeyLUN, "-1"), KeyLUN, false, []string{`key "lun" has "-1"`}},
		{"iscsi no portal", with(iscsi, KeyPortal, " , "), KeyPortal, true, []string{`"portal" (or "portals") is missing`, "the target's portal"}},
		{"nvmeof no nqn", with(nvme, KeyNQN, ""), KeyNQN, true, []string{`"nqn" is missing`, "nvmeof"}},
		{"nvmeof no nsid nor uuid", with(nvme, KeyNSID, ""), KeyNSID, true, []string{`"nsid" (or "uuid") is missing`, "the namespace"}},
		{"nvmeof nsid 0", with(nvme, KeyNSID, "0"), KeyNSID, false, []string{`key "nsid" has "0": must be a namespace id`}},
		{"nvmeof nsid too big", with(nvme, KeyNSID, "4294967296"), KeyNSID, false, []string{`key "nsid" has "4294967296"`}},
		{"nvmeof bad uuid", with(nvme, KeyUUID, "a/b"), KeyUUID, false, []string{`key "uuid" has "a/b": not a namespace uuid`}},
		{"nvmeof no transport", with(nvme, KeyTransport, ""), KeyTransport, true, []string{`"transport" (or "transports") is missing`, "tcp://"}},
		{"hostpath no path", HostPath{}.Encode(), KeyPath, true, []string{`"path" is missing`, "directory on the node"}},
		{"hostpath relative", HostPath{Path: "v/pvc-1"}.Encode(), KeyPath, false, []string{`key "path" has "v/pvc-1": must be an absolute path`}},
		{"zfs-local no asset", ZFSLocal{}.Encode(), KeyZFSAssetName, true, []string{`"zfs_asset_name" is missing`, "zfs-local"}},
		{"zfs-local snapshot", ZFSLocal{AssetName: "tank/v@snap"}.Encode(), KeyZFSAssetName, false, []string{`key "zfs_asset_name" has "tank/v@snap"`, "no snapshot"}},
		{"bad owner", with(nvme, KeyOwnerUID, "alice"), KeyOwnerUID, false, []string{`key "owneruid" has "alice": must be a numeric id`}},
		{"bad group", with(nvme, KeyGroupUID, "-5"), KeyGroupUID, false, []string{`key "groupuid" has "-5"`}},
		{"bad perms", with(nvme, KeyPerms, "rwx"), KeyPerms, false, []string{`key "perms" has "rwx": must be octal permissions`}},
		{"perms too wide", with(nvme, KeyPerms, "17777"), KeyPerms, false, []string{`key "perms" has "17777"`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Decode(c.vc)
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v (%T), want an *Error", err, err)
			}
			if e.Key != c.key || KeyOf(err) != c.key || e.Missing != c.missing {
				t.Fatalf("error names key %q (missing %v), want %q (missing %v): %v", e.Key, e.Missing, c.key, c.missing, err)
			}
			for _, s := range c.msg {
				if !strings.Contains(err.Error(), s) {
					t.Fatalf("message %q lacks %q", err, s)
				}
			}
		})
	}
	if KeyOf(errors.New("other")) != "" {
		t.Fatal("KeyOf of a foreign error")
	}
}

// TestKindDecodeKeepsWhatItRead: a kind's Decode sets the fields it could
// read even when it fails, so a node can still release what a bad record
// names (an nqn).
func TestKindDecodeKeepsWhatItRead(t *testing.T) {
	var c NVMeoF
	if err := c.Decode(map[string]string{KeyNQN: " nqn.x:1 "}); err == nil || c.NQN != "nqn.x:1" {
		t.Fatalf("err %v, nqn %q", err, c.NQN)
	}
}

func TestAttachDrivers(t *testing.T) {
	names := AttachDrivers()
	if len(names) != len(decoders) {
		t.Fatalf("AttachDrivers lists %d, decoders %d", len(names), len(decoders))
	}
	for _, n := range names {
		mk, ok := decoders[n]
		if !ok || mk().value().AttachDriver() != n {
			t.Fatalf("%s: no decoder or a decoder of another kind", n)
		}
	}
	if AttachDriver(map[string]string{KeyAttachDriver: " nfs "}) != "nfs" {
		t.Fatal("AttachDriver must trim")
	}
}
