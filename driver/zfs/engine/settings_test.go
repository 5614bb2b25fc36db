package engine

import (
	"strings"
	"testing"

	"github.com/switchyard-csi/switchyard/driver/config"
)

const zfsSection = `zfs:
  datasetParentName: tank/k8s/vols/
  detachedSnapshotsDatasetParentName: tank/k8s/snaps
  datasetEnableQuotas: true
  datasetPermissionsMode: "0777"
  datasetPermissionsUser: 0
  datasetPermissionsGroup: 0
  zvolBlocksize: 64K
  datasetProperties:
    "org.freenas:description": "{{ parameters.[csi.storage.k8s.io/pvc/namespace] }}/{{ parameters.[csi.storage.k8s.io/pvc/name] }}"
`

func read(t *testing.T, yaml string) (settings, []config.Problem) {
	t.Helper()
	tree, err := config.Parse([]byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	r := config.NewReader(tree)
	s := readSettings(r)
	return s, r.Problems()
}

func TestReadSettings(t *testing.T) {
	s, ps := read(t, zfsSection)
	if len(ps) > 0 {
		t.Fatalf("problems: %v", ps)
	}
	if s.parent != "tank/k8s/vols" || s.snapshot != "tank/k8s/snaps" || !s.quotas || s.permMode != "0777" ||
		s.permUser != "0" || s.permGroup != "0" || s.aclBinary != "setfacl" || s.zvolBlocksize != 64<<10 || len(s.datasetProps) != 1 {
		t.Fatalf("settings: %+v", s)
	}
	got := s.datasetProps[0].tmpl.render("pvc-1", map[string]string{"csi.storage.k8s.io/pvc/namespace": "ns", "csi.storage.k8s.io/pvc/name": "data<&>"})
	if got != "ns/data&lt;&amp;&gt;" {
		t.Fatalf("template rendered %q", got)
	}
}

func TestSettingsProblemsNameTheKey(t *testing.T) {
	replace := func(from, to string) string { return strings.Replace(zfsSection, from, to, 1) }
	cases := []struct {
		name, yaml, key, msg string
	}{
		{"no parent", replace("  datasetParentName: tank/k8s/vols/\n", ""), "zfs.datasetParentName", "required"},
		{"overlap", replace("tank/k8s/snaps", "tank/k8s/vols/snaps"), "zfs.detachedSnapshotsDatasetParentName", "overlap"},
		{"bad name", replace("tank/k8s/vols/", "tank/k8s vols"), "zfs.datasetParentName", "characters"},
		{"bad template", replace("{{ parameters.[csi.storage.k8s.io/pvc/name] }}", "{{#if x}}"), "zfs.datasetProperties.org.freenas:description", "not supported"},
		{"bad mode", replace(`"0777"`, `"rwx"`), "zfs.datasetPermissionsMode", "octal"},
		{"bad blocksize", replace("64K", "3K"), "zfs.zvolBlocksize", "power of two"},
		{"id hash", zfsSection + "_private:\n  csi:\n    volume:\n      idHash:\n        strategy: sha1\n", "_private.csi.volume.idHash.strategy", "md5, crc8"},
		{"id template", zfsSection + "_private:\n  csi:\n    volume:\n      idTemplate: x\n", "_private.csi.volume.idTemplate", "not supported"},
		{"delete strategy", zfsSection + "_private:\n  csi:\n    volume:\n      deleteStrategy: keep\n", "_private.csi.volume.deleteStrategy", "delete or retain"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, ps := read(t, c.yaml)
			for _, p := range ps {
				if p.Key == c.key && strings.Contains(p.Msg, c.msg) {
					return
				}
			}
			t.Fatalf("want a problem at %s containing %q, got %v", c.key, c.msg, ps)
		})
	}
}

func TestReadCLI(t *testing.T) {
	cases := []struct {
		name    string
		yaml    string
		needSSH bool
		key     string // the expected problem's key; "" for none
		check   func(CLIConfig) bool
	}{
		{"local", "zfs:\n  cli:\n    sudoEnabled: true\n    paths:\n      zfs: /sbin/zfs\n", false, "",
			func(c CLIConfig) bool { return c.SSH == nil && c.Sudo && c.Paths.ZFS == "/sbin/zfs" }},
		{"ssh needed", "zfs: {}\n", true, "sshConnection", nil},
		{"ssh", "sshConnection:\n  host: h\n  port: 2222\n  username: u\n  privateKey: k\n  keepaliveInterval: 0\n", true, "",
			func(c CLIConfig) bool {
				return c.SSH != nil && c.SSH.Port == 2222 && c.SSH.KeepAlive < 0 && !c.Sudo && !c.SSH.NoShellSession
			}},
		{"ssh without the shell session", "sshConnection:\n  host: h\n  username: u\n  password: p\n  shellSession: false\n", true, "",
			func(c CLIConfig) bool { return c.SSH != nil && c.SSH.NoShellSession }},
		{"no credentials", "sshConnection:\n  host: h\n  username: u\n", false, "sshConnection", nil},
		{"bad port", "sshConnection:\n  host: h\n  port: 99999\n  username: u\n  password: p\n", false, "sshConnection.port", nil},
		{"bad sessions", "sshConnection:\n  host: h\n  username: u\n  password: p\n  maxSessions: 0\n", false, "sshConnection.maxSessions", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tree, err := config.Parse([]byte(c.yaml))
			if err != nil {
				t.Fatal(err)
			}
			r := config.NewReader(tree)
			got := ReadCLI(r, c.needSSH)
			ps := r.Problems()
			if c.key == "" {
				if len(ps) > 0 || !c.check(got) {
					t.Fatalf("ReadCLI = %+v, problems %v", got, ps)
				}
				return
			}
			if len(ps) == 0 || ps[0].Key != c.key {
				t.Fatalf("want a problem at %s, got %v", c.key, ps)
			}
		})
	}
}
