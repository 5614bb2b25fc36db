package synology_test

import (
	"net/url"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"

	"github.com/switchyard-csi/switchyard/driver/synology"
	sim "github.com/switchyard-csi/switchyard/simulators/synology"
)

// CHAP reaches DSM through iscsi.targetTemplate as in democratic-csi: the
// config's template, then the StorageClass parameter targetTemplate, then
// the provisioner secret targetTemplate, each merged over the one before.
// The target DSM then holds is read back from DSM's own Target list.
func TestCHAPTargetTemplate(t *testing.T) {
	chap := "  targetTemplate:\n    auth_type: 1\n    user: k8s\n    password: \"0123456789ab\"\n    max_sessions: 0\n"
	r := newRig(t, synology.DriverISCSI, chap, sim.Options{Volumes: []sim.Volume{{Path: "/volume1", Size: 100 * gib}}})

	create := func(name string, params, secrets map[string]string) error {
		_, err := r.d.CreateVolume(r.ctx, &csi.CreateVolumeRequest{Name: name, VolumeCapabilities: mountCap(),
			CapacityRange: &csi.CapacityRange{RequiredBytes: gib}, Parameters: params, Secrets: secrets})
		return err
	}
	type dsmTarget struct {
		IQN         string `json:"iqn"`
		AuthType    int    `json:"auth_type"`
		User        string `json:"user"`
		MaxSessions int    `json:"max_sessions"`
	}
	target := func(iqn string) dsmTarget {
		t.Helper()
		var out struct {
			Targets []dsmTarget `json:"targets"`
		}
		if err := r.d.Client().Call(r.ctx, "SYNO.Core.ISCSI.Target", "list", 1, url.Values{}, &out); err != nil {
			t.Fatal(err)
		}
		for _, x := range out.Targets {
			if x.IQN == iqn {
				return x
			}
		}
		t.Fatalf("DSM has no target %s: %+v", iqn, out.Targets)
		return dsmTarget{}
	}

	if err := create("pvc-chap", nil, nil); err != nil {
		t.Fatal(err)
	}
	if got := target("iqn.2000-01.com.synology:csi.pvc-chap"); got.AuthType != 1 || got.User != "k8s" || got.MaxSessions != 0 {
		t.Fatalf("config's CHAP template: DSM's target is %+v", got)
	}

	// The StorageClass's template is merged over the config's, the
	// secret's last: a secret user wins over both.
	if err := create("pvc-merged", map[string]string{"targetTemplate": "max_sessions: 4\nuser: from-class"},
		map[string]string{"targetTemplate": "user: from-secret\npassword: \"abcdefghijkl\""}); err != nil {
		t.Fatal(err)
	}
	if got := target("iqn.2000-01.com.synology:csi.pvc-merged"); got.AuthType != 1 || got.User != "from-secret" || got.MaxSessions != 4 {
		t.Fatalf("merged template: DSM's target is %+v", got)
	}

	// A secret's CHAP password outside DSM's 12 to 16 characters replaces
	// the config's valid one and is refused before anything is made.
	err := create("pvc-short", nil, map[string]string{"targetTemplate": "password: short"})
	wantCode(t, err, codes.InvalidArgument, "targetTemplate")
	for _, l := range r.srv.Inventory().LUNs {
		if l.Name == "pvc-short" {
			t.Fatalf("a refused CHAP template left LUN %+v", l)
		}
	}
}
