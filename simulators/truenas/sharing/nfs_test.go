package sharing

import (
	"errors"
	"reflect"
	"testing"

	"github.com/switchyard-csi/switchyard/simulators/truenas/middleware"
)

func TestNFSCRUD(t *testing.T) {
	for _, version := range allVersions {
		t.Run(version, func(t *testing.T) {
			e := newEnv(t, version)
			share := e.must("sharing.nfs.create", map[string]any{"path": "/mnt/tank/a", "comment": "pvc-1", "networks": []string{"10.0.0.5/24"}})
			want := map[string]any{
				"id": 1.0, "path": "/mnt/tank/a", "aliases": []any{}, "comment": "pvc-1",
				"networks": []any{"10.0.0.0/24"}, "hosts": []any{}, "ro": false,
				"maproot_user": nil, "maproot_group": nil, "mapall_user": nil, "mapall_group": nil,
				"security": []any{}, "enabled": true, "locked": false,
			}
			if e.v.AtLeast(25, 4, 0) {
				want["expose_snapshots"] = false
			}
			if e.v.AtLeast(26, 0, 0) { // derived from the path; tier is licensed
				want["dataset"], want["relative_path"], want["tier"] = "tank/a", "", nil
			}
			if !reflect.DeepEqual(share, want) {
				t.Fatalf("created\n%v\nwant\n%v", share, want)
			}
			if got := e.must("sharing.nfs.get_instance", 1); !reflect.DeepEqual(got, want) {
				t.Errorf("get_instance %v", got)
			}
			if got := e.list("sharing.nfs.query", `[["path","=","/mnt/tank/a"]]`); len(got) != 1 || id(got[0]) != 1 {
				t.Errorf("query by path: %v", got)
			}
			upd := e.must("sharing.nfs.update", 1, map[string]any{"ro": true, "maproot_user": "root", "maproot_group": "wheel"})
			if upd["ro"] != true || upd["maproot_user"] != "root" || upd["comment"] != "pvc-1" {
				t.Errorf("update: %v", upd)
			}
			res, err := e.call("sharing.nfs.delete", 1)
			if err != nil {
				t.Fatal(err)
			}
			if wantRes := any(true); !e.v.AtLeast(25, 4, 0) {
				if res != nil {
					t.Errorf("24.10 delete returned %v, want null", res)
				}
			} else if res != wantRes {
				t.Errorf("delete returned %v, want true", res)
			}
			_, err = e.call("sharing.nfs.get_instance", 1)
			var nf *middleware.InstanceNotFound
			if !errors.As(err, &nf) || nf.Message != "SharingNFS 1 does not exist" {
				t.Errorf("get_instance after delete: %v", err)
			}
			_, err = e.call("sharing.nfs.delete", 1)
			if !errors.As(err, &nf) {
				t.Errorf("second delete: %v", err)
			}
		})
	}
}

func TestNFSValidation(t *testing.T) {
	cases := []struct {
		name    string
		version string
		data    string
		attr    string
		msg     string
	}{
		{"pre-22.12 paths, old schema", "24.10", `{"path":"/mnt/tank/a","paths":["/mnt/tank/a"]}`, "sharingnfs_create.paths", "Field was not expected"},
		{"alldirs, old schema", "24.10", `{"path":"/mnt/tank/a","alldirs":false}`, "sharingnfs_create.alldirs", "Field was not expected"},
		{"quiet, old schema", "24.10", `{"path":"/mnt/tank/a","quiet":false}`, "sharingnfs_create.quiet", "Field was not expected"},
		{"paths, pydantic", "25.04", `{"paths":["/mnt/tank/a"]}`, "data.paths", "Extra inputs are not permitted"},
		{"path required, pydantic", "25.04", `{"paths":["/mnt/tank/a"]}`, "data.path", "Field required"},
		{"alldirs, pydantic", "25.10", `{"path":"/mnt/tank/a","alldirs":false}`, "data.alldirs", "Extra inputs are not permitted"},
		{"quiet, 26.04", "26.04", `{"path":"/mnt/tank/a","quiet":false}`, "data.quiet", "Extra inputs are not permitted"},
		{"path required, old schema", "24.10", `{}`, "sharingnfs_create.path", "attribute required"},
		{"missing path, old schema", "24.10", `{"path":"/mnt/tank/nope"}`, "sharingnfs_create.path", "This path does not exist."},
		{"outside the pool", "25.04", `{"path":"/etc"}`, "sharingnfs_create.path", "The path must reside within a pool mount point"},
		{"bad type", "25.10", `{"path":"/mnt/tank/a","ro":"yes"}`, "data.ro", "Input should be a valid boolean"},
		{"bad type, old schema", "24.10", `{"path":"/mnt/tank/a","ro":"yes"}`, "sharingnfs_create.ro", "Not a boolean"},
		{"security flavor", "25.10", `{"path":"/mnt/tank/a","security":["NTLM"]}`, "data.security.0", "Input should be 'SYS', 'KRB5', 'KRB5I' or 'KRB5P'"},
		{"bad network", "25.04", `{"path":"/mnt/tank/a","networks":["10.0.0.0/99"]}`, "sharingnfs_create.networks", "does not appear to be an IPv4 or IPv6 network"},
		{"maproot and mapall", "25.04", `{"path":"/mnt/tank/a","maproot_user":"root","mapall_user":"nobody"}`, "sharingnfs_create.mapall_user", "maproot_user disqualifies mapall_user"},
		{"group without user", "24.10", `{"path":"/mnt/tank/a","mapall_group":"wheel"}`, "sharingnfs_create.mapall_user", "This field is required when map group is specified"},
		{"everybody and more", "25.04", `{"path":"/mnt/tank/a","hosts":["*","10.0.0.1"]}`, "sharingnfs_create.hosts", "'*', i.e. 'everybody', cannot be included"},
		{"expose_snapshots is enterprise", "25.10", `{"path":"/mnt/tank/a","expose_snapshots":true}`, "sharingnfs_create.expose_snapshots", "enterprise feature"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, c.version)
			_, err := e.call("sharing.nfs.create", c.data)
			wantInvalid(t, err, c.attr, c.msg)
			if n := len(e.list("sharing.nfs.query")); n != 0 {
				t.Errorf("%d shares after a refused create", n)
			}
		})
	}
}

