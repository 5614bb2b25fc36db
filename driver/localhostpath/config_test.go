package localhostpath

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/switchyard-csi/switchyard/driver/backend"
	"github.com/switchyard-csi/switchyard/driver/config"
	"github.com/switchyard-csi/switchyard/driver/dirvol"
)

// exampleConfig is democratic-csi's examples/local-hostpath.yaml (restic and
// kopia settings included: they are ignored while filecopy is the driver).
const exampleConfig = `
driver: local-hostpath
instance_id:
local-hostpath:
  shareBasePath: "/var/lib/csi-local-hostpath"
  controllerBasePath: "/var/lib/csi-local-hostpath"
  dirPermissionsMode: "0777"
  dirPermissionsUser: 0
  dirPermissionsGroup: 0
  snapshots:
    default_driver: filecopy
    restic:
      global_flags: []
      tags: []
      prune: true
      env: {}
    kopia:
      config_token:
      global_flags: []
      tags: []
      env: {}
`

// The keys local-hostpath reads, as democratic-csi spells them.
const (
	keyShareBase      = sectionKey + ".shareBasePath"
	keyControllerBase = sectionKey + ".controllerBasePath"
	keyDirMode        = sectionKey + ".dirPermissionsMode"
	keyDirUser        = sectionKey + ".dirPermissionsUser"
	keyDirGroup       = sectionKey + ".dirPermissionsGroup"
	keySnapDriver     = sectionKey + ".snapshots.default_driver"
	keyIDHash         = "_private.csi.volume.idHash.strategy"
	keyIDTemplate     = "_private.csi.volume.idTemplate"
	keyInstanceID     = "instance_id"
)

