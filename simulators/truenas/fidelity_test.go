package truenas

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/switchyard-csi/switchyard/simulators/zfsssh"
)

// The tests named TestFidelity* each pin one row of issue 15: a request
// exactly as a TrueNAS client other than switchyard's sends it (democratic-
// csi over REST, the Go drivers over JSON-RPC), and the answer the real
// middleware gives it (its plugins and API models are the reference).

// restClient is how a test talks REST to s (TLS or not) as root.
func restClient(t *testing.T, s *Server) (*http.Client, string) {
	t.Helper()
	if s.TLSURL() != "" {
		return tlsClient(t, s), s.TLSURL()
	}
	return nil, s.URL()
}

// restJSON sends a REST request and decodes a 200 answer into v.
func restJSON(t *testing.T, s *Server, verb, path, body string, v any) {
	t.Helper()
	hc, base := restClient(t, s)
	code, data := rest(t, hc, base, verb, path, body, rootAuth)
	if code != http.StatusOK {
		t.Fatalf("%s %s: %d %s", verb, path, code, data)
	}
	if v != nil {
		if err := json.Unmarshal(data, v); err != nil {
			t.Fatalf("%s %s: %s: %v", verb, path, data, err)
		}
	}
}

// Row 12: a fresh TrueNAS has no iSCSI portal and no initiator group; an
// admin (or a client's set-up) creates them, and the first ones get id 1.
func TestFidelityFreshSystemHasNoPortalOrInitiatorGroup(t *testing.T) {
	for _, v := range []string{"24.10", "25.04", "25.10"} {
		t.Run(v, func(t *testing.T) {
			s := startServer(t, v)
			// democratic-csi lists portals and groups over REST.
			for _, path := range []string{"/iscsi/portal", "/iscsi/initiator"} {
				var rows []map[string]any
				restJSON(t, s, "GET", path, "", &rows)
				if len(rows) != 0 {
					t.Errorf("GET %s on a fresh system = %v, want []", path, rows)
				}
			}
			hc, base := restClient(t, s)
			if code, body := rest(t, hc, base, "GET", "/iscsi/portal/id/1", "", rootAuth); code != http.StatusNotFound {
				t.Errorf("GET /iscsi/portal/id/1 on a fresh system: %d %s, want 404", code, body)
			}
			// A target naming portal 1 before anyone made it is refused.
			code, body := rest(t, hc, base, "POST", "/iscsi/target", `{"name":"pvc-1","groups":[{"portal":1}]}`, rootAuth)
			if code != 422 || !jsonHas(body, "iscsi_target_create.groups.0.portal", "1 Portal not found in database") {
				t.Errorf("target on a missing portal: %d %s", code, body)
			}
			var portal map[string]any
			restJSON(t, s, "POST", "/iscsi/portal", `{"listen":[{"ip":"0.0.0.0"}]}`, &portal)
			if portal["id"] != 1.0 || portal["tag"] != 1.0 {
				t.Errorf("the admin's first portal: %v", portal)
			}
		})
	}
}

// jsonHas reports whether a REST validation error body has attr with a
// message containing msg.
func jsonHas(body []byte, attr, msg string) bool {
	var m map[string][]struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(body, &m) != nil {
		return false
	}
	for _, e := range m[attr] {
		if strings.Contains(e.Message, msg) {
			return true
		}
	}
	return false
}

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

