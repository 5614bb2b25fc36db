package sharing

import (
	"os"
	"reflect"
	"regexp"
	"testing"

	"github.com/switchyard-csi/switchyard/simulators/truenas/middleware"
)

func TestISCSIDefaults(t *testing.T) {
	for _, version := range allVersions {
		t.Run(version, func(t *testing.T) {
			e := newEnv(t, version)
			g := e.must("iscsi.global.config")
			want := map[string]any{"id": 1.0, "basename": "iqn.2005-10.org.freenas.ctl", "isns_servers": []any{}, "listen_port": 3260.0, "pool_avail_threshold": nil, "alua": false}
			if e.v.AtLeast(25, 4, 0) {
				want["iser"] = false
			}
			if e.v.AtLeast(26, 0, 0) {
				want["direct_config"], want["mode"] = nil, 0.0
			}
			if !reflect.DeepEqual(g, want) {
				t.Errorf("iscsi.global.config = %v", g)
			}
			// A fresh TrueNAS has no portal and no initiator group.
			for _, ns := range []string{"iscsi.portal", "iscsi.initiator"} {
				if rows := e.list(ns + ".query"); len(rows) != 0 {
					t.Errorf("%s.query on a fresh system = %v, want []", ns, rows)
				}
			}
			_, err := e.call("iscsi.portal.get_instance", 1)
			if err == nil || err.Error() != "ISCSIPortal 1 does not exist" {
				t.Errorf("portal 1 of a fresh system: %v", err)
			}
			e.configureISCSI()
			portal := e.must("iscsi.portal.get_instance", 1)
			if portal["tag"] != 1.0 || !reflect.DeepEqual(portal["listen"], []any{map[string]any{"ip": "0.0.0.0", "port": 3260.0}}) {
				t.Errorf("portal 1 = %v", portal)
			}
			if _, has := portal["discovery_authmethod"]; has != !e.v.AtLeast(25, 4, 0) {
				t.Errorf("portal discovery fields present=%v in %s", has, version)
			}
			if ini := e.must("iscsi.initiator.get_instance", 1); !reflect.DeepEqual(ini["initiators"], []any{}) {
				t.Errorf("initiator 1 = %v", ini)
			}
			e.must("iscsi.global.update", map[string]any{"listen_port": 3261})
			if got := e.must("iscsi.portal.get_instance", 1)["listen"]; got.([]any)[0].(map[string]any)["port"] != 3261.0 {
				t.Errorf("portal listen after changing the global port: %v", got)
			}
		})
	}
}

