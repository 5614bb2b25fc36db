package sharing

import (
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/switchyard-csi/switchyard/simulators/truenas/middleware"
	"github.com/switchyard-csi/switchyard/simulators/zfsmodel"
)

func TestVersionGating(t *testing.T) {
	for _, version := range allVersions {
		t.Run(version, func(t *testing.T) {
			e := newEnv(t, version)
			nvmet := e.v.AtLeast(25, 10, 0)
			for _, name := range []string{
				"sharing.nfs.create", "sharing.smb.query", "iscsi.global.config", "iscsi.portal.get_instance",
				"iscsi.initiator.create", "iscsi.auth.delete", "iscsi.target.delete", "iscsi.extent.update",
				"iscsi.targetextent.create",
			} {
				if _, ok := e.r.Lookup(name); !ok {
					t.Errorf("%s missing", name)
				}
			}
			for _, name := range []string{
				"nvmet.global.config", "nvmet.global.update", "nvmet.subsys.create", "nvmet.namespace.query",
				"nvmet.port.create", "nvmet.port_subsys.create", "nvmet.host.create", "nvmet.host_subsys.delete",
			} {
				if _, ok := e.r.Lookup(name); ok != nvmet {
					t.Errorf("%s registered=%v, want %v", name, ok, nvmet)
				}
			}
			if _, err := os.Stat(e.state + "/nvmet.global.json"); (err == nil) != nvmet {
				t.Errorf("nvmet state file present=%v in %s", err == nil, version)
			}
		})
	}
}

// The real middleware's sqlite hands out max(id)+1: the highest id comes
// back after its row is deleted, a lower one does not.
func TestIDReuse(t *testing.T) {
	cases := []struct {
		name   string
		create func(e *env, n int) map[string]any
		delete func(e *env, id int)
	}{
		{"sharing.nfs", func(e *env, n int) map[string]any {
			return e.must("sharing.nfs.create", map[string]any{"path": "/mnt/tank/a", "networks": []string{"10.0." + itoa(n) + ".0/24"}})
		}, func(e *env, id int) { e.must("sharing.nfs.delete", id) }},
		{"iscsi.target", func(e *env, n int) map[string]any {
			return e.must("iscsi.target.create", map[string]any{"name": "t" + itoa(n)})
		}, func(e *env, id int) { e.must("iscsi.target.delete", id) }},
		{"nvmet.subsys", func(e *env, n int) map[string]any {
			return e.must("nvmet.subsys.create", map[string]any{"name": "s" + itoa(n)})
		}, func(e *env, id int) { e.must("nvmet.subsys.delete", id) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, "25.10")
			for n := 1; n <= 3; n++ {
				if got := id(c.create(e, n)); got != n {
					t.Fatalf("object %d got id %d", n, got)
				}
			}
			c.delete(e, 3)
			if got := id(c.create(e, 4)); got != 3 {
				t.Errorf("after deleting the highest id 3 the next id is %d, want 3 again", got)
			}
			c.delete(e, 2)
			if got := id(c.create(e, 5)); got != 4 {
				t.Errorf("after deleting id 2 the next id is %d, want 4", got)
			}
			e.register() // ids come from the stored rows, not a counter in memory
			c.delete(e, 4)
			if got := id(c.create(e, 6)); got != 4 {
				t.Errorf("after a restart and deleting id 4 the next id is %d, want 4", got)
			}
		})
	}
}

