package kernel

import (
	"reflect"
	"testing"
)

func TestNormalize(t *testing.T) {
	in := State{
		NVMe: []Subsystem{{NQN: "nqn.b", Hosts: []string{"h2", "h1", "h2"},
			Namespaces: []Namespace{{NSID: 2, Path: "/a/../b", NGUID: "00112233445566778899AABBCCDDEEFF"}, {NSID: 1, Path: "/x", UUID: "00:11:22:33:44:55:66:77:88:99:aa:bb:cc:dd:ee:ff"}},
			Listeners:  []Listener{{Addr: "::"}, {Addr: "0.0.0.0", Port: 4420}, {Addr: "0:0::1", Port: 4421}}},
			{NQN: "nqn.a"}},
		ISCSI: []Target{{IQN: "IQN.2003-01.X:Y", Portals: []Portal{{Addr: "::0"}, {Addr: "0.0.0.0"}}, InitiatorACLs: []string{"IQN.B", "iqn.a"}}},
		NFS:   []Export{{Path: "/srv/x/", Source: "/srv/x", Options: " rw,  sync "}},
		SMB:   []Share{{Name: "b", Path: "/b"}, {Name: "A", Path: "/a", Source: "/src", Options: map[string]string{}}},
	}
	want := State{
		NVMe: []Subsystem{{NQN: "nqn.a"}, {NQN: "nqn.b", Hosts: []string{"h1", "h2"},
			Namespaces: []Namespace{{NSID: 1, Path: "/x", UUID: "00112233-4455-6677-8899-aabbccddeeff"}, {NSID: 2, Path: "/b", NGUID: "00112233-4455-6677-8899-aabbccddeeff"}},
			Listeners:  []Listener{{Addr: "0.0.0.0", Port: 4420}, {Addr: "::1", Port: 4421}}}},
		ISCSI: []Target{{IQN: "iqn.2003-01.x:y", TPG: 1, Portals: []Portal{{Addr: "0.0.0.0", Port: 3260}}, InitiatorACLs: []string{"iqn.a", "iqn.b"}}},
		NFS:   []Export{{Path: "/srv/x", Options: "rw, sync"}},
		SMB:   []Share{{Name: "A", Path: "/a", Source: "/src"}, {Name: "b", Path: "/b"}},
	}
	got := in.normalize()
	for i := range got.NVMe {
		if len(got.NVMe[i].Namespaces) == 0 {
			got.NVMe[i].Namespaces = nil
		}
		if len(got.NVMe[i].Listeners) == 0 {
			got.NVMe[i].Listeners = nil
		}
	}
	for i := range got.ISCSI {
		if len(got.ISCSI[i].LUNs) == 0 {
			got.ISCSI[i].LUNs = nil
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("normalize:\n got %+v\nwant %+v", got, want)
	}
	if again := got.normalize(); !reflect.DeepEqual(again.NFS, got.NFS) || !reflect.DeepEqual(again.NVMe[1], got.NVMe[1]) {
		t.Error("normalize is not idempotent")
	}
}