// Row 3: from 25.10 every SMB options model carries `purpose` (the
// discriminator the entry's validator writes into options), so a client
// that sends it inside options as well is accepted; the share's purpose
// wins, options never show it, and a purpose alone takes its defaults.
func TestFidelitySMBOptionsCarryPurpose(t *testing.T) {
	for _, v := range []string{"25.10", "26.04"} {
		t.Run(v, func(t *testing.T) {
			s := startServer(t, v)
			c := dialAny(t, s)
			c.mustCall("pool.dataset.create", map[string]any{"name": "tank/smb", "type": "FILESYSTEM", "share_type": "SMB"})
			var share map[string]any
			c.decode(c.mustCall("sharing.smb.create", map[string]any{"name": "pvc-1", "path": "/mnt/tank/smb",
				"purpose": "LEGACY_SHARE", "options": map[string]any{"purpose": "LEGACY_SHARE", "guestok": true}}), &share)
			opts, _ := share["options"].(map[string]any)
			if share["purpose"] != "LEGACY_SHARE" || opts["guestok"] != true {
				t.Errorf("share %v", share)
			}
			if _, has := opts["purpose"]; has {
				t.Errorf("options show the discriminator (excluded from the model's output): %v", opts)
			}
			// options.purpose is overwritten by the share's purpose.
			c.decode(c.mustCall("sharing.smb.create", map[string]any{"name": "pvc-2", "path": "/mnt/tank/smb",
				"purpose": "DEFAULT_SHARE", "options": map[string]any{"purpose": "LEGACY_SHARE"}}), &share)
			if share["purpose"] != "DEFAULT_SHARE" {
				t.Errorf("purpose %v, want DEFAULT_SHARE", share["purpose"])
			}
			// A purpose alone: options {purpose} validated, i.e. the defaults.
			c.decode(c.mustCall("sharing.smb.create", map[string]any{"name": "pvc-3", "path": "/mnt/tank/smb",
				"purpose": "TIME_LOCKED_SHARE"}), &share)
			if opts, _ := share["options"].(map[string]any); opts["grace_period"] != 900.0 {
				t.Errorf("TIME_LOCKED_SHARE without options: %v", share["options"])
			}
			// options without the share's purpose is still refused.
			_, werr := c.callRaw("sharing.smb.create", map[string]any{"name": "pvc-4", "path": "/mnt/tank/smb",
				"options": map[string]any{"purpose": "LEGACY_SHARE"}})
			if werr == nil || werr.Code != -32602 || !strings.Contains(werr.Reason, "You must set `purpose` if you set `options`.") {
				t.Errorf("options without purpose: %+v", werr)
			}
		})
	}
}