func TestISCSIValidation(t *testing.T) {
	cases := []struct {
		name    string
		version string
		method  string
		data    string
		attr    string
		msg     string
	}{
		{"target name, old rule", "24.10", "iscsi.target.create", `{"name":"Vol_1"}`, "iscsi_target_create.name", "Only lowercase alphanumeric characters plus dot (.), dash (-), and colon (:) are allowed."},
		{"target name, pydantic rule", "25.04", "iscsi.target.create", `{"name":"Vol_1"}`, "iscsi_target_create.name", "Value error, Name can only contain lowercase alphanumeric charactersplus dot (.), dash (-), and colon (:)"},
		{"target name too long", "25.10", "iscsi.target.create", `{"name":"` + long(121) + `"}`, "iscsi_target_create.name", "String should have at most 120 characters"},
		{"target without name", "25.10", "iscsi.target.create", `{}`, "iscsi_target_create.name", "Field required"},
		{"missing portal", "25.10", "iscsi.target.create", `{"name":"t","groups":[{"portal":9}]}`, "iscsi_target_create.groups.0.portal", "9 Portal not found in database"},
		{"missing initiator", "24.10", "iscsi.target.create", `{"name":"t","groups":[{"portal":1,"initiator":5}]}`, "iscsi_target_create.groups.0.initiator", "5 Initiator not found in database"},
		{"CHAP without group", "25.04", "iscsi.target.create", `{"name":"t","groups":[{"portal":1,"authmethod":"CHAP"}]}`, "iscsi_target_create.groups.0.auth", "Authentication group is required for CHAP and CHAP Mutual"},
		{"fibre channel", "25.04", "iscsi.target.create", `{"name":"t","mode":"FC"}`, "iscsi_target_create.mode", "Fibre Channel not enabled"},
		{"bad auth network", "25.10", "iscsi.target.create", `{"name":"t","auth_networks":["nope"]}`, "iscsi_target_create.auth_networks.0", `Auth network "nope" is not a valid IPv4 or IPv6 network`},
		{"extent on a missing zvol", "25.10", "iscsi.extent.create", `{"name":"e","disk":"zvol/tank/gone"}`, "iscsi_extent_create.disk", "Device '/dev/zvol/tank/gone' for volume 'tank/gone' does not exist"},
		{"extent disk without zvol/", "24.10", "iscsi.extent.create", `{"name":"e","disk":"tank/vol"}`, "iscsi_extent_create.disk", `Disk name must start with "zvol/"`},
		{"extent without disk", "25.04", "iscsi.extent.create", `{"name":"e","type":"DISK"}`, "iscsi_extent_create.disk", "This field is required"},
		{"extent name over 64", "25.04", "iscsi.extent.create", `{"name":"` + long(65) + `","disk":"zvol/tank/vol"}`, "iscsi_extent_create.name", "String should have at most 64 characters"},
		{"extent name over 64, old", "24.10", "iscsi.extent.create", `{"name":"` + long(65) + `","disk":"zvol/tank/vol"}`, "iscsi_extent_create.name", "Value greater than 64 not allowed"},
		{"extent blocksize", "25.10", "iscsi.extent.create", `{"name":"e","disk":"zvol/tank/vol","blocksize":8192}`, "iscsi_extent_create.blocksize", "Input should be 512, 1024, 2048 or 4096"},
		{"extent serial length", "25.10", "iscsi.extent.create", `{"name":"e","disk":"zvol/tank/vol","serial":"` + long(21) + `"}`, "iscsi_extent_create.serial", "Extent serial can not exceed 20 characters"},
		{"file extent, auto size of a missing file", "25.10", "iscsi.extent.create", `{"name":"e","type":"FILE","path":"/mnt/tank/a/lun0"}`, "iscsi_extent_create.path", "The file must exist if the extent size is set to auto (0)"},
		{"file extent size", "25.04", "iscsi.extent.create", `{"name":"e","type":"FILE","path":"/mnt/tank/a/lun0","filesize":1000}`, "iscsi_extent_create.filesize", "File size (1000) must be a multiple of block size (512)"},
		{"unknown field, pydantic", "25.04", "iscsi.extent.create", `{"name":"e","disk":"zvol/tank/vol","iscsi_target_extent_naa":"x"}`, "iscsi_extent_create.iscsi_target_extent_naa", "Extra inputs are not permitted"},
		{"auth secret length", "25.10", "iscsi.auth.create", `{"tag":1,"user":"u","secret":"short"}`, "iscsi_auth_create.secret", "Secret must be between 12 and 16 characters."},
		{"auth peer secret equal", "24.10", "iscsi.auth.create", `{"tag":1,"user":"u","secret":"abcdefghijkl","peeruser":"p","peersecret":"abcdefghijkl"}`, "iscsi_auth_create.peersecret", "The peer secret cannot be the same as user secret."},
		{"portal without listen", "25.04", "iscsi.portal.create", `{"listen":[]}`, "iscsiportal_create.listen", "At least one listen entry is required."},
		{"portal address taken", "24.10", "iscsi.portal.create", `{"listen":[{"ip":"0.0.0.0"}]}`, "iscsiportal_create.listen", "'0.0.0.0' IP is already in use."},
		{"isns server", "25.04", "iscsi.global.update", `{"isns_servers":["nothing:here"]}`, "iscsiglobal_update.isns_servers", `Server "nothing:here" is not a valid IP(:PORT)? tuple.`},
		{"listen port range", "25.10", "iscsi.global.update", `{"listen_port":80}`, "iscsi_update.listen_port", "Input should be greater than or equal to 1025"},
		{"listen port range, old schema", "24.10", "iscsi.global.update", `{"listen_port":80}`, "iscsiglobal_update.listen_port", "Should be between 1025 and 65535"},
		{"unknown field, old schema", "24.10", "iscsi.extent.create", `{"name":"e","disk":"zvol/tank/vol","defer":true}`, "iscsi_extent_create.defer", "Field was not expected"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, c.version)
			e.configureISCSI()
			_, err := e.call(c.method, c.data)
			wantInvalid(t, err, c.attr, c.msg)
		})
	}
}

