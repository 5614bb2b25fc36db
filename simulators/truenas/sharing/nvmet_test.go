package sharing

import (
	"encoding/base64"
	"errors"
	"hash/crc32"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/switchyard-csi/switchyard/simulators/truenas/middleware"
)

func TestNVMetGlobal(t *testing.T) {
	e := newEnv(t, "25.10")
	g := e.must("nvmet.global.config")
	if !regexp.MustCompile(`^nqn\.2011-06\.com\.truenas:uuid:[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`).MatchString(g["basenqn"].(string)) {
		t.Errorf("basenqn %v", g["basenqn"])
	}
	if g["kernel"] != true || g["ana"] != false || g["rdma"] != false || g["xport_referral"] != true {
		t.Errorf("nvmet.global.config %v", g)
	}
	_, err := e.call("nvmet.global.update", map[string]any{"ana": true})
	wantInvalid(t, err, "nvmet_global_update.ana", "This platform does not support Asymmetric Namespace Access(ANA).")
	if got := e.must("nvmet.global.update", map[string]any{"basenqn": "nqn.2000-01.test.sim"}); got["basenqn"] != "nqn.2000-01.test.sim" {
		t.Errorf("update %v", got)
	}
	if got := e.list("nvmet.port.query"); len(got) != 0 {
		t.Errorf("a fresh system has ports: %v", got)
	}
}

func TestNQNLimits(t *testing.T) {
	valid223 := "nqn.2011-06.com.example:" + strings.Repeat("x", 223-len("nqn.2011-06.com.example:"))
	cases := []struct {
		name, nqn string
		msg       string // "" when accepted
	}{
		{"10 characters", "nqn.2011-0", "String should have at least 11 characters"},
		{"224 characters", valid223 + "x", "String should have at most 223 characters"},
		{"223 characters", valid223, ""},
		{"not an nqn", "iqn.2005-10.org.freenas.ctl:x", `Value error, iqn.2005-10.org.freenas.ctl:x: must start with "nqn"`},
		{"no date", "nqn.com.example:x", `must start with "nqn.YYYY-MM.<reverse.domain>"`},
		{"bad domain", "nqn.2011-06.com.-bad:x", "domain does not appear to be valid"},
		{"uuid form", "nqn.2014-08.org.nvmexpress:uuid:48747223-7535-4f8e-a789-b8af8bfdea54", ""},
		{"short uuid", "nqn.2014-08.org.nvmexpress:uuid:48747223", "uuid is incorrect length"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, "26.04")
			_, err := e.call("nvmet.subsys.create", map[string]any{"name": "s", "subnqn": c.nqn})
			if c.msg == "" {
				if err != nil {
					t.Fatalf("subnqn %q refused: %v", c.nqn, err)
				}
			} else {
				wantInvalid(t, err, "nvmet_subsys_create.subnqn", c.msg)
			}
			_, err = e.call("nvmet.host.create", map[string]any{"hostnqn": c.nqn})
			if c.msg == "" {
				if err != nil {
					t.Fatalf("hostnqn %q refused: %v", c.nqn, err)
				}
			} else {
				wantInvalid(t, err, "nvmet_host_create.hostnqn", c.msg)
			}
		})
	}
	t.Run("a generated subnqn is cut at 223", func(t *testing.T) {
		e := newEnv(t, "25.10")
		sub := e.must("nvmet.subsys.create", map[string]any{"name": strings.Repeat("n", 250)})
		if n := len(sub["subnqn"].(string)); n != 223 {
			t.Errorf("generated subnqn has %d characters", n)
		}
	})
}