// Row 11: 25.10's SmbShareName validator words the length limit itself.
func TestFidelitySMBShareNameTooLong(t *testing.T) {
	name := strings.Repeat("n", 81)
	for _, c := range []struct{ v, want string }{
		{"25.10", "Value error, " + name + ": share name must not exceed 80 characters in length"},
		{"26.04", "Value error, " + name + ": share name must not exceed 80 characters in length"},
		{"25.04", "Value greater than 80 not allowed"},
	} {
		t.Run(c.v, func(t *testing.T) {
			s := startServer(t, c.v)
			cl := dialAny(t, s)
			_, werr := cl.callRaw("sharing.smb.create", map[string]any{"name": name, "path": "/mnt/tank"})
			if werr == nil || werr.Code != -32602 || !strings.Contains(werr.Reason, c.want) {
				t.Fatalf("81-character share name: %+v, want -32602 %q", werr, c.want)
			}
			if strings.Contains(werr.Reason, "String should have at most 80 characters") {
				t.Errorf("pydantic's generic length text: %s", werr.Reason)
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

// Row 7: periodic snapshot tasks (plugins/snapshot.py), every release:
// the legacy schema of 24.10 wants every field, the pydantic models of
// 25.04+ only the dataset; the entry adds vmware_sync and zettarepl's state.
func TestFidelityPeriodicSnapshotTasks(t *testing.T) {
	for _, v := range []string{"24.10", "25.04", "25.10", "26.04"} {
		t.Run(v, func(t *testing.T) {
			s := startServer(t, v)
			c := dialAny(t, s)
			c.mustCall("pool.dataset.create", map[string]any{"name": "tank/data", "type": "FILESYSTEM"})
			legacy := !s.Version().AtLeast(25, 4, 0)
			create := map[string]any{"dataset": "tank/data"}
			if legacy {
				_, werr := c.callRaw("pool.snapshottask.create", create)
				if werr == nil || !strings.Contains(werr.Reason, "periodic_snapshot_create.recursive: attribute required") {
					t.Fatalf("24.10 create without the required fields: %+v", werr)
				}
				create = map[string]any{"dataset": "tank/data", "recursive": false, "lifetime_value": 2, "lifetime_unit": "WEEK",
					"naming_schema": "auto-%Y-%m-%d_%H-%M", "schedule": map[string]any{"hour": "*"}}
			}
			var task map[string]any
			c.decode(c.mustCall("pool.snapshottask.create", create), &task)
			want := map[string]any{"id": 1.0, "dataset": "tank/data", "recursive": false, "lifetime_value": 2.0, "lifetime_unit": "WEEK",
				"enabled": true, "naming_schema": "auto-%Y-%m-%d_%H-%M", "allow_empty": true, "vmware_sync": false}
			for k, w := range want {
				if task[k] != w {
					t.Errorf("%s = %v, want %v", k, task[k], w)
				}
			}
			sched, _ := task["schedule"].(map[string]any)
			if sched["minute"] != "00" || sched["begin"] != "00:00" || sched["end"] != "23:59" || sched["dow"] != "*" {
				t.Errorf("schedule %v", sched)
			}
			if st, _ := task["state"].(map[string]any); st["state"] != "PENDING" {
				t.Errorf("state %v", task["state"])
			}
			var rows []map[string]any
			c.decode(c.mustCall("pool.snapshottask.query", []any{[]any{"dataset", "=", "tank/data"}}), &rows)
			if len(rows) != 1 {
				t.Errorf("query by dataset: %v", rows)
			}
			_, werr := c.callRaw("pool.snapshottask.create", map[string]any{"dataset": "tank/data", "recursive": false, "lifetime_value": 2,
				"lifetime_unit": "WEEK", "naming_schema": "snap-%Y%m%d", "schedule": map[string]any{}})
			wantMsg := "%H must be present in snapshot naming schema"
			if !legacy {
				wantMsg = "Value error, " + wantMsg
			}
			if werr == nil || !strings.Contains(werr.Reason, wantMsg) {
				t.Errorf("naming schema without %%H: %+v, want %q", werr, wantMsg)
			}
			_, werr = c.callRaw("pool.snapshottask.create", map[string]any{"dataset": "tank/none", "recursive": false, "lifetime_value": 2,
				"lifetime_unit": "WEEK", "naming_schema": "auto-%Y-%m-%d_%H-%M", "schedule": map[string]any{}})
			if werr == nil || !strings.Contains(werr.Reason, "periodic_snapshot_create.dataset: Dataset not found") {
				t.Errorf("task on a missing dataset: %+v", werr)
			}
			var ok bool
			c.decode(c.mustCall("pool.snapshottask.delete", 1), &ok)
			if !ok {
				t.Error("delete did not answer true")
			}
			_, werr = c.callRaw("pool.snapshottask.get_instance", 1)
			if werr == nil || !strings.Contains(werr.Reason, "PeriodicSnapshotTask 1 does not exist") {
				t.Errorf("get_instance after delete: %+v", werr)
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

func reflectEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

func fmtAny(v any) string { b, _ := json.Marshal(v); return string(b) }

// Row 9: the service list and its control: GET /service (REST, up to
// 25.10), service.query, service.start/stop (removed in 26) and the
// service.control job (25.10+).
func TestFidelityServices(t *testing.T) {
	for _, v := range []string{"24.10", "25.04", "25.10", "26.04"} {
		t.Run(v, func(t *testing.T) {
			s := startServer(t, v)
			c := dialAny(t, s)
			var rows []map[string]any
			c.decode(c.mustCall("service.query", []any{[]any{"service", "=", "nfs"}}, map[string]any{}), &rows)
			if len(rows) != 1 || rows[0]["id"] != 9.0 || rows[0]["enable"] != false || rows[0]["state"] != "STOPPED" ||
				!reflectEqual(rows[0]["pids"], []any{}) {
				t.Fatalf("nfs on a fresh system: %v", rows)
			}
			if !s.Version().AtLeast(26, 0, 0) {
				var all []map[string]any
				restJSON(t, s, "GET", "/service", "", &all)
				names := map[string]bool{}
				for _, r := range all {
					names[r["service"].(string)] = true
				}
				hasNVMet := s.Version().AtLeast(25, 10, 0)
				if !names["iscsitarget"] || !names["cifs"] || names["nvmet"] != hasNVMet || names["smartd"] == hasNVMet {
					t.Errorf("GET /service lists %v", names)
				}
			}
			if s.Version().AtLeast(25, 10, 0) {
				job := c.job("service.control", "START", "nfs", map[string]any{"silent": false})
				if job["state"] != "SUCCESS" || job["result"] != true {
					t.Fatalf("service.control START nfs: %v", job)
				}
				_, werr := c.callRaw("service.control", "BOUNCE", "nfs")
				if werr == nil || werr.Code != -32602 {
					t.Errorf("service.control with a bad verb: %+v", werr)
				}
			} else {
				var ok bool
				c.decode(c.mustCall("service.start", "nfs", map[string]any{"silent": false}), &ok)
				if !ok {
					t.Fatal("service.start nfs answered false")
				}
			}
			if _, werr := c.callRaw("service.start", "nfs"); s.Version().AtLeast(26, 0, 0) && (werr == nil || werr.Code != -32601) {
				t.Errorf("service.start on 26 (removed): %+v", werr)
			}
			c.decode(c.mustCall("service.query", []any{[]any{"service", "=", "nfs"}}), &rows)
			if rows[0]["state"] != "RUNNING" || len(rows[0]["pids"].([]any)) != 1 {
				t.Errorf("nfs after start: %v", rows[0])
			}
			var started bool
			c.decode(c.mustCall("service.started", "nfs"), &started)
			if !started {
				t.Error("service.started nfs = false after start")
			}
			var id int
			c.decode(c.mustCall("service.update", "nfs", map[string]any{"enable": true}), &id)
			if id != 9 {
				t.Errorf("service.update returned %d, want the row id 9", id)
			}
			if _, werr := c.callRaw("service.update", "nope", map[string]any{"enable": true}); werr == nil || werr.Errno != 2 ||
				!strings.Contains(werr.Reason, "Service nope not found.") {
				t.Errorf("update of an unknown service: %+v", werr)
			}
		})
	}
}

// sshRun starts s's SSH endpoint and returns a function running one
// command in a new session: its combined output and exit status.
func sshRun(t *testing.T, s *Server) func(cmd string) (string, int) {
	t.Helper()
	addr, err := s.StartSSH("127.0.0.1:0", map[string]zfsssh.User{"root": {Password: "pw"}})
	if err != nil {
		t.Fatal(err)
	}
	client, err := ssh.Dial("tcp", addr, &ssh.ClientConfig{User: "root", Auth: []ssh.AuthMethod{ssh.Password("pw")},
		HostKeyCallback: ssh.InsecureIgnoreHostKey()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	return func(cmd string) (string, int) {
		t.Helper()
		sess, err := client.NewSession()
		if err != nil {
			t.Fatal(err)
		}
		defer sess.Close()
		out, err := sess.CombinedOutput(cmd)
		var exit *ssh.ExitError
		switch {
		case err == nil:
			return string(out), 0
		case errors.As(err, &exit):
			return string(out), exit.ExitStatus()
		}
		t.Fatalf("%s: %v", cmd, err)
		return "", -1
	}
}

// Row 5: where zfs lives over SSH. Every simulated release is SCALE
// (Debian): the tagged middleware of 24.10.2, 25.04.2 and 25.10.1 itself
// calls /usr/sbin/zfs (keychain.py's sudo command list,
// disable-rootfs-protection), so that path answers on every release;
// /usr/local/sbin/zfs is TrueNAS CORE's (FreeBSD), which is not simulated.
func TestFidelitySSHZFSPath(t *testing.T) {
	for _, v := range []string{"24.10", "25.04", "25.10", "26.04"} {
		t.Run(v, func(t *testing.T) {
			run := sshRun(t, startServer(t, v))
			for _, cmd := range []string{"/usr/sbin/zfs list -H -o name tank", "/sbin/zfs list -H -o name tank", "zfs list -H -o name tank"} {
				if out, code := run(cmd); code != 0 || out != "tank\n" {
					t.Errorf("%s: %d %q", cmd, code, out)
				}
			}
			if out, code := run("/usr/local/sbin/zfs list"); code != 127 || !strings.Contains(out, "not found") {
				t.Errorf("/usr/local/sbin/zfs on SCALE %s: %d %q, want 127 not found", v, code, out)
			}
		})
	}
}

// Row 4: SCALE serves iSCSI with SCST; while the iSCSI service runs, each
// enabled extent is an SCST device, and democratic-csi's freenas-iscsi
// driver (and the middleware itself, iscsi_/global_linux.py) writes 1 to
// its resync_size after growing the zvol.
func TestFidelitySCSTSysfsResync(t *testing.T) {
	for _, v := range []string{"24.10", "25.10"} {
		t.Run(v, func(t *testing.T) {
			s := startServer(t, v)
			c := dialAny(t, s)
			c.mustCall("pool.dataset.create", map[string]any{"name": "tank/pvc-1", "type": "VOLUME", "volsize": 1 << 20, "sparse": true})
			c.mustCall("iscsi.extent.create", map[string]any{"name": "pvc-1.x", "disk": "zvol/tank/pvc-1"})
			run := sshRun(t, s)
			resync := "echo 1 > /sys/kernel/scst_tgt/devices/pvc-1_x/resync_size"
			if out, code := run(resync); code == 0 || !strings.Contains(out, "nonexistent") {
				t.Errorf("with the iSCSI service stopped: %d %q, want no SCST sysfs", code, out)
			}
			if s.Version().AtLeast(25, 10, 0) {
				c.job("service.control", "START", "iscsitarget", map[string]any{})
			} else {
				c.mustCall("service.start", "iscsitarget", map[string]any{})
			}
			run("zfs set volsize=2M tank/pvc-1")
			if out, code := run(resync); code != 0 || out != "" {
				t.Errorf("%s: %d %q", resync, code, out)
			}
			if out, _ := run("cat /sys/kernel/scst_tgt/devices/pvc-1_x/resync_size"); out != "1\n" {
				t.Errorf("resync_size reads %q after the write", out)
			}
			if out, _ := run("ls /sys/kernel/scst_tgt/devices"); out != "pvc-1_x\n" {
				t.Errorf("SCST devices: %q", out)
			}
			c.mustCall("iscsi.extent.delete", 1)
			if out, code := run("ls /sys/kernel/scst_tgt/devices"); code != 0 || out != "" {
				t.Errorf("SCST devices after deleting the extent: %d %q", code, out)
			}
		})
	}
}

// Row 13: the coreutils an admin or a driver's diagnostics use on the
// TrueNAS SSH endpoint.
func TestFidelitySSHCoreutils(t *testing.T) {
	s := startServer(t, "25.10")
	run := sshRun(t, s)
	run("zfs create tank/data")
	for _, c := range []struct{ cmd, want string }{
		{"printf 'a\\nb\\nc\\n' > /tmp/f; head -n 2 /tmp/f", "a\nb\n"},
		{"tail -1 /tmp/f", "c\n"},
		{"wc -l /tmp/f", "3 /tmp/f\n"},
		{"cat /tmp/f | wc -l", "3\n"},
		{"ls /mnt/tank", "data\n"},
		{"ls -d /mnt/tank/data", "/mnt/tank/data\n"},
		{"basename /mnt/tank/data", "data\n"},
		{"dirname /mnt/tank/data", "/mnt/tank\n"},
		{"readlink -f /mnt/tank/../tank/data", "/mnt/tank/data\n"},
		{"grep -c b /tmp/f", "1\n"},
		{"sort -r /tmp/f | head -1", "c\n"},
		{"zfs list -H -o name | grep -q tank/data && echo found", "found\n"},
		{"date +%Y | wc -c", "5\n"},
	} {
		if out, code := run(c.cmd); code != 0 || out != c.want {
			t.Errorf("%s: %d %q, want %q", c.cmd, code, out, c.want)
		}
	}
	if out, code := run("ls /nope"); code != 2 || !strings.Contains(out, "ls: cannot access '/nope': No such file or directory") {
		t.Errorf("ls of a missing path: %d %q", code, out)
	}
	if out, code := run("head --bogus /tmp/f"); code == 0 || !strings.Contains(out, "invalid option") {
		t.Errorf("head with an unknown option: %d %q", code, out)
	}
}
