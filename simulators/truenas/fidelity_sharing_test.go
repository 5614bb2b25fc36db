package truenas

// Rows 3, 7, 11 and 12 of issue 15: shares, iSCSI set-up, snapshot tasks
// (see fidelity_test.go).

import (
	"net/http"
	"strings"
	"testing"
)

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