func TestNVMetLifecycle(t *testing.T) {
	e := newEnv(t, "25.10")
	basenqn := e.must("nvmet.global.config")["basenqn"].(string)
	sub := e.must("nvmet.subsys.create", map[string]any{"name": "pvc-1", "allow_any_host": true})
	if sub["subnqn"] != basenqn+":pvc-1" || !regexp.MustCompile(`^[0-9a-f]{20}$`).MatchString(sub["serial"].(string)) ||
		!reflect.DeepEqual(sub["namespaces"], []any{}) || sub["ana"] != nil {
		t.Fatalf("subsys %v", sub)
	}
	_, err := e.call("nvmet.subsys.create", map[string]any{"name": "pvc-1"})
	wantInvalid(t, err, "nvmet_subsys_create.name", "Object with this name already exists")

	ns := e.must("nvmet.namespace.create", map[string]any{"subsys_id": id(sub), "device_type": "ZVOL", "device_path": "zvol/tank/vol"})
	uuidRe := regexp.MustCompile(`^[0-9a-f-]{36}$`)
	if ns["nsid"] != 1.0 || !uuidRe.MatchString(ns["device_uuid"].(string)) || !uuidRe.MatchString(ns["device_nguid"].(string)) ||
		ns["enabled"] != true || ns["locked"] != false || ns["subsys"].(map[string]any)["name"] != "pvc-1" {
		t.Fatalf("namespace %v", ns)
	}
	if _, hidden := ns["subsys_id"]; hidden {
		t.Error("namespace entry shows subsys_id")
	}
	ns2 := e.must("nvmet.namespace.create", map[string]any{"subsys_id": id(sub), "device_type": "ZVOL", "device_path": "zvol/tank/vol2"})
	if ns2["nsid"] != 2.0 {
		t.Errorf("second nsid %v", ns2["nsid"])
	}
	upd := e.must("nvmet.namespace.update", id(ns), map[string]any{"enabled": false})
	if upd["device_uuid"] != ns["device_uuid"] || upd["device_nguid"] != ns["device_nguid"] || upd["enabled"] != false {
		t.Errorf("update changed the namespace's identity: %v", upd)
	}
	if got := e.list("nvmet.namespace.query", `[["subsys.id","=",`+itoa(id(sub))+`]]`); len(got) != 2 {
		t.Errorf("query by subsys.id: %d rows", len(got))
	}
	if got := e.list("nvmet.namespace.query", `[["subsys_id","=",`+itoa(id(sub))+`]]`); len(got) != 2 {
		t.Errorf("query by subsys_id: %d rows", len(got))
	}

	port := e.must("nvmet.port.create", map[string]any{"addr_trtype": "TCP", "addr_traddr": "0.0.0.0", "addr_trsvcid": 4420})
	if port["index"] != 1.0 || port["addr_adrfam"] != "IPV4" || port["addr_trsvcid"] != 4420.0 || port["enabled"] != true {
		t.Errorf("port %v", port)
	}
	_, err = e.call("nvmet.port.create", map[string]any{"addr_trtype": "TCP", "addr_traddr": "0.0.0.0", "addr_trsvcid": 4420})
	wantInvalid(t, err, "nvmet_port_create", "Port #1 uses the same transport/address")
	ps := e.must("nvmet.port_subsys.create", map[string]any{"port_id": id(port), "subsys_id": id(sub)})
	if ps["port"].(map[string]any)["addr_traddr"] != "0.0.0.0" || ps["subsys"].(map[string]any)["subnqn"] != sub["subnqn"] {
		t.Errorf("port_subsys %v", ps)
	}
	_, err = e.call("nvmet.port_subsys.create", map[string]any{"port_id": id(port), "subsys_id": id(sub)})
	wantInvalid(t, err, "nvmet_port_subsys_create.port_id", "This record already exists (Host ID: 1/Subsystem ID: 1)")

	host := e.must("nvmet.host.create", map[string]any{"hostnqn": "nqn.2014-08.org.nvmexpress:uuid:48747223-7535-4f8e-a789-b8af8bfdea54"})
	e.must("nvmet.host_subsys.create", map[string]any{"host_id": id(host), "subsys_id": id(sub)})
	verbose := e.list("nvmet.subsys.query", `[]`, `{"extra":{"verbose":true}}`)[0]
	if !reflect.DeepEqual(verbose["namespaces"], []any{float64(id(ns)), float64(id(ns2))}) ||
		!reflect.DeepEqual(verbose["ports"], []any{float64(id(port))}) || !reflect.DeepEqual(verbose["hosts"], []any{float64(id(host))}) {
		t.Errorf("verbose subsys %v", verbose)
	}

	_, err = e.call("nvmet.subsys.delete", id(sub))
	wantInvalid(t, err, "nvmet_subsys_delete.id", "Subsystem pvc-1 contains 2 namespaces: 1,2")
	wantInvalid(t, err, "nvmet_subsys_delete.id", "Subsystem pvc-1 visible on 1 port")
	_, err = e.call("nvmet.port.delete", id(port))
	wantInvalid(t, err, "nvmet_port_delete.id", "Port #1 used by 1 subsystem: pvc-1")
	_, err = e.call("nvmet.host.delete", id(host))
	wantInvalid(t, err, "nvmet_host_delete.id", "Host nqn.2014-08.org.nvmexpress:uuid:48747223-7535-4f8e-a789-b8af8bfdea54 used by 1 subsystem: pvc-1")

	if res, err := e.call("nvmet.subsys.delete", id(sub), map[string]any{"force": true}); err != nil || res != true {
		t.Fatalf("forced subsys delete: %v %v", res, err)
	}
	st := e.s.State()
	if len(st.NVMetSubsystems)+len(st.NVMetNamespaces)+len(st.NVMetPortSubsys)+len(st.NVMetHostSubsys) != 0 || len(st.NVMetPorts) != 1 || len(st.NVMetHosts) != 1 {
		t.Errorf("after a forced subsys delete: %+v", st)
	}
	e.must("nvmet.port.delete", id(port))
	e.must("nvmet.host.delete", id(host))
}

