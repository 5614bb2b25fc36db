package zfsmodel

import (
	"bytes"
	"strings"
	"testing"
)

// getOne returns "value<TAB>source" of one property via zfs get -H.
func getOne(t *testing.T, m *Model, prop, ds string) string {
	t.Helper()
	out := must(t, m, "zfs get -H -o value,source "+prop+" "+ds)
	return strings.TrimSuffix(out, "\n")
}

func TestInheritanceAndSources(t *testing.T) {
	m, _ := newModel(t, 1<<30)
	for _, l := range []string{
		"zfs create -p tank/a/b/c",
		"zfs create -V 16M tank/a/vol",
		"zfs set org:owner=alice tank/a",
		"zfs set org:owner=bob tank/a/b/c",
		"zfs set compression=lz4 tank/a",
		"zfs set compression=gzip-6 tank/a/b",
		"zfs set quota=1G tank/a",
		"zfs set mountpoint=/srv/data tank/a/b",
		"zfs set sharenfs=rw,no_root_squash tank/a",
		"zfs snapshot tank/a/b@s1",
	} {
		must(t, m, l)
	}
	cases := []struct{ prop, ds, want string }{
		{"org:owner", "tank/a", "alice\tlocal"},
		{"org:owner", "tank/a/b", "alice\tinherited from tank/a"},
		{"org:owner", "tank/a/b/c", "bob\tlocal"},
		{"org:owner", "tank/a/b@s1", "alice\tinherited from tank/a"},
		{"org:owner", "tank", "-\t-"},
		{"compression", "tank", "on\tdefault"},
		{"compression", "tank/a", "lz4\tlocal"},
		{"compression", "tank/a/b", "gzip\tlocal"},
		{"compression", "tank/a/b/c", "gzip\tinherited from tank/a/b"},
		{"compression", "tank/a/vol", "lz4\tinherited from tank/a"},
		{"quota", "tank/a", "1G\tlocal"},
		{"quota", "tank/a/b", "none\tdefault"},
		{"mountpoint", "tank", "/tank\tdefault"},
		{"mountpoint", "tank/a", "/tank/a\tdefault"},
		{"mountpoint", "tank/a/b", "/srv/data\tlocal"},
		{"mountpoint", "tank/a/b/c", "/srv/data/c\tinherited from tank/a/b"},
		{"mountpoint", "tank/a/vol", "-\t-"},
		{"sharenfs", "tank/a/b/c", "rw,no_root_squash\tinherited from tank/a"},
		{"sharesmb", "tank/a", "off\tdefault"},
		{"volsize", "tank/a/vol", "16M\tlocal"},
		{"volblocksize", "tank/a/vol", "16K\tdefault"},
		{"type", "tank/a/b@s1", "snapshot\t-"},
		{"exec", "tank/a/b@s1", "on\tdefault"},
		{"origin", "tank/a", "-\t-"},
		{"casesensitivity", "tank/a", "sensitive\t-"},
		{"mounted", "tank/a/b", "yes\t-"},
		{"canmount", "tank/a", "on\tdefault"},
		{"refreservation", "tank/a/vol", "18M\tlocal"}, // 16M of data plus 2M of worst-case indirect blocks
	}
	for _, c := range cases {
		if got := getOne(t, m, c.prop, c.ds); got != c.want {
			t.Errorf("%s of %s: %q, want %q", c.prop, c.ds, got, c.want)
		}
	}

	// inherit, inherit -r, and the Go API view.
	must(t, m, "zfs inherit compression tank/a/b")
	if got := getOne(t, m, "compression", "tank/a/b/c"); got != "lz4\tinherited from tank/a" {
		t.Errorf("after inherit: %q", got)
	}
	must(t, m, "zfs inherit -r org:owner tank/a")
	if got := getOne(t, m, "org:owner", "tank/a/b/c"); got != "-\t-" {
		t.Errorf("after inherit -r: %q", got)
	}
	must(t, m, "zfs inherit mountpoint tank/a/b")
	if got := getOne(t, m, "mountpoint", "tank/a/b/c"); got != "/tank/a/b/c\tdefault" {
		t.Errorf("mountpoint after inherit: %q", got)
	}
	pv, err := m.GetProperty("tank/a/b/c", "compression", false)
	if err != nil || pv.Value != "lz4" || pv.Source != SourceInherited || pv.From != "tank/a" {
		t.Errorf("GetProperty: %+v %v", pv, err)
	}
	info, err := m.Get("tank/a/vol")
	if err != nil || info.Volsize != 16<<20 || info.Volblocksize != 16384 || info.Props["volsize"].Value != "16777216" {
		t.Errorf("Get: %+v %v", info, err)
	}

	// -s filters by source; -o picks columns.
	out := must(t, m, "zfs get -H -s local -o property,value all tank/a")
	if out != "quota\t1G\nsharenfs\trw,no_root_squash\ncompression\tlz4\n" { // zfs_prop_t order
		t.Errorf("get -s local: %q", out)
	}
}