func TestISCSITargetLifecycle(t *testing.T) {
	e := newEnv(t, "25.10")
	e.configureISCSI()
	tgt := e.must("iscsi.target.create", map[string]any{"name": "pvc-1", "groups": []any{map[string]any{"portal": 1, "initiator": 1}}})
	wantGroups := []any{map[string]any{"portal": 1.0, "initiator": 1.0, "authmethod": "NONE", "auth": nil}}
	if !reflect.DeepEqual(tgt["groups"], wantGroups) || tgt["mode"] != "ISCSI" || tgt["alias"] != nil || tgt["rel_tgt_id"] != 1.0 {
		t.Fatalf("target %v", tgt)
	}
	_, err := e.call("iscsi.target.create", map[string]any{"name": "pvc-1"})
	wantInvalid(t, err, "iscsi_target_create.name", "Target with this name already exists")
	if msg, _ := e.call("iscsi.target.validate_name", "pvc-1", nil); msg != "Target with this name already exists" {
		t.Errorf("validate_name of a taken name: %v", msg)
	}
	if msg, _ := e.call("iscsi.target.validate_name", "pvc-1", id(tgt)); msg != nil {
		t.Errorf("validate_name of the target's own name: %v", msg)
	}

	ext := e.must("iscsi.extent.create", map[string]any{"name": "pvc-1", "disk": "zvol/tank/vol", "comment": "k8s"})
	if ext["disk"] != "zvol/tank/vol" || ext["path"] != "zvol/tank/vol" || ext["blocksize"] != 512.0 || ext["rpm"] != "SSD" ||
		ext["insecure_tpc"] != true || ext["vendor"] != "TrueNAS" || ext["type"] != "DISK" {
		t.Errorf("extent %v", ext)
	}
	if !regexp.MustCompile(`^[0-9a-f]{15}$`).MatchString(ext["serial"].(string)) || !regexp.MustCompile(`^0x6589cfc000000[0-9a-f]{19}$`).MatchString(ext["naa"].(string)) {
		t.Errorf("serial %v naa %v", ext["serial"], ext["naa"])
	}
	_, err = e.call("iscsi.extent.create", map[string]any{"name": "pvc-1", "disk": "zvol/tank/vol2"})
	wantInvalid(t, err, "iscsi_extent_create.name", "Extent name must be unique")

	te := e.must("iscsi.targetextent.create", map[string]any{"target": id(tgt), "extent": id(ext)})
	if te["lunid"] != 0.0 {
		t.Errorf("first LUN %v, want 0", te["lunid"])
	}
	ext2 := e.must("iscsi.extent.create", map[string]any{"name": "second", "disk": "zvol/tank/vol2"})
	_, err = e.call("iscsi.targetextent.create", map[string]any{"target": id(tgt), "extent": id(ext2), "lunid": 0})
	wantInvalid(t, err, "iscsi_targetextent_create.lunid", "LUN ID is already being used for this target.")
	_, err = e.call("iscsi.targetextent.create", map[string]any{"target": id(tgt), "extent": id(ext)})
	wantInvalid(t, err, "iscsi_targetextent_create.extent", "Extent is already in use.")
	if te2 := e.must("iscsi.targetextent.create", map[string]any{"target": id(tgt), "extent": id(ext2)}); te2["lunid"] != 1.0 {
		t.Errorf("second LUN %v, want 1", te2["lunid"])
	}
	_, err = e.call("iscsi.targetextent.create", map[string]any{"target": 99, "extent": 98})
	wantCallError(t, err, middleware.EFAULT, "FOREIGN KEY constraint failed")

	st := e.s.State()
	if len(st.ISCSITargets) != 1 || st.ISCSITargets[0].IQN != "iqn.2005-10.org.freenas.ctl:pvc-1" || len(st.ISCSITargetExtents) != 2 {
		t.Errorf("State %+v", st)
	}

	// an initiator logged in: deletes refuse without force
	e.s.SetTargetInUse("pvc-1", true)
	_, err = e.call("iscsi.target.delete", id(tgt))
	wantCallError(t, err, middleware.EFAULT, "Target pvc-1 is in use.")
	_, err = e.call("iscsi.extent.delete", id(ext))
	wantCallError(t, err, middleware.EFAULT, "Associated target(s) iqn.2005-10.org.freenas.ctl:pvc-1 is in use.")
	_, err = e.call("iscsi.targetextent.delete", id(te))
	wantCallError(t, err, middleware.EFAULT, "is in use.")

	if res, err := e.call("iscsi.target.delete", id(tgt), true, true); err != nil || res != true {
		t.Fatalf("forced delete with extents: %v %v", res, err)
	}
	st = e.s.State()
	if len(st.ISCSITargets)+len(st.ISCSIExtents)+len(st.ISCSITargetExtents) != 0 {
		t.Errorf("left after delete_extents: %+v", st)
	}
}