func TestNVMetValidation(t *testing.T) {
	cases := []struct {
		name   string
		setup  bool // create subsystem 1 first
		method string
		data   string
		attr   string
		msg    string
	}{
		{"namespace on a missing zvol", true, "nvmet.namespace.create", `{"subsys_id":1,"device_type":"ZVOL","device_path":"zvol/tank/gone"}`, "nvmet_namespace_create.device_path", "ZVOL device_path must be a block device: zvol/tank/gone"},
		{"namespace path without zvol/", true, "nvmet.namespace.create", `{"subsys_id":1,"device_type":"ZVOL","device_path":"tank/vol"}`, "nvmet_namespace_create.device_path", `ZVOL device_path must start with "zvol/": tank/vol`},
		{"namespace in a missing subsystem", false, "nvmet.namespace.create", `{"subsys_id":4,"device_type":"ZVOL","device_path":"zvol/tank/vol"}`, "nvmet_namespace_create.subsys_id", "No subsystem with ID 4"},
		{"namespace type", true, "nvmet.namespace.create", `{"subsys_id":1,"device_type":"DISK","device_path":"zvol/tank/vol"}`, "nvmet_namespace_create.device_type", "Input should be 'ZVOL' or 'FILE'"},
		{"namespace file without size", true, "nvmet.namespace.create", `{"subsys_id":1,"device_type":"FILE","device_path":"/mnt/tank/a/ns1"}`, "nvmet_namespace_create.filesize", "Must supply filesize if device_path FILE does not exist."},
		{"namespace file outside datasets", true, "nvmet.namespace.create", `{"subsys_id":1,"device_type":"FILE","device_path":"/tmp/x/ns1","filesize":1048576}`, "nvmet_namespace_create.device_path", "FILE device_path must reside in an existing directory on a dataset"},
		{"port address", false, "nvmet.port.create", `{"addr_trtype":"TCP","addr_traddr":"any","addr_trsvcid":4420}`, "nvmet_port_create", "Value error, addr_traddr must be a valid IP address"},
		{"port number type", false, "nvmet.port.create", `{"addr_trtype":"TCP","addr_traddr":"0.0.0.0","addr_trsvcid":"4420"}`, "nvmet_port_create", "Value error, For TCP or RDMA addr_trsvcid must be a port number integer"},
		{"port number range", false, "nvmet.port.create", `{"addr_trtype":"TCP","addr_traddr":"0.0.0.0","addr_trsvcid":80}`, "nvmet_port_create", "addr_trsvcid port number must be an integer in the range 1024..65535"},
		{"rdma port", false, "nvmet.port.create", `{"addr_trtype":"RDMA","addr_traddr":"10.0.0.1","addr_trsvcid":4420}`, "nvmet_port_create", "This platform cannot support NVMe-oF(RDMA)"},
		{"port of a missing port", true, "nvmet.port_subsys.create", `{"port_id":7,"subsys_id":1}`, "nvmet_port_subsys_create.port_id", "No port with ID 7"},
		{"subsys ana", false, "nvmet.subsys.create", `{"name":"s","ana":true}`, "nvmet_subsys_create.ana", "This platform does not support Asymmetric Namespace Access(ANA)."},
		{"subsys unknown field", false, "nvmet.subsys.create", `{"name":"s","nqn":"x"}`, "nvmet_subsys_create.nqn", "Extra inputs are not permitted"},
		{"host ctrl key alone", false, "nvmet.host.create", `{"hostnqn":"nqn.2014-08.org.example:h","dhchap_ctrl_key":"DHHC-1:00:abc:"}`, "nvmet_host_create", "Cannot configure bi-directional authentication without setting dhchap_key"},
		{"host key format", false, "nvmet.host.create", `{"hostnqn":"nqn.2014-08.org.example:h","dhchap_key":"secret"}`, "nvmet_host_create.dhchap_key", `Unexpected key format. Use "nvme gen-dhchap-key" to generate.`},
		{"host key length", false, "nvmet.host.create", `{"hostnqn":"nqn.2014-08.org.example:h","dhchap_key":"DHHC-1:01:AAAA:"}`, "nvmet_host_create.dhchap_key", "Expected key length of 32"},
		{"host grant of a missing host", true, "nvmet.host_subsys.create", `{"host_id":3,"subsys_id":1}`, "nvmet_host_subsys_create.host_id", "No host with ID 3"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, "25.10")
			if c.setup {
				e.must("nvmet.subsys.create", map[string]any{"name": "s1"})
			}
			_, err := e.call(c.method, c.data)
			wantInvalid(t, err, c.attr, c.msg)
		})
	}
}