func TestPersistence(t *testing.T) {
	e := newEnv(t, "25.10")
	e.configureISCSI()
	e.must("sharing.nfs.create", map[string]any{"path": "/mnt/tank/a"})
	e.must("sharing.smb.create", map[string]any{"name": "a", "path": "/mnt/tank/a"})
	e.must("iscsi.global.update", map[string]any{"basename": "iqn.2000-01.test.sim"})
	tgt := e.must("iscsi.target.create", map[string]any{"name": "vol", "groups": []any{map[string]any{"portal": 1, "initiator": 1}}})
	ext := e.must("iscsi.extent.create", map[string]any{"name": "vol", "disk": "zvol/tank/vol"})
	e.must("iscsi.targetextent.create", map[string]any{"target": id(tgt), "extent": id(ext)})
	sub := e.must("nvmet.subsys.create", map[string]any{"name": "vol", "allow_any_host": true})
	ns := e.must("nvmet.namespace.create", map[string]any{"subsys_id": id(sub), "device_type": "ZVOL", "device_path": "zvol/tank/vol2"})
	port := e.must("nvmet.port.create", map[string]any{"addr_trtype": "TCP", "addr_traddr": "0.0.0.0", "addr_trsvcid": 4420})
	e.must("nvmet.port_subsys.create", map[string]any{"port_id": id(port), "subsys_id": id(sub)})
	host := e.must("nvmet.host.create", map[string]any{"hostnqn": "nqn.2014-08.org.nvmexpress:uuid:48747223-7535-4f8e-a789-b8af8bfdea54"})
	e.must("nvmet.host_subsys.create", map[string]any{"host_id": id(host), "subsys_id": id(sub)})
	before := e.s.State()
	basenqn := e.must("nvmet.global.config")["basenqn"]

	e.register()
	after := e.s.State()
	if !reflect.DeepEqual(before, after) {
		t.Fatalf("state changed across Register:\nbefore %+v\nafter  %+v", before, after)
	}
	if after.ISCSITargets[0].IQN != "iqn.2000-01.test.sim:vol" || after.NVMetSubsystems[0].SubNQN != basenqn.(string)+":vol" {
		t.Errorf("names after reload: %+v %+v", after.ISCSITargets, after.NVMetSubsystems)
	}
	if len(after.ISCSIPortals) != 1 || len(after.ISCSIInitiators) != 1 {
		t.Errorf("defaults seeded again: %d portals, %d initiators", len(after.ISCSIPortals), len(after.ISCSIInitiators))
	}
	if got := e.must("nvmet.global.config")["basenqn"]; got != basenqn {
		t.Errorf("basenqn %v after reload, want %v", got, basenqn)
	}
	if got := e.must("nvmet.namespace.get_instance", id(ns)); got["device_uuid"] != ns["device_uuid"] || got["device_nguid"] != ns["device_nguid"] {
		t.Errorf("namespace ids changed across reload: %v vs %v", got, ns)
	}
	entries, _ := os.ReadDir(e.state)
	for _, f := range entries {
		if strings.HasPrefix(f.Name(), ".") {
			t.Errorf("temporary file %s left behind", f.Name())
		}
	}
	// deleting the seeded portal is remembered too: it is not seeded again
	e.must("iscsi.target.delete", id(tgt), true, true)
	e.must("iscsi.portal.delete", 1)
	e.register()
	if n := len(e.list("iscsi.portal.query")); n != 0 {
		t.Errorf("%d portals after deleting the only one and restarting", n)
	}
}

