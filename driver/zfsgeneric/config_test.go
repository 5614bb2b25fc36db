package zfsgeneric

import (
	"strings"
	"testing"

	"github.com/switchyard-csi/switchyard/driver/config"
)

const nfsConfig = `driver: zfs-generic-nfs
sshConnection:
  host: 127.0.0.1
  port: 2222
  username: root
  password: secret
zfs:
  datasetParentName: tank/k8s/vols/
  detachedSnapshotsDatasetParentName: tank/k8s/snaps
  datasetEnableQuotas: true
  datasetPermissionsMode: "0777"
  datasetPermissionsUser: 0
  datasetPermissionsGroup: 0
  datasetProperties:
    "org.freenas:description": "{{ parameters.[csi.storage.k8s.io/pvc/namespace] }}/{{ parameters.[csi.storage.k8s.io/pvc/name] }}"
nfs:
  shareStrategy: setDatasetProperties
  shareStrategySetDatasetProperties:
    properties:
      sharenfs: "rw,no_root_squash"
  shareHost: 192.0.2.10
`

func parse(t *testing.T, yaml string) (settings, []config.Problem) {
	t.Helper()
	tree, err := config.Parse([]byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	return parseSettings(tree)
}

func TestParseNFSConfig(t *testing.T) {
	s, ps := parse(t, nfsConfig)
	if len(ps) > 0 {
		t.Fatalf("problems: %v", ps)
	}
	if s.driver != DriverNFS || s.block() || s.cli.SSH == nil || s.cli.SSH.Port != 2222 || s.share.host != "192.0.2.10" ||
		len(s.share.props) != 1 || s.share.props[0].Value != "rw,no_root_squash" {
		t.Fatalf("settings: %+v", s)
	}
}

func TestConfigProblemsNameTheKey(t *testing.T) {
	replace := func(from, to string) string { return strings.Replace(nfsConfig, from, to, 1) }
	cases := []struct {
		name, yaml, key, msg string
	}{
		{"no parent", replace("  datasetParentName: tank/k8s/vols/\n", ""), "zfs.datasetParentName", "required"},
		{"overlap", replace("tank/k8s/snaps", "tank/k8s/vols/snaps"), "zfs.detachedSnapshotsDatasetParentName", "overlap"},
		{"bad name", replace("tank/k8s/vols/", "tank/k8s vols"), "zfs.datasetParentName", "characters"},
		{"no share host", replace("  shareHost: 192.0.2.10\n", ""), "nfs.shareHost", "required"},
		{"no credentials", replace("  password: secret\n", ""), "sshConnection", "password or privateKey"},
		{"bad port", replace("port: 2222", "port: 99999"), "sshConnection.port", "TCP port"},
		{"bad template", replace("{{ parameters.[csi.storage.k8s.io/pvc/name] }}", "{{#if x}}"), "zfs.datasetProperties.org.freenas:description", "not supported"},
		{"bad mode", replace(`"0777"`, `"rwx"`), "zfs.datasetPermissionsMode", "octal"},
		{"strategy", replace("setDatasetProperties\n", "exports\n"), "nfs.shareStrategy", "unknown share strategy"},
		{"id hash", nfsConfig + "_private:\n  csi:\n    volume:\n      idHash:\n        strategy: sha1\n", "_private.csi.volume.idHash.strategy", "md5, crc8"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, ps := parse(t, c.yaml)
			for _, p := range ps {
				if p.Key == c.key && strings.Contains(p.Msg, c.msg) {
					return
				}
			}
			t.Fatalf("want a problem at %s containing %q, got %v", c.key, c.msg, ps)
		})
	}
}

func TestBlockConfigs(t *testing.T) {
	iscsi := `driver: zfs-generic-iscsi
zfs:
  datasetParentName: tank/k8s/v
  zvolBlocksize: 64K
iscsi:
  shareStrategy: targetCli
  shareStrategyTargetCli:
    basename: iqn.2003-01.org.linux-iscsi.host:sn
    tpg:
      attributes:
        authentication: 0
      auth:
        password: "bad value"
  targetPortal: 127.0.0.1:3260
`
	s, ps := parse(t, iscsi)
	if !s.block() || s.cli.SSH != nil {
		t.Fatalf("settings %+v", s)
	}
	if len(ps) != 1 || !strings.Contains(ps[0].Msg, "password") {
		t.Fatalf("want one problem about the quoted password, got %v", ps)
	}
	nvme := `driver: zfs-generic-nvmeof
zfs:
  datasetParentName: tank/k8s/v
nvmeof:
  shareStrategy: spdkCli
  shareStrategyNvmetCli:
    basename: nqn.2003-01.org.linux-nvme
`
	_, ps = parse(t, nvme)
	var keys []string
	for _, p := range ps {
		keys = append(keys, p.Key)
	}
	want := []string{"nvmeof.shareStrategy", "nvmeof.transports", "nvmeof.shareStrategyNvmetCli.ports"}
	if strings.Join(keys, ",") != strings.Join(want, ",") {
		t.Fatalf("problems at %v, want %v (%v)", keys, want, ps)
	}
}
