package truenas

// Rows 1, 2, 6, 8 and 10 of issue 15: datasets, the ZFS resource query, ACLs
// (see fidelity_test.go).

import (
	"net/http"
	"strings"
	"testing"
)

// Row 1: the legacy schema's Str (pool.dataset up to 25.04) stringifies an
// integer, so democratic-csi's PUT with a numeric user property value is
// stored as "1"; the pydantic models of 25.10 refuse it.
func TestFidelityLegacyStrStringifiesIntegerUserProperty(t *testing.T) {
	for _, v := range []string{"24.10", "25.04", "25.10"} {
		t.Run(v, func(t *testing.T) {
			s := startServer(t, v)
			restJSON(t, s, "POST", "/pool/dataset", `{"name":"tank/pvc-1","type":"FILESYSTEM"}`, nil)
			hc, base := restClient(t, s)
			body := `{"user_properties_update":[{"key":"democratic-csi:volume_context_provisioner_driver_instance_id","value":1}]}`
			code, data := rest(t, hc, base, "PUT", "/pool/dataset/id/tank%2Fpvc-1", body, rootAuth)
			attr := "pool_dataset_update.user_properties_update.0.value"
			if v == "25.10" {
				if code != 422 || !jsonHas(data, attr, "Input should be a valid string") {
					t.Fatalf("25.10 (pydantic): %d %s, want 422 %s: Input should be a valid string", code, data, attr)
				}
				return
			}
			if code != http.StatusOK {
				t.Fatalf("PUT with an integer value: %d %s, want 200 (the legacy Str stringifies it)", code, data)
			}
			var ds map[string]any
			restJSON(t, s, "GET", "/pool/dataset/id/tank%2Fpvc-1", "", &ds)
			up, _ := ds["user_properties"].(map[string]any)
			p, _ := up["democratic-csi:volume_context_provisioner_driver_instance_id"].(map[string]any)
			if p["value"] != "1" || p["rawvalue"] != "1" {
				t.Errorf("stored user property = %v, want value \"1\"", p)
			}
			// A float or a bool is still not a string to the legacy Str.
			code, data = rest(t, hc, base, "PUT", "/pool/dataset/id/tank%2Fpvc-1",
				`{"user_properties_update":[{"key":"a:b","value":1.5}]}`, rootAuth)
			if code != 422 || !jsonHas(data, attr, "Not a string") {
				t.Errorf("PUT with a float value: %d %s, want 422 Not a string", code, data)
			}
		})
	}
}