func TestRegisterErrors(t *testing.T) {
	e := newEnv(t, "25.04")
	if _, err := Register(middleware.NewRegistry(), e.m, e.v, Options{}); err == nil {
		t.Error("Register without a state directory succeeded")
	}
	if _, err := Register(nil, e.m, e.v, Options{StateDir: t.TempDir()}); err == nil {
		t.Error("Register without a registry succeeded")
	}
	dir := t.TempDir()
	if err := os.WriteFile(dir+"/sharing.nfs.json", []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Register(middleware.NewRegistry(), e.m, e.v, Options{StateDir: dir}); err == nil || !strings.Contains(err.Error(), "sharing.nfs.json") {
		t.Errorf("corrupt state file: %v", err)
	}
}

func TestQueryOptions(t *testing.T) {
	e := newEnv(t, "25.10")
	for _, p := range []string{"/mnt/tank/a", "/mnt/tank/b", "/mnt/tank/a/child"} {
		e.must("sharing.nfs.create", map[string]any{"path": p, "comment": strings.TrimPrefix(p, "/mnt/")})
	}
	cases := []struct {
		params []any
		want   string
	}{
		{[]any{`[["path","^","/mnt/tank/a"]]`, `{"select":["id"]}`}, `[{"id":1},{"id":3}]`},
		{[]any{`[]`, `{"count":true}`}, `3`},
		{[]any{`[["comment","=","tank/b"]]`, `{"get":true,"select":["path"]}`}, `{"path":"/mnt/tank/b"}`},
		{[]any{`[]`, `{"order_by":["-id"],"limit":1,"select":["id"]}`}, `[{"id":3}]`},
	}
	for _, c := range cases {
		res, err := e.call("sharing.nfs.query", c.params...)
		if err != nil {
			t.Fatalf("%v: %v", c.params, err)
		}
		got, _ := json.Marshal(res)
		if string(got) != c.want {
			t.Errorf("query %v = %s, want %s", c.params, got, c.want)
		}
	}
	_, err := e.call("sharing.nfs.query", `[["comment","=","nope"]]`, `{"get":true}`)
	wantCallError(t, err, middleware.ENOENT, "MatchNotFound")
	_, err = e.call("sharing.nfs.query", `[]`, `{}`, `{}`)
	wantInvalid(t, err, "", "Too many arguments (expected 2, found 3)")
}

func TestDatasetDeleteHook(t *testing.T) {
	e := newEnv(t, "25.10")
	e.must("sharing.nfs.create", map[string]any{"path": "/mnt/tank/a"})
	e.must("sharing.nfs.create", map[string]any{"path": "/mnt/tank/a/child"})
	keepNFS := e.must("sharing.nfs.create", map[string]any{"path": "/mnt/tank/b"})
	e.must("sharing.smb.create", map[string]any{"name": "a", "path": "/mnt/tank/a"})
	keepSMB := e.must("sharing.smb.create", map[string]any{"name": "b", "path": "/mnt/tank/b"})

	// target 1 has only the doomed zvol: it goes; target 2 keeps a LUN on vol2
	t1 := e.must("iscsi.target.create", map[string]any{"name": "t1"})
	t2 := e.must("iscsi.target.create", map[string]any{"name": "t2"})
	e1 := e.must("iscsi.extent.create", map[string]any{"name": "e1", "disk": "zvol/tank/vol"})
	e2 := e.must("iscsi.extent.create", map[string]any{"name": "e2", "disk": "zvol/tank/vol2"})
	e.must("iscsi.targetextent.create", map[string]any{"target": id(t1), "extent": id(e1)})
	keepTE := e.must("iscsi.targetextent.create", map[string]any{"target": id(t2), "extent": id(e2)})
	for _, vol := range []string{"tank/vol3", "tank/vol4"} {
		if err := e.m.Create(vol, zfsmodel.Volume, nil, zfsmodel.CreateOptions{Volsize: 1 << 20}); err != nil {
			t.Fatal(err)
		}
	}
	sub := e.must("nvmet.subsys.create", map[string]any{"name": "s"})
	keepNS := e.must("nvmet.namespace.create", map[string]any{"subsys_id": id(sub), "device_type": "ZVOL", "device_path": "zvol/tank/vol3"})
	e.must("nvmet.namespace.create", map[string]any{"subsys_id": id(sub), "device_type": "ZVOL", "device_path": "zvol/tank/vol4"})

	call := &middleware.Call{Version: e.v}
	for _, ds := range []string{"tank/a", "tank/a/child", "tank/vol", "tank/vol4"} {
		if err := e.r.DatasetDeleted(call, ds); err != nil {
			t.Fatalf("hook for %s: %v", ds, err)
		}
	}
	ids := func(method string) []int {
		var out []int
		for _, r := range e.list(method) {
			out = append(out, id(r))
		}
		return out
	}
	checks := []struct {
		method string
		want   []int
	}{
		{"sharing.nfs.query", []int{id(keepNFS)}},
		{"sharing.smb.query", []int{id(keepSMB)}},
		{"iscsi.target.query", []int{id(t2)}},
		{"iscsi.extent.query", []int{id(e2)}},
		{"iscsi.targetextent.query", []int{id(keepTE)}},
		{"nvmet.namespace.query", []int{id(keepNS)}},
		{"nvmet.subsys.query", []int{id(sub)}},
	}
	for _, c := range checks {
		if got := ids(c.method); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s after the dataset deletes: ids %v, want %v", c.method, got, c.want)
		}
	}
	e.register()
	if got := ids("iscsi.extent.query"); !reflect.DeepEqual(got, []int{id(e2)}) {
		t.Errorf("hook's removals not persisted: extents %v", got)
	}
}
