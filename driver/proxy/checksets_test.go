package proxy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchyard-csi/switchyard/driver/config"
)

// config check refuses a label that would gather connections of different
// families into one set, and bad label syntax; same-family sets pass.
func TestCheckFolderLabelSets(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("nas-a.yaml", "driver: fake-test\nfake:\n  label: a\nproxy:\n  labels:\n    tier: fast\n    site: x\n")
	write("nas-b.yaml", "driver: fake-test\nfake:\n  label: b\nproxy:\n  labels:\n    tier: fast\n")
	s := &Settings{ConfigFolder: dir, Topology: TopologySettings{Type: TopologyCluster}}
	if ps := CheckFolder(s, config.Tree{}); len(ps) != 0 {
		t.Fatalf("same-family set: %v", ps)
	}
	write("san.yaml", "driver: fake-iscsi-test\nfake:\n  label: s\nproxy:\n  labels:\n    tier: fast\n")
	write("odd.yaml", "driver: fake-test\nfake:\n  label: o\nproxy:\n  labels:\n    'bad key!': v\n    list: [1]\n")
	ps := CheckFolder(s, config.Tree{})
	got := ps.Error()
	for _, want := range []string{
		"san.yaml: proxy.labels: label tier=fast puts connection san (fake-iscsi-test: iscsi, block) in one set with nas-a (fake-test: fake-test, file)",
		"odd.yaml: proxy.labels.bad key!: is not a label key",
		"odd.yaml: proxy.labels.list: must be a string",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("problems %q lack %q", got, want)
		}
	}
	if len(ps) != 3 {
		t.Errorf("%d problems; want 3:\n%s", len(ps), got)
	}
}

func TestFamilyOf(t *testing.T) {
	for typ, want := range map[string]string{
		"zfs-generic-nfs": "nfs, file", "freenas-api-smb": "smb, file", "zfs-generic-iscsi": "iscsi, block",
		"truenas-nvmeof": "nvmeof, block", "infinia-nvmeof": "nvmeof, block", "local-hostpath": "local, file",
		"zfs-local-zvol": "local, block", "zfs-local-dataset": "local, file", "nfs-client": "nfs, file",
	} {
		if got := familyOf(typ).String(); got != want {
			t.Errorf("%s: %s; want %s", typ, got, want)
		}
	}
}
