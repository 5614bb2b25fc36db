package zfsmodel

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestBackgroundScan(t *testing.T) {
	m, err := Open(Options{StateDir: t.TempDir(), Pools: []PoolSpec{{"tank", 1 << 30}}, RescanInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	must(t, m, "zfs create tank/a")
	before := getNum(t, m, "used", "tank")
	writeFile(t, m, "/tank/a/f", strings.Repeat("x", 1<<20))
	deadline := time.Now().Add(10 * time.Second)
	for getNum(t, m, "used", "tank") < before+1<<20 { // only the pool root is named: tank/a comes from the scan
		if time.Now().After(deadline) {
			t.Fatal("the background scan never picked up the write")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil { // idempotent
		t.Fatal(err)
	}
}

func TestMiscCommands(t *testing.T) {
	m, _ := newModel(t, 1<<30)
	must(t, m, "zfs create -o casesensitivity=insensitive -o normalization=formD tank/ci")
	cases := []struct {
		cmd    string
		code   int
		stdout string
	}{
		{"zfs create -p tank/ci", 0, ""},
		{"zfs get -H -o value,source casesensitivity,utf8only tank/ci", 0, "insensitive\t-\non\t-\n"},
		{"zfs version", 0, "zfs-2.2.7-1\nzfs-kmod-2.2.7-1\n"},
		{"zpool version", 0, "zfs-2.2.7-1\nzfs-kmod-2.2.7-1\n"},
		{"zfs mount", 0, "tank                            /tank\ntank/ci                         /tank/ci\n"},
		{"zfs unmount tank/ci", 0, ""},
		{"zfs share tank/ci", 0, ""},
		{"zfs upgrade", 0, "This system is currently running ZFS filesystem version 5.\n\nAll filesystems are formatted with the current version.\n"},
		{"zfs list -H -o name -t volume", 0, ""},
		{"zfs get -H -o name -r -t snapshot name tank", 0, ""},
		{"zfs compression=lz4 tank/ci", 0, ""},
		{"zfs get -H -o value compression tank/ci", 0, "lz4\n"},
	}
	for _, c := range cases {
		r := sh(m, c.cmd)
		if r.code != c.code || r.stdout != c.stdout {
			t.Errorf("%s: %d %q %q", c.cmd, r.code, r.stdout, r.stderr)
		}
	}
	for _, cmd := range []string{"zfs --help", "zfs help", "zfs -?", "zpool --help", "zfs help create"} {
		r := sh(m, cmd)
		if r.code != 0 || !strings.HasPrefix(r.stdout, "usage:") || r.stderr != "" {
			t.Errorf("%s: %d %q", cmd, r.code, r.stdout[:min(len(r.stdout), 40)])
		}
	}
	if r := sh(m, "zfs get -H -o property all tank/ci"); !strings.HasPrefix(r.stdout, "type\ncreation\nused\n") {
		t.Errorf("get all order: %q", r.stdout[:40])
	}
	if r := sh(m, "zfs list -o all tank"); r.code != 0 || !strings.HasPrefix(r.stdout, "NAME  TYPE        CREATION") {
		t.Errorf("list -o all: %q", r.stdout[:min(60, len(r.stdout))])
	}
	r := sh(m, "zfs get -Hp -o value guid,createtxg,objsetid tank/ci")
	for _, f := range strings.Fields(r.stdout) {
		if _, err := strconv.ParseUint(f, 10, 64); err != nil {
			t.Errorf("non-numeric identifier %q", f)
		}
	}
}