func parse(t *testing.T, doc string) config.Tree {
	t.Helper()
	cfg, err := config.Parse([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func TestValidate(t *testing.T) {
	base := func() config.Tree { return parse(t, exampleConfig) }
	set := func(key string, v any) func(config.Tree) {
		return func(cfg config.Tree) {
			parts := strings.Split(key, ".")
			m := map[string]any(cfg)
			for _, p := range parts[:len(parts)-1] {
				next, ok := m[p].(map[string]any)
				if !ok {
					next = map[string]any{}
					m[p] = next
				}
				m = next
			}
			if v == nil {
				delete(m, parts[len(parts)-1])
			} else {
				m[parts[len(parts)-1]] = v
			}
		}
	}
	tests := []struct {
		name string
		edit func(config.Tree)
		want []string // keys with a problem, sorted
		msg  string   // a fragment of the first problem's message
	}{
		{name: "democratic-csi example", edit: func(config.Tree) {}},
		{name: "numeric mode and string ids", edit: func(cfg config.Tree) {
			set(keyDirMode, json.Number("511"))(cfg)
			set(keyDirUser, "1000")(cfg)
			set(keyDirGroup, json.Number("1000"))(cfg)
			set(keyIDHash, "MD5")(cfg)
			set(keyInstanceID, "abc")(cfg)
		}},
		{name: "empty optional values", edit: func(cfg config.Tree) {
			set(keyDirMode, "")(cfg)
			set(keyDirUser, "")(cfg)
			set(keySnapDriver, "")(cfg)
			set(keyIDHash, "")(cfg)
		}},
		{name: "missing section", edit: set(sectionKey, nil), want: []string{sectionKey}, msg: "required"},
		{name: "section is a list", edit: set(sectionKey, []any{"x"}), want: []string{sectionKey}, msg: "must be a map"},
		{name: "section is a string", edit: func(cfg config.Tree) { cfg[sectionKey] = "/var/lib" }, want: []string{sectionKey}, msg: "must be a map"},
		{name: "missing shareBasePath", edit: set(keyShareBase, nil), want: []string{keyShareBase}, msg: "required"},
		{name: "empty controllerBasePath", edit: set(keyControllerBase, ""), want: []string{keyControllerBase}, msg: "required"},
		{name: "relative shareBasePath", edit: set(keyShareBase, "var/lib/x"), want: []string{keyShareBase}, msg: "absolute"},
		{name: "relative controllerBasePath", edit: set(keyControllerBase, "./x"), want: []string{keyControllerBase}, msg: "absolute"},
		{name: "root base path", edit: set(keyControllerBase, "//"), want: []string{keyControllerBase}, msg: "must not be /"},
		{name: "numeric base path", edit: set(keyShareBase, json.Number("12")), want: []string{keyShareBase}, msg: "absolute"},
		{name: "map base path", edit: set(keyControllerBase, map[string]any{"a": 1}), want: []string{keyControllerBase}, msg: "a map"},
		{name: "both base paths missing", edit: func(cfg config.Tree) { cfg[sectionKey] = map[string]any{} }, want: []string{keyControllerBase, keyShareBase}},
		{name: "mode not octal", edit: set(keyDirMode, "0789"), want: []string{keyDirMode}, msg: "octal"},
		{name: "mode symbolic", edit: set(keyDirMode, "u+rwx"), want: []string{keyDirMode}, msg: "octal"},
		{name: "mode too large", edit: set(keyDirMode, "17777"), want: []string{keyDirMode}, msg: "octal"},
		{name: "mode number too large", edit: set(keyDirMode, json.Number("70000")), want: []string{keyDirMode}},
		{name: "mode fraction", edit: set(keyDirMode, json.Number("1.5")), want: []string{keyDirMode}},
		{name: "mode boolean", edit: set(keyDirMode, true), want: []string{keyDirMode}, msg: "boolean"},
		{name: "uid name", edit: set(keyDirUser, "root"), want: []string{keyDirUser}, msg: "numeric uid"},
		{name: "uid negative", edit: set(keyDirUser, json.Number("-1")), want: []string{keyDirUser}},
		{name: "uid fraction", edit: set(keyDirUser, 1.5), want: []string{keyDirUser}},
		{name: "gid list", edit: set(keyDirGroup, []any{1}), want: []string{keyDirGroup}, msg: "numeric gid"},
		{name: "gid too large", edit: set(keyDirGroup, json.Number("4294967295")), want: []string{keyDirGroup}},
		{name: "restic snapshots", edit: set(keySnapDriver, "restic"), want: []string{keySnapDriver}, msg: "not supported"},
		{name: "kopia snapshots", edit: set(keySnapDriver, "kopia"), want: []string{keySnapDriver}, msg: "only filecopy"},
		{name: "unknown snapshot driver", edit: set(keySnapDriver, "zfs"), want: []string{keySnapDriver}, msg: "unknown snapshot driver"},
		{name: "snapshot driver map", edit: set(keySnapDriver, map[string]any{}), want: []string{keySnapDriver}},
		{name: "unknown id hash", edit: set(keyIDHash, "sha1"), want: []string{keyIDHash}, msg: "md5, crc8, crc16 or crc32"},
		{name: "id hash list", edit: set(keyIDHash, []any{"md5"}), want: []string{keyIDHash}},
		{name: "id template", edit: set(keyIDTemplate, "{{ name }}"), want: []string{keyIDTemplate}, msg: "not supported"},
		{name: "instance_id map", edit: set(keyInstanceID, map[string]any{"a": "b"}), want: []string{keyInstanceID}},
		{name: "every problem at once", edit: func(cfg config.Tree) {
			cfg[sectionKey] = map[string]any{
				"shareBasePath": "rel", "controllerBasePath": 5, "dirPermissionsMode": "9",
				"dirPermissionsUser": "x", "dirPermissionsGroup": "y",
				"snapshots": map[string]any{"default_driver": "restic"},
			}
			set(keyIDHash, "sha256")(cfg)
		}, want: []string{keyIDHash, keyControllerBase, keyDirGroup, keyDirMode, keyDirUser, keyShareBase, keySnapDriver}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := base()
			tc.edit(cfg)
			problems := Validate(cfg)
			var keys []string
			for _, p := range problems {
				keys = append(keys, p.Key)
				if p.Msg == "" {
					t.Errorf("problem for %s has no message", p.Key)
				}
			}
			slices.Sort(keys)
			want := slices.Clone(tc.want)
			slices.Sort(want)
			if !slices.Equal(keys, want) {
				t.Fatalf("problem keys = %q, want %q (%v)", keys, want, config.Problems(problems))
			}
			if tc.msg != "" && !strings.Contains(problems[0].Msg, tc.msg) {
				t.Errorf("message %q does not mention %q", problems[0].Msg, tc.msg)
			}
		})
	}
}

func TestValidateOddTrees(t *testing.T) {
	// none of these may panic; each is missing the section
	for _, cfg := range []config.Tree{nil, {}, {"local-hostpath": nil}, {"_private": "x", "local-hostpath": nil}} {
		problems := Validate(cfg)
		if len(problems) != 1 || problems[0].Key != sectionKey {
			t.Errorf("Validate(%v) = %v, want one problem for %s", cfg, problems, sectionKey)
		}
	}
}

func TestParseSettingsValues(t *testing.T) {
	tests := []struct {
		name     string
		values   map[string]any
		mode     uint32
		hasMode  bool
		uid, gid int
	}{
		{name: "example", values: map[string]any{"dirPermissionsMode": "0777", "dirPermissionsUser": 0, "dirPermissionsGroup": 0}, mode: 0o777, hasMode: true, uid: -1, gid: -1},
		{name: "setgid string", values: map[string]any{"dirPermissionsMode": "2775"}, mode: 0o2775, hasMode: true, uid: -1, gid: -1},
		{name: "0o prefix", values: map[string]any{"dirPermissionsMode": "0o750"}, mode: 0o750, hasMode: true, uid: -1, gid: -1},
		{name: "unquoted 0777 (YAML reads 511)", values: map[string]any{"dirPermissionsMode": json.Number("511")}, mode: 0o777, hasMode: true, uid: -1, gid: -1},
		{name: "ids", values: map[string]any{"dirPermissionsUser": "1000", "dirPermissionsGroup": json.Number("2000")}, uid: 1000, gid: 2000},
		{name: "group only", values: map[string]any{"dirPermissionsGroup": 33}, uid: -1, gid: 33},
		{name: "nothing", values: map[string]any{}, uid: -1, gid: -1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sec := map[string]any{"shareBasePath": "/a/", "controllerBasePath": "/b//c/"}
			for k, v := range tc.values {
				sec[k] = v
			}
			s, problems := parseSettings(config.Tree{sectionKey: sec})
			if len(problems) > 0 {
				t.Fatal(problems)
			}
			if s.HasMode != tc.hasMode || s.Mode != tc.mode || s.UID != tc.uid || s.GID != tc.gid {
				t.Errorf("mode %v/%o uid %d gid %d, want %v/%o %d %d", s.HasMode, s.Mode, s.UID, s.GID, tc.hasMode, tc.mode, tc.uid, tc.gid)
			}
			if s.ShareBase != "/a" || s.ControllerBase != "/b/c" {
				t.Errorf("bases %q %q, want /a and /b/c", s.ShareBase, s.ControllerBase)
			}
			if s.SnapshotDriver != dirvol.SnapshotDriverFilecopy {
				t.Errorf("snapshot driver %q", s.SnapshotDriver)
			}
		})
	}
}

func TestNew(t *testing.T) {
	base := t.TempDir()
	if _, err := New(backend.Options{Config: testConfig(base), NodeName: ""}); err == nil || !strings.Contains(err.Error(), "CSI_NODE_ID") {
		t.Errorf("New without node name: err = %v, want one naming CSI_NODE_ID", err)
	}
	bad := testConfig(base)
	section(bad)["shareBasePath"] = "relative"
	_, err := New(backend.Options{Config: bad, NodeName: testNode, File: "/etc/conn/x.yaml"})
	if err == nil || !strings.Contains(err.Error(), "/etc/conn/x.yaml: local-hostpath.shareBasePath") {
		t.Errorf("New with a bad config: err = %v, want the file and key", err)
	}
	d, err := New(backend.Options{Config: testConfig(base), NodeName: testNode})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if got := d.NodeTopology("n1"); len(got) != 1 || got[TopologyKey] != "n1" {
		t.Errorf("NodeTopology = %v", got)
	}
}

func TestRegistered(t *testing.T) {
	typ, ok := backend.Lookup("local-hostpath")
	if !ok {
		t.Fatal("local-hostpath is not registered")
	}
	if !typ.NodeLocal || typ.ConfigKey != "local-hostpath" || typ.MaxVolumeIDLen != 64 || typ.MaxSnapshotIDLen != 64 {
		t.Errorf("registered type = %+v", typ)
	}
	if problems := typ.Validate(config.Tree{}); len(problems) == 0 {
		t.Error("registered Validate accepts an empty config")
	}
	if !typ.NodeLocal {
		t.Error("local-hostpath is not registered as node-local")
	}
	if _, err := typ.New(backend.Options{Config: testConfig(t.TempDir()), NodeName: testNode}); err != nil {
		t.Fatal(err)
	}
}
