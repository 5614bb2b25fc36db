package mounts

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestUnescape(t *testing.T) {
	for in, want := range map[string]string{`/a\040b`: "/a b", `/plain`: "/plain", `/x\134y`: `/x\y`, `/bad\09`: `/bad\09`, `/end\04`: `/end\04`, `/tail\040`: "/tail "} {
		if got := Unescape(in); got != want {
			t.Errorf("Unescape(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestUnderAndAt(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "mountinfo")
	lines := "" +
		"22 1 0:21 / /proc rw,nosuid - proc proc rw\n" +
		"30 22 0:30 / /srv/demo rw shared:1 - tmpfs tmpfs rw\n" +
		"31 30 0:31 / /srv/demo/a\\040b rw - ext4 /dev/loop0 rw\n" +
		"32 22 0:32 / /srv/demox rw - tmpfs tmpfs rw\n" +
		"33 30 0:33 / /srv/demo/a\\040b rw - nfs server:/export\\040x rw\n"
	if err := os.WriteFile(file, []byte(lines), 0o600); err != nil {
		t.Fatal(err)
	}
	old := table
	table = file
	t.Cleanup(func() { table = old })

	got, err := Under("/srv/demo")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"/srv/demo", "/srv/demo/a b", "/srv/demo/a b"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Under = %q, want %q", got, want)
	}
	m, ok, err := At("/srv/demo/a b")
	if err != nil || !ok || m.Source != "server:/export x" || m.FsType != "nfs" {
		t.Errorf("At = %+v %v %v, want the nfs mount on top", m, ok, err)
	}
	if _, ok, err := At("/nowhere"); ok || err != nil {
		t.Errorf("At(/nowhere) = %v %v, want nothing", ok, err)
	}

	table = filepath.Join(dir, "missing")
	if got, err := Under("/srv/demo"); err != nil || len(got) != 0 {
		t.Errorf("without a mount table: %q %v, want none", got, err)
	}
}
