package sharing

import (
	"errors"
	"strings"
	"testing"

	"github.com/switchyard-csi/switchyard/simulators/truenas/middleware"
)

// Every CRUD namespace: create, get_instance, query, update, delete, and
// the "<verbose name> <id> does not exist" that follows.
func TestCRUDRoundTrip(t *testing.T) {
	cases := []struct {
		ns      string
		verbose string
		setup   func(e *env)
		create  map[string]any
		update  map[string]any // one field, checked after the update
		delArgs []any          // after the id
	}{
		{"sharing.nfs", "SharingNFS", nil, map[string]any{"path": "/mnt/tank/a"}, map[string]any{"comment": "c"}, nil},
		{"sharing.smb", "SharingSMB", nil, map[string]any{"name": "s", "path": "/mnt/tank/a"}, map[string]any{"comment": "c"}, nil},
		{"iscsi.portal", "ISCSIPortal", nil, map[string]any{"listen": []any{map[string]any{"ip": "10.1.1.1"}}}, map[string]any{"comment": "c"}, nil},
		{"iscsi.initiator", "iSCSITargetAuthorizedInitiator", nil, map[string]any{"initiators": []string{"iqn.1993-08.org.debian:01:abc"}}, map[string]any{"comment": "c"}, nil},
		{"iscsi.auth", "iSCSITargetAuthCredential", nil, map[string]any{"tag": 1, "user": "u", "secret": "0123456789abcd"}, map[string]any{"user": "v"}, nil},
		{"iscsi.target", "iSCSITarget", nil, map[string]any{"name": "t"}, map[string]any{"alias": "a"}, []any{false, false}},
		{"iscsi.extent", "iSCSITargetExtent", nil, map[string]any{"name": "e", "disk": "zvol/tank/vol"}, map[string]any{"comment": "c"}, []any{false, false}},
		{"iscsi.targetextent", "iSCSITargetToExtent", func(e *env) {
			e.must("iscsi.target.create", map[string]any{"name": "t"})
			e.must("iscsi.extent.create", map[string]any{"name": "e", "disk": "zvol/tank/vol"})
		}, map[string]any{"target": 1, "extent": 1}, map[string]any{"lunid": 7.0}, []any{false}},
		{"nvmet.subsys", "NVMetSubsys", nil, map[string]any{"name": "s"}, map[string]any{"allow_any_host": true}, []any{map[string]any{}}},
		{"nvmet.namespace", "NVMetNamespace", func(e *env) {
			e.must("nvmet.subsys.create", map[string]any{"name": "s"})
		}, map[string]any{"subsys_id": 1, "device_type": "ZVOL", "device_path": "zvol/tank/vol"}, map[string]any{"enabled": false}, []any{map[string]any{"remove": false}}},
		{"nvmet.port", "NVMetPort", nil, map[string]any{"addr_trtype": "TCP", "addr_traddr": "10.1.1.1", "addr_trsvcid": 4420}, map[string]any{"enabled": false}, nil},
		{"nvmet.port_subsys", "NVMetPortSubsys", func(e *env) {
			e.must("nvmet.subsys.create", map[string]any{"name": "s"})
			e.must("nvmet.subsys.create", map[string]any{"name": "s2"})
			e.must("nvmet.port.create", map[string]any{"addr_trtype": "TCP", "addr_traddr": "10.1.1.1", "addr_trsvcid": 4420})
		}, map[string]any{"port_id": 1, "subsys_id": 1}, map[string]any{"subsys_id": 2.0}, nil},
		{"nvmet.host", "NVMetHost", nil, map[string]any{"hostnqn": "nqn.2014-08.org.example:h1"}, map[string]any{"dhchap_hash": "SHA-512"}, nil},
		{"nvmet.host_subsys", "NVMetHostSubsys", func(e *env) {
			e.must("nvmet.subsys.create", map[string]any{"name": "s"})
			e.must("nvmet.subsys.create", map[string]any{"name": "s2"})
			e.must("nvmet.host.create", map[string]any{"hostnqn": "nqn.2014-08.org.example:h1"})
		}, map[string]any{"host_id": 1, "subsys_id": 1}, map[string]any{"subsys_id": 2.0}, nil},
	}
	for _, c := range cases {
		t.Run(c.ns, func(t *testing.T) {
			e := newEnv(t, "25.10")
			if c.setup != nil {
				c.setup(e)
			}
			before := len(e.list(c.ns + ".query"))
			obj := e.must(c.ns+".create", c.create)
			oid := id(obj)
			if got := e.must(c.ns+".get_instance", oid); id(got) != oid {
				t.Fatalf("get_instance %v", got)
			}
			if n := len(e.list(c.ns + ".query")); n != before+1 {
				t.Errorf("query lists %d objects, want %d", n, before+1)
			}
			var key string
			var want any
			for k, v := range c.update {
				key, want = k, v
			}
			upd := e.must(c.ns+".update", oid, c.update)
			got := upd[key]
			if ref, isRef := strings.CutSuffix(key, "_id"); isRef { // shown as the embedded object
				got = upd[ref].(map[string]any)["id"]
			}
			if got != want {
				t.Errorf("after update %s = %v, want %v (%v)", key, got, want, upd)
			}
			if res, err := e.call(c.ns+".delete", append([]any{oid}, c.delArgs...)...); err != nil || res != true {
				t.Fatalf("delete: %v %v", res, err)
			}
			_, err := e.call(c.ns+".get_instance", oid)
			var nf *middleware.InstanceNotFound
			if !errors.As(err, &nf) || nf.Message != c.verbose+" "+itoa(oid)+" does not exist" {
				t.Errorf("get_instance after delete: %v", err)
			}
			_, err = e.call(c.ns+".update", oid, c.update)
			if !errors.As(err, &nf) {
				t.Errorf("update after delete: %v", err)
			}
		})
	}
}
