package truenas

import (
	"encoding/json"
	"sort"
	"strings"
	"testing"

	"github.com/switchyard-csi/switchyard/simulators/truenas/census"
)

// populate makes one object of every kind a query can list: a dataset, a
// zvol, a snapshot, shares, the iSCSI chain, NVMe-oF objects and a
// periodic snapshot task.
func populate(t *testing.T, s *Server) {
	t.Helper()
	snapNS := "zfs.snapshot"
	if s.Version().AtLeast(25, 10, 0) {
		snapNS = "pool.snapshot"
	}
	steps := []struct {
		method string
		params []any
	}{
		{"pool.dataset.create", []any{map[string]any{"name": "tank/fs", "type": "FILESYSTEM"}}},
		{"pool.dataset.create", []any{map[string]any{"name": "tank/vol", "type": "VOLUME", "volsize": 1 << 20, "sparse": true}}},
		{"pool.dataset.create", []any{map[string]any{"name": "tank/vol2", "type": "VOLUME", "volsize": 1 << 20, "sparse": true}}},
		{snapNS + ".create", []any{map[string]any{"dataset": "tank/fs", "name": "s1"}}},
		{"sharing.nfs.create", []any{map[string]any{"path": "/mnt/tank/fs"}}},
		{"sharing.smb.create", []any{map[string]any{"name": "fs", "path": "/mnt/tank/fs"}}},
		{"iscsi.portal.create", []any{map[string]any{"listen": []any{map[string]any{"ip": "0.0.0.0"}}}}},
		{"iscsi.initiator.create", []any{map[string]any{}}},
		{"iscsi.auth.create", []any{map[string]any{"tag": 1, "user": "u", "secret": "0123456789ab"}}},
		{"iscsi.target.create", []any{map[string]any{"name": "t1", "groups": []any{map[string]any{"portal": 1, "initiator": 1}}}}},
		{"iscsi.extent.create", []any{map[string]any{"name": "e1", "disk": "zvol/tank/vol"}}},
		{"iscsi.targetextent.create", []any{map[string]any{"target": 1, "extent": 1}}},
		{"pool.snapshottask.create", []any{map[string]any{"dataset": "tank/fs", "recursive": false, "lifetime_value": 2, "lifetime_unit": "WEEK",
			"naming_schema": "auto-%Y-%m-%d_%H-%M", "schedule": map[string]any{}}}},
	}
	if s.Version().AtLeast(25, 10, 0) {
		steps = append(steps, []struct {
			method string
			params []any
		}{
			{"nvmet.subsys.create", []any{map[string]any{"name": "sub1"}}},
			{"nvmet.namespace.create", []any{map[string]any{"subsys_id": 1, "device_type": "ZVOL", "device_path": "zvol/tank/vol2"}}},
			{"nvmet.port.create", []any{map[string]any{"addr_trtype": "TCP", "addr_traddr": "127.0.0.1", "addr_trsvcid": 4420}}},
			{"nvmet.host.create", []any{map[string]any{"hostnqn": "nqn.2014-08.org.example:h1"}}},
			{"nvmet.port_subsys.create", []any{map[string]any{"port_id": 1, "subsys_id": 1}}},
			{"nvmet.host_subsys.create", []any{map[string]any{"host_id": 1, "subsys_id": 1}}},
		}...)
	}
	for _, st := range steps {
		if _, err := callInProcess(s, st.method, st.params...); err != nil {
			t.Fatalf("set-up %s: %v", st.method, err)
		}
	}
}

// TestCensusReturnedFields: every served query and config method of a release whose model
// describes its entries returns exactly the entry's fields (extra
// options aside), so that a field the real system returns cannot be
// silently missing, nor one it does not return be invented.
func TestCensusReturnedFields(t *testing.T) {
	checked, fields := 0, 0
	for _, v := range []string{"25.04", "25.10", "26.04"} {
		t.Run(v, func(t *testing.T) {
			c, err := census.Load(v)
			if err != nil {
				t.Fatal(err)
			}
			s := startServer(t, v)
			populate(t, s)
			var diffs []string
			for _, name := range s.Registry().Names() {
				want, ok := c.Methods[name]
				if !ok || len(want.Returns) == 0 || !strings.HasSuffix(name, ".query") && !strings.HasSuffix(name, ".config") {
					continue
				}
				res, err := callInProcess(s, name)
				if err != nil {
					t.Errorf("%s: %v", name, err)
					continue
				}
				raw, _ := json.Marshal(res)
				var rows []map[string]any
				if strings.HasSuffix(name, ".config") {
					var one map[string]any
					if json.Unmarshal(raw, &one) == nil {
						rows = append(rows, one)
					}
				} else if json.Unmarshal(raw, &rows) != nil {
					rows = nil
				}
				if len(rows) == 0 {
					continue // nothing to compare (no object of that kind)
				}
				checked++
				fields += len(want.Returns)
				model := want.Returns
				for f, always := range model {
					if _, has := rows[0][f]; always && !has && knownReturnGaps[name+"."+f] == "" {
						diffs = append(diffs, name+": missing "+f)
					}
				}
				for f := range rows[0] {
					if _, known := model[f]; !known && knownReturnGaps[name+"."+f] == "" {
						diffs = append(diffs, name+": extra "+f)
					}
				}
			}
			sort.Strings(diffs)
			for _, d := range diffs {
				t.Errorf("%s (entry model of %s %s)", d, c.Source.Tag, c.Source.API)
			}
		})
	}
	t.Logf("%d query×release entries checked against %d model fields", checked, fields)
}

// knownReturnGaps are entry fields where the simulator and the model
// knowingly differ, each with the reason.
var knownReturnGaps = map[string]string{}