func TestNVMetNamespaceConflicts(t *testing.T) {
	e := newEnv(t, "25.10")
	s1 := e.must("nvmet.subsys.create", map[string]any{"name": "s1"})
	s2 := e.must("nvmet.subsys.create", map[string]any{"name": "s2"})
	e.must("nvmet.namespace.create", map[string]any{"subsys_id": id(s1), "device_type": "ZVOL", "device_path": "zvol/tank/vol", "nsid": 5})
	_, err := e.call("nvmet.namespace.create", map[string]any{"subsys_id": id(s2), "device_type": "ZVOL", "device_path": "zvol/tank/vol"})
	wantInvalid(t, err, "nvmet_namespace_create.device_path", "This device_path already used by subsystem: s1")
	_, err = e.call("nvmet.namespace.create", map[string]any{"subsys_id": id(s1), "device_type": "ZVOL", "device_path": "zvol/tank/vol2", "nsid": 5})
	wantInvalid(t, err, "nvmet_namespace_create.nsid", "This record already exists (Subsystem ID: 1/NSID: 5)")
	e.must("iscsi.extent.create", map[string]any{"name": "lun", "disk": "zvol/tank/vol2"})
	_, err = e.call("nvmet.namespace.create", map[string]any{"subsys_id": id(s2), "device_type": "ZVOL", "device_path": "zvol/tank/vol2"})
	wantInvalid(t, err, "nvmet_namespace_create.device_path", "This device_path already used by iSCSI extent: lun")
	// a namespace id is per subsystem
	if ns := e.must("nvmet.namespace.create", map[string]any{"subsys_id": id(s1), "device_type": "FILE", "device_path": "/mnt/tank/a/ns", "filesize": 1 << 20}); ns["nsid"] != 1.0 {
		t.Errorf("lowest free nsid %v, want 1", ns["nsid"])
	}
}

func TestNVMetHostKeys(t *testing.T) {
	e := newEnv(t, "25.10")
	for hash, n := range map[string]int{"SHA-256": 32, "SHA-384": 48, "SHA-512": 64} {
		res, err := e.call("nvmet.host.generate_key", hash)
		if err != nil {
			t.Fatal(err)
		}
		key := res.(string)
		if msg := dhchapKeyError(key); msg != "" {
			t.Errorf("%s key %q: %s", hash, key, msg)
		}
		b, _ := base64.StdEncoding.DecodeString(strings.Split(key, ":")[2])
		if len(b) != n+4 || crc32.ChecksumIEEE(b[:n]) != uint32(b[n])|uint32(b[n+1])<<8|uint32(b[n+2])<<16|uint32(b[n+3])<<24 {
			t.Errorf("%s key %q: %d bytes or bad CRC", hash, key, len(b))
		}
		host := e.must("nvmet.host.create", map[string]any{"hostnqn": "nqn.2014-08.org.example:" + strings.ToLower(hash), "dhchap_key": key, "dhchap_hash": hash})
		if host["dhchap_key"] != key || host["dhchap_dhgroup"] != nil {
			t.Errorf("host %v", host)
		}
	}
	_, err := e.call("nvmet.host.create", map[string]any{"hostnqn": "nqn.2014-08.org.example:sha-256"})
	wantInvalid(t, err, "nvmet_host_create.hostnqn", "Object with this hostnqn already exists")
	var nf *middleware.InstanceNotFound
	if _, err := e.call("nvmet.subsys.get_instance", 3); !errors.As(err, &nf) || nf.Message != "NVMetSubsys 3 does not exist" {
		t.Errorf("missing subsys: %v", err)
	}
}