func TestISCSIFileExtent(t *testing.T) {
	e := newEnv(t, "25.04")
	ext := e.must("iscsi.extent.create", map[string]any{"name": "f", "type": "FILE", "path": "/mnt/tank/a/luns/lun0", "filesize": 1 << 20})
	host, _ := e.m.HostPath("/mnt/tank/a/luns/lun0")
	if st, err := os.Stat(host); err != nil || st.Size() != 1<<20 {
		t.Fatalf("extent file: %v %v", st, err)
	}
	if ext["disk"] != nil || ext["path"] != "/mnt/tank/a/luns/lun0" {
		t.Errorf("file extent %v", ext)
	}
	_, err := e.call("iscsi.extent.update", id(ext), map[string]any{"filesize": 512})
	wantInvalid(t, err, "iscsi_extent_create.filesize", "Shrinking an extent is not allowed. This can lead to data loss.")
	e.must("iscsi.extent.update", id(ext), map[string]any{"filesize": 2 << 20})
	if st, _ := os.Stat(host); st.Size() != 2<<20 {
		t.Errorf("grown file is %d bytes", st.Size())
	}
	e.must("iscsi.extent.delete", id(ext), true, false)
	if _, err := os.Stat(host); !os.IsNotExist(err) {
		t.Errorf("delete with remove left the file: %v", err)
	}
}

func TestISCSIAuthAndPortal(t *testing.T) {
	e := newEnv(t, "25.10")
	e.configureISCSI()
	auth := e.must("iscsi.auth.create", map[string]any{"tag": 3, "user": "u", "secret": "0123456789ab", "peeruser": "p", "peersecret": "0123456789abc"})
	if auth["discovery_auth"] != "NONE" {
		t.Errorf("auth %v", auth)
	}
	tgt := e.must("iscsi.target.create", map[string]any{"name": "t", "groups": []any{map[string]any{"portal": 1, "authmethod": "CHAP_MUTUAL", "auth": 3}}})
	_, err := e.call("iscsi.auth.delete", id(auth))
	wantCallError(t, err, middleware.EFAULT, "Authorized access of 1 is being used by following target(s): "+itoa(id(tgt)))

	p2 := e.must("iscsi.portal.create", map[string]any{"listen": []any{map[string]any{"ip": "10.0.0.1"}}, "comment": "second"})
	if p2["tag"] != 2.0 {
		t.Errorf("second portal tag %v", p2["tag"])
	}
	e.must("iscsi.target.update", id(tgt), map[string]any{"groups": []any{
		map[string]any{"portal": 1, "authmethod": "CHAP_MUTUAL", "auth": 3},
		map[string]any{"portal": id(p2)},
	}})
	e.must("iscsi.portal.delete", 1)
	if got := e.must("iscsi.portal.get_instance", id(p2)); got["tag"] != 1.0 {
		t.Errorf("tags not renumbered after delete: %v", got)
	}
	groups := e.must("iscsi.target.get_instance", id(tgt))["groups"].([]any)
	if len(groups) != 1 || groups[0].(map[string]any)["portal"] != float64(id(p2)) {
		t.Errorf("groups after deleting portal 1: %v", groups)
	}
	_, err = e.call("iscsi.portal.get_instance", 1)
	if err == nil || err.Error() != "ISCSIPortal 1 does not exist" {
		t.Errorf("deleted portal: %v", err)
	}
}