// Row 2: pool.dataset.query's extra.snapshots* reach the ZFS query, which
// adds a "snapshots" list per dataset ({pool, name, type, snapshot_name,
// dataset, id, createtxg}, "properties" only when snapshots_properties
// asks) and, with snapshots_count, "snapshot_count".
func TestFidelityDatasetQueryExtraSnapshots(t *testing.T) {
	for _, v := range []string{"24.10", "25.04", "25.10", "26.04"} {
		t.Run(v, func(t *testing.T) {
			s := startServer(t, v)
			c := dialAny(t, s)
			c.mustCall("pool.dataset.create", map[string]any{"name": "tank/a", "type": "FILESYSTEM"})
			c.mustCall("pool.dataset.create", map[string]any{"name": "tank/a/b", "type": "FILESYSTEM"})
			ns := "pool.snapshot"
			if !s.Version().AtLeast(25, 10, 0) {
				ns = "zfs.snapshot"
			}
			c.mustCall(ns+".create", map[string]any{"dataset": "tank/a", "name": "s1"})
			c.mustCall(ns+".create", map[string]any{"dataset": "tank/a/b", "name": "s2"})

			var rows []map[string]any
			c.decode(c.mustCall("pool.dataset.query", []any{[]any{"id", "=", "tank/a"}},
				map[string]any{"extra": map[string]any{"snapshots": true, "retrieve_children": false}}), &rows)
			if len(rows) != 1 {
				t.Fatalf("query: %v", rows)
			}
			snaps, _ := rows[0]["snapshots"].([]any)
			if len(snaps) != 1 {
				t.Fatalf("snapshots of tank/a = %v, want tank/a@s1", rows[0]["snapshots"])
			}
			sn := snaps[0].(map[string]any)
			want := map[string]any{"pool": "tank", "name": "tank/a@s1", "type": "SNAPSHOT", "snapshot_name": "s1", "dataset": "tank/a", "id": "tank/a@s1"}
			for k, w := range want {
				if sn[k] != w {
					t.Errorf("snapshot %s = %v, want %v", k, sn[k], w)
				}
			}
			if _, isStr := sn["createtxg"].(string); !isStr {
				t.Errorf("createtxg = %#v, want a string", sn["createtxg"])
			}
			if _, has := sn["properties"]; has {
				t.Errorf("snapshots_properties defaults to []: no properties, got %v", sn["properties"])
			}

			// snapshots_recursive: the descendants' snapshots too, up to
			// 25.04 (libzfs); 25.10's query ignores it.
			c.decode(c.mustCall("pool.dataset.query", []any{[]any{"id", "=", "tank/a"}},
				map[string]any{"extra": map[string]any{"snapshots": true, "snapshots_recursive": true,
					"snapshots_properties": []any{"used"}, "snapshots_count": true, "retrieve_children": false}}), &rows)
			snaps, _ = rows[0]["snapshots"].([]any)
			wantN := 2
			if s.Version().AtLeast(25, 10, 0) {
				wantN = 1
			}
			if len(snaps) != wantN {
				t.Errorf("recursive snapshots = %d, want %d: %v", len(snaps), wantN, snaps)
			}
			props, _ := snaps[0].(map[string]any)["properties"].(map[string]any)
			if _, ok := props["used"]; !ok || len(props) != 1 {
				t.Errorf("snapshots_properties [used]: properties %v", props)
			}
			if rows[0]["snapshot_count"] != 1.0 {
				t.Errorf("snapshot_count = %v, want 1", rows[0]["snapshot_count"])
			}
			if !s.Version().AtLeast(26, 0, 0) {
				// democratic-csi's REST form: GET by id with extra.* parameters.
				var ds map[string]any
				restJSON(t, s, "GET", "/pool/dataset/id/tank%2Fa?extra.snapshots=true&extra.retrieve_children=false", "", &ds)
				if l, _ := ds["snapshots"].([]any); len(l) != 1 {
					t.Errorf("REST GET with extra.snapshots: snapshots %v", ds["snapshots"])
				}
			}
		})
	}
}

// Row 10: pool.dataset.promote of a dataset that is no clone. Up to 25.10
// the plugin checks the origin itself: CallError EBADMSG (74) "Only cloned
// datasets can be promoted.", ENOENT 'Dataset "x" does not exist.' for a
// missing one; 26 goes through zfs.resource.promote's validation errors.
func TestFidelityPromoteOfNoClone(t *testing.T) {
	for _, v := range []string{"24.10", "25.04", "25.10", "26.04"} {
		t.Run(v, func(t *testing.T) {
			s := startServer(t, v)
			c := dialAny(t, s)
			c.mustCall("pool.dataset.create", map[string]any{"name": "tank/plain", "type": "FILESYSTEM"})
			_, werr := c.callRaw("pool.dataset.promote", "tank/plain")
			_, missing := c.callRaw("pool.dataset.promote", "tank/nothing")
			if s.Version().AtLeast(26, 0, 0) {
				if werr == nil || werr.Code != -32602 || !strings.Contains(werr.Reason, "zfs.resource.promote: 'tank/plain' is ineligible for promotion.") {
					t.Errorf("26: promote of a non-clone: %+v", werr)
				}
				if missing == nil || missing.Code != -32602 || !strings.Contains(missing.Reason, "'tank/nothing' not found") {
					t.Errorf("26: promote of a missing dataset: %+v", missing)
				}
				return
			}
			if werr == nil || werr.Errno != 74 || werr.Errname != "EBADMSG" || werr.Reason != "[EBADMSG] Only cloned datasets can be promoted." {
				t.Errorf("promote of a non-clone: %+v, want errno 74 EBADMSG", werr)
			}
			if v != "24.10" && werr != nil && werr.Code != -32001 {
				t.Errorf("JSON-RPC code %d, want -32001", werr.Code)
			}
			if missing == nil || missing.Errno != 2 || missing.Reason != `[ENOENT] Dataset "tank/nothing" does not exist.` {
				t.Errorf("promote of a missing dataset: %+v", missing)
			}
			if !s.Version().AtLeast(26, 0, 0) {
				hc, base := restClient(t, s)
				code, body := rest(t, hc, base, "POST", "/pool/dataset/id/tank%2Fplain/promote", "", rootAuth)
				if code != 422 || !jsonEqual(t, body, `{"message":"Only cloned datasets can be promoted.","errno":74}`) {
					t.Errorf("REST promote of a non-clone: %d %s", code, body)
				}
			}
		})
	}
}

