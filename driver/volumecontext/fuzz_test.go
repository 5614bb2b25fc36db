package volumecontext

import (
	"reflect"
	"strings"
	"testing"
)

// parseVC reads "key=value" lines into a volume_context.
func parseVC(s string) map[string]string {
	vc := map[string]string{}
	for _, line := range strings.Split(s, "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			vc[k] = v
		}
	}
	return vc
}

// FuzzDecode: any volume_context decodes or fails with an *Error naming a
// key (never a panic); a decoded Context encodes to a volume_context that
// decodes to the same Context, and encoding is then stable.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		"node_attach_driver=nfs\nserver=10.0.0.5\nshare=/mnt/tank/v\nprovisioner_driver=zfs-generic-nfs",
		"node_attach_driver=smb\nserver=srv\nshare=v\nowner_uid=1000\ngroup_uid=1000\nperms=0750",
		"node_attach_driver=iscsi\nportal=10.0.0.5:3260\nportals=10.0.0.6:3260, 10.0.0.5:3260\niqn=iqn.2005-10.org.freenas.ctl:v\nlun=0\ninterface=",
		"node_attach_driver=nvmeof\ntransport=tcp://10.0.0.5:4420\nnqn=nqn.2014-08.org.x:v\nnsid=1\nuuid=ABC",
		"node_attach_driver=hostpath\npath=/var/lib/v\nextra=kept",
		"node_attach_driver=zfs-local\nzfs_asset_name=tank/v",
		"node_attach_driver=lustre\nserver=mgs@tcp\nshare=/fs",
		"node_attach_driver= nfs \nserver= s \nshare= /x ", "node_attach_driver=nvmeof\nnqn=x\nnsid=0", "node_attach_driver=bogus", "",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		vc := parseVC(s)
		c, err := Decode(vc)
		if err != nil {
			if KeyOf(err) == "" || err.Error() == "" {
				t.Fatalf("Decode(%q) error %v names no key", vc, err)
			}
			return
		}
		if c.Attach == nil || c.Attach.AttachDriver() != AttachDriver(vc) {
			t.Fatalf("Decode(%q) = attach %#v", vc, c.Attach)
		}
		enc := c.Encode()
		c2, err := Decode(enc)
		if err != nil {
			t.Fatalf("Decode(Encode(Decode(%q))) = %v; encoded %q", vc, err, enc)
		}
		if !reflect.DeepEqual(c, c2) {
			t.Fatalf("round trip of %q changed the context:\n%#v\n%#v", vc, c, c2)
		}
		if enc2 := c2.Encode(); !reflect.DeepEqual(enc, enc2) {
			t.Fatalf("Encode is not stable for %q:\n%q\n%q", vc, enc, enc2)
		}
	})
}