func TestReceivedProperties(t *testing.T) {
	m, _ := newModel(t, 1<<30)
	must(t, m, "zfs create tank/src")
	must(t, m, "zfs set org:tier=gold tank/src")
	must(t, m, "zfs set atime=off tank/src")
	must(t, m, "zfs snapshot tank/src@s")
	stream := run(m, nil, "zfs", "send", "-p", "tank/src@s")
	if stream.code != 0 {
		t.Fatalf("send: %s", stream.stderr)
	}
	r := run(m, bytes.NewBufferString(stream.stdout), "zfs", "receive", "-x", "atime", "-o", "org:note=x", "tank/dst")
	if r.code != 0 {
		t.Fatalf("receive: %s", r.stderr)
	}
	cases := []struct{ prop, want string }{
		{"org:tier", "tank/dst\torg:tier\tgold\tgold\treceived"},
		{"atime", "tank/dst\tatime\ton\t-\tdefault"},
		{"org:note", "tank/dst\torg:note\tx\t-\tlocal"},
	}
	for _, c := range cases {
		got := strings.TrimSuffix(must(t, m, "zfs get -H -o all "+c.prop+" tank/dst"), "\n")
		if got != c.want {
			t.Errorf("%s: %q, want %q", c.prop, got, c.want)
		}
	}
	must(t, m, "zfs set org:tier=silver tank/dst")
	if got := getOne(t, m, "org:tier", "tank/dst"); got != "silver\tlocal" {
		t.Errorf("local over received: %q", got)
	}
	must(t, m, "zfs inherit org:tier tank/dst")
	if got := getOne(t, m, "org:tier", "tank/dst"); got != "-\t-" {
		t.Errorf("inherit masks received: %q", got)
	}
	must(t, m, "zfs inherit -S org:tier tank/dst")
	if got := getOne(t, m, "org:tier", "tank/dst"); got != "gold\treceived" {
		t.Errorf("inherit -S: %q", got)
	}
}

func TestDefaultsOverride(t *testing.T) {
	m, err := Open(Options{StateDir: t.TempDir(), Pools: []PoolSpec{{"tank", 1 << 30}},
		Defaults: map[string]string{"compression": "off"}})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if got := getOne(t, m, "compression", "tank"); got != "off\tdefault" {
		t.Errorf("compression default: %q", got)
	}
	if _, err := Open(Options{StateDir: t.TempDir(), Defaults: map[string]string{"used": "1"}}); err == nil {
		t.Error("a read-only default was accepted")
	}
}

func TestSetValues(t *testing.T) {
	m, _ := newModel(t, 1<<30)
	must(t, m, "zfs create tank/a")
	cases := []struct{ set, prop, want string }{
		{"compression=gzip-6", "compression", "gzip"},
		{"acltype=posixacl", "acltype", "posix"},
		{"xattr=dir", "xattr", "on"},
		{"recordsize=1M", "recordsize", "1M"},
		{"quota=1.5G", "quota", "1.50G"},
		{"refquota=none", "refquota", "none"},
		{"org.example:k=v with spaces", "org.example:k", "v with spaces"},
		{"sharesmb=on", "sharesmb", "on"},
		{"canmount=noauto", "canmount", "noauto"},
		{"mountpoint=legacy", "mountpoint", "legacy"},
		{"recsize=64K", "recordsize", "64K"},
	}
	for _, c := range cases {
		r := run(m, nil, "zfs", "set", c.set, "tank/a")
		if r.code != 0 {
			t.Errorf("set %s: %s", c.set, r.stderr)
			continue
		}
		got := strings.TrimSuffix(must(t, m, "zfs get -H -o value "+c.prop+" tank/a"), "\n")
		if got != c.want {
			t.Errorf("after set %s: %s=%q, want %q", c.set, c.prop, got, c.want)
		}
	}
	if m.isMounted(m.lookup("tank/a")) {
		t.Error("canmount=noauto / mountpoint=legacy dataset is mounted")
	}
}