// Row 6: zfs.resource.query, public from 25.10.0 (the Go drivers read
// volumes through it): {paths, properties, get_user_properties,
// get_source, nest_results, get_children}; absent before 25.10.
func TestFidelityZFSResourceQuery(t *testing.T) {
	for _, v := range []string{"24.10", "25.04", "25.10", "26.04"} {
		t.Run(v, func(t *testing.T) {
			s := startServer(t, v)
			c := dialAny(t, s)
			if !s.Version().AtLeast(25, 10, 0) {
				_, werr := c.callRaw("zfs.resource.query", map[string]any{"paths": []any{"tank"}})
				if werr == nil || (v != "24.10" && werr.Code != -32601) {
					t.Fatalf("zfs.resource.query before 25.10: %+v, want -32601", werr)
				}
				return
			}
			c.mustCall("pool.dataset.create", map[string]any{"name": "tank/vols", "type": "FILESYSTEM"})
			c.mustCall("pool.dataset.create", map[string]any{"name": "tank/vols/pvc-1", "type": "VOLUME", "volsize": 1 << 20, "volblocksize": "16K", "sparse": true,
				"user_properties": []any{map[string]any{"key": "tns-csi:managed", "value": "true"}}})
			var rows []map[string]any
			c.decode(c.mustCall("zfs.resource.query", map[string]any{"paths": []any{"tank/vols/pvc-1"},
				"properties": []any{"volsize", "mounted"}, "get_user_properties": true}), &rows)
			if len(rows) != 1 {
				t.Fatalf("rows %v", rows)
			}
			r := rows[0]
			if r["name"] != "tank/vols/pvc-1" || r["pool"] != "tank" || r["type"] != "VOLUME" {
				t.Errorf("entry %v", r)
			}
			if _, ok := r["createtxg"].(float64); !ok {
				t.Errorf("createtxg %#v, want an integer", r["createtxg"])
			}
			props := r["properties"].(map[string]any)
			vs, _ := props["volsize"].(map[string]any)
			if vs["raw"] != "1048576" || vs["value"] != 1048576.0 {
				t.Errorf("volsize %v", vs)
			}
			if src, _ := vs["source"].(map[string]any); src["type"] != "LOCAL" || src["value"] != nil {
				t.Errorf("volsize source %v", vs["source"])
			}
			if _, has := props["mounted"]; has {
				t.Errorf("mounted is no volume property: %v", props)
			}
			if up, _ := r["user_properties"].(map[string]any); up["tns-csi:managed"] != "true" {
				t.Errorf("user_properties %v", r["user_properties"])
			}
			// Defaults: the space properties, no user properties.
			c.decode(c.mustCall("zfs.resource.query", map[string]any{"paths": []any{"tank/vols"}, "get_children": true, "nest_results": true}), &rows)
			if len(rows) != 1 || rows[0]["user_properties"] != nil || len(rows[0]["children"].([]any)) != 1 {
				t.Fatalf("nested query: %v", rows)
			}
			if p := rows[0]["properties"].(map[string]any); len(p) != 6 || p["usedbysnapshots"] == nil {
				t.Errorf("default properties %v, want the six space properties", p)
			}
			for _, bad := range []struct {
				data map[string]any
				want string
			}{
				{map[string]any{"paths": []any{"tank/vols@s"}}, "Querying snapshot information is unsupported at this time."},
				{map[string]any{"paths": []any{"tank/vols", "tank/vols/pvc-1"}, "get_children": true}, "Paths must be non-overlapping"},
				{map[string]any{"paths": []any{"tank/none"}}, "'tank/none': not found"},
			} {
				_, werr := c.callRaw("zfs.resource.query", bad.data)
				if werr == nil || werr.Code != -32602 || !strings.Contains(werr.Reason, bad.want) {
					t.Errorf("%v: %+v, want -32602 %q", bad.data, werr, bad.want)
				}
			}
		})
	}
}