// From 25.04 the path is a plain string checked by filesystem.stat while
// the service validates: a missing directory is a CallError, not a field error.
func TestNFSMissingPathIsCallErrorFrom2504(t *testing.T) {
	e := newEnv(t, "25.04")
	_, err := e.call("sharing.nfs.create", map[string]any{"path": "/mnt/tank/a/nope"})
	wantCallError(t, err, middleware.ENOENT, "Path /mnt/tank/a/nope not found")
}

func TestNFSExportConflict(t *testing.T) {
	cases := []struct {
		name        string
		first, then map[string]any
		attr, msg   string
	}{
		{"everybody twice", map[string]any{}, map[string]any{}, "sharingnfs_create.path",
			"ERROR - Export conflict. Another share with the same path exports /mnt/tank/a for 'everybody', i.e. '*'"},
		{"same host", map[string]any{"hosts": []string{"node1"}}, map[string]any{"hosts": []string{"node1"}}, "sharingnfs_create.hosts",
			"ERROR - Another NFS share already exports /mnt/tank/a for node1"},
		{"same network", map[string]any{"networks": []string{"10.0.0.0/24"}}, map[string]any{"networks": []string{"10.0.0.0/24"}}, "sharingnfs_create.networks",
			"ERROR - Another NFS share exports /mnt/tank/a for 10.0.0.0/24"},
		{"overlapping network", map[string]any{"networks": []string{"10.0.0.0/16"}}, map[string]any{"networks": []string{"10.0.1.0/24"}}, "sharingnfs_create.networks",
			"ERROR - This or another NFS share exports /mnt/tank/a to 10.0.0.0/16 and overlaps 10.0.1.0/24"},
		{"network under everybody", map[string]any{}, map[string]any{"networks": []string{"10.0.1.0/24"}}, "sharingnfs_create.networks",
			"to 0.0.0.0/0 and overlaps 10.0.1.0/24"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, "25.04")
			c.first["path"], c.then["path"] = "/mnt/tank/a", "/mnt/tank/a"
			e.must("sharing.nfs.create", c.first)
			_, err := e.call("sharing.nfs.create", c.then)
			wantInvalid(t, err, c.attr, c.msg)
		})
	}
	t.Run("disjoint networks and other paths are fine", func(t *testing.T) {
		e := newEnv(t, "25.10")
		e.must("sharing.nfs.create", map[string]any{"path": "/mnt/tank/a", "networks": []string{"10.0.0.0/24"}})
		e.must("sharing.nfs.create", map[string]any{"path": "/mnt/tank/a", "networks": []string{"10.0.1.0/24"}})
		e.must("sharing.nfs.create", map[string]any{"path": "/mnt/tank/b"})
		e.must("sharing.nfs.create", map[string]any{"path": "/mnt/tank/a/child"})
		// an update is not in conflict with the share itself
		e.must("sharing.nfs.update", 3, map[string]any{"comment": "x"})
	})
}

func TestNFSUpdateValidates(t *testing.T) {
	e := newEnv(t, "25.10")
	e.must("sharing.nfs.create", map[string]any{"path": "/mnt/tank/a"})
	e.must("sharing.nfs.create", map[string]any{"path": "/mnt/tank/b"})
	_, err := e.call("sharing.nfs.update", 2, map[string]any{"path": "/mnt/tank/a"})
	wantInvalid(t, err, "sharingnfs_update.path", "Export conflict")
	_, err = e.call("sharing.nfs.update", 2, map[string]any{"paths": []string{"/mnt/tank/a"}})
	wantInvalid(t, err, "data.paths", "Extra inputs are not permitted")
	_, err = e.call("sharing.nfs.update", 7, map[string]any{"comment": "x"})
	var nf *middleware.InstanceNotFound
	if !errors.As(err, &nf) || nf.Message != "SharingNFS 7 does not exist" {
		t.Errorf("update of a missing id: %v", err)
	}
	if got := e.must("sharing.nfs.get_instance", 2); got["path"] != "/mnt/tank/b" {
		t.Errorf("refused update changed the share: %v", got)
	}
}

// Up to 24.10 the old Dir attribute refuses a missing path with ENOENT.
func TestNFSMissingPathErrnoBefore2504(t *testing.T) {
	e := newEnv(t, "24.10")
	_, err := e.call("sharing.nfs.create", map[string]any{"path": "/mnt/tank/a/nope"})
	var v middleware.ValidationErrors
	if !errors.As(err, &v) || len(v) != 1 || v[0].Errno != middleware.ENOENT || v[0].Message != "This path does not exist." {
		t.Fatalf("error %#v, want one ENOENT validation error", err)
	}
}