// Row 8: filesystem.getacl and the filesystem.setacl job
// (plugins/filesystem_/acl.py), on POSIX (the pool default) and NFSv4
// (share_type SMB) datasets.
func TestFidelityFilesystemACL(t *testing.T) {
	for _, v := range []string{"24.10", "25.04", "25.10", "26.04"} {
		t.Run(v, func(t *testing.T) {
			s := startServer(t, v)
			c := dialAny(t, s)
			c.mustCall("pool.dataset.create", map[string]any{"name": "tank/posix", "type": "FILESYSTEM"})
			if j := c.job("filesystem.setperm", map[string]any{"path": "/mnt/tank/posix", "mode": "750"}); j["state"] != "SUCCESS" {
				t.Fatalf("setperm %v", j)
			}
			var acl map[string]any
			c.decode(c.mustCall("filesystem.getacl", "/mnt/tank/posix"), &acl)
			if acl["acltype"] != "POSIX1E" || acl["trivial"] != true || acl["path"] != "/mnt/tank/posix" {
				t.Fatalf("getacl of a fresh dataset: %v", acl)
			}
			entries, _ := acl["acl"].([]any)
			if len(entries) != 3 {
				t.Fatalf("trivial POSIX ACL %v", entries)
			}
			grp := entries[1].(map[string]any)
			if grp["tag"] != "GROUP_OBJ" || grp["id"] != -1.0 || grp["default"] != false ||
				!reflectEqual(grp["perms"], map[string]any{"READ": true, "WRITE": false, "EXECUTE": true}) {
				t.Errorf("GROUP_OBJ of mode 750: %v", grp)
			}
			perms := func(r, w, x bool) map[string]any { return map[string]any{"READ": r, "WRITE": w, "EXECUTE": x} }
			dacl := []any{
				map[string]any{"tag": "USER_OBJ", "id": -1, "perms": perms(true, true, true), "default": false},
				map[string]any{"tag": "GROUP_OBJ", "id": -1, "perms": perms(true, false, true), "default": false},
				map[string]any{"tag": "USER", "id": 1000, "perms": perms(true, true, true), "default": false},
				map[string]any{"tag": "MASK", "id": -1, "perms": perms(true, true, true), "default": false},
				map[string]any{"tag": "OTHER", "id": -1, "perms": perms(false, false, false), "default": false},
			}
			job := c.job("filesystem.setacl", map[string]any{"path": "/mnt/tank/posix", "dacl": dacl})
			if job["state"] != "SUCCESS" {
				t.Fatalf("setacl job %v", job)
			}
			c.decode(c.mustCall("filesystem.getacl", "/mnt/tank/posix"), &acl)
			if acl["trivial"] != false || len(acl["acl"].([]any)) != 5 {
				t.Errorf("getacl after setacl: %v", acl)
			}
			job = c.job("filesystem.setacl", map[string]any{"path": "/mnt/tank/posix", "dacl": []any{}, "options": map[string]any{"stripacl": true}})
			c.decode(c.mustCall("filesystem.getacl", "/mnt/tank/posix"), &acl)
			if job["state"] != "SUCCESS" || acl["trivial"] != true {
				t.Errorf("after stripacl: job %v, acl %v", job["state"], acl)
			}

			c.mustCall("pool.dataset.create", map[string]any{"name": "tank/smb", "type": "FILESYSTEM", "share_type": "SMB"})
			c.decode(c.mustCall("filesystem.getacl", "/mnt/tank/smb"), &acl)
			if acl["acltype"] != "NFS4" || acl["aclflags"] == nil {
				t.Errorf("getacl of an SMB dataset: %v", acl)
			}
			job = c.job("filesystem.setacl", map[string]any{"path": "/mnt/tank/smb", "acltype": "POSIX1E", "dacl": dacl})
			if job["state"] != "FAILED" || !strings.Contains(fmtAny(job["error"]), "ACL type is invalid for selected path") {
				t.Errorf("POSIX1E ACL on an NFSv4 dataset: %v %v", job["state"], job["error"])
			}
			_, werr := c.callRaw("filesystem.getacl", "/mnt/tank/none")
			if werr == nil || werr.Errno != 2 || !strings.Contains(werr.Reason, "Path not found.") {
				t.Errorf("getacl of a missing path: %+v", werr)
			}
		})
	}
}
