package zfsmodel

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

func writeFile(t *testing.T, m *Model, path, content string) {
	t.Helper()
	host, ok := m.HostPath(path)
	if !ok {
		t.Fatalf("HostPath(%s) not found", path)
	}
	if err := os.MkdirAll(filepath.Dir(host), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(host, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// files lists the regular files below a mountpoint as "rel=content".
func files(t *testing.T, m *Model, mountpoint string) string {
	t.Helper()
	host, ok := m.HostPath(mountpoint)
	if !ok {
		t.Fatalf("HostPath(%s) not found", mountpoint)
	}
	var out []string
	filepath.WalkDir(host, func(p string, e os.DirEntry, err error) error {
		if err == nil && e.Type().IsRegular() {
			b, _ := os.ReadFile(p)
			rel, _ := filepath.Rel(host, p)
			out = append(out, rel+"="+string(b))
		}
		return nil
	})
	sort.Strings(out)
	return strings.Join(out, ",")
}

func TestClonePromote(t *testing.T) {
	m, _ := newModel(t, 1<<30)
	must(t, m, "zfs create tank/a")
	writeFile(t, m, "/tank/a/f1", "one")
	must(t, m, "zfs snapshot tank/a@s1")
	writeFile(t, m, "/tank/a/f2", "two")
	must(t, m, "zfs snapshot tank/a@s2")
	writeFile(t, m, "/tank/a/f3", "three")
	must(t, m, "zfs snapshot tank/a@s3")
	must(t, m, "zfs clone -o org:k=v tank/a@s2 tank/c")

	if got := files(t, m, "/tank/c"); got != "f1=one,f2=two" {
		t.Fatalf("clone data: %q", got)
	}
	if got := getOne(t, m, "origin", "tank/c"); got != "tank/a@s2\t-" {
		t.Errorf("clone origin: %q", got)
	}
	if got := getOne(t, m, "clones", "tank/a@s2"); got != "tank/c\t-" {
		t.Errorf("snapshot clones: %q", got)
	}
	if got := getOne(t, m, "org:k", "tank/c"); got != "v\tlocal" {
		t.Errorf("clone -o: %q", got)
	}

	must(t, m, "zfs promote tank/c")
	want := "tank\t-\ntank/a\ttank/c@s2\ntank/a@s3\t-\ntank/c\t-\ntank/c@s1\t-\ntank/c@s2\t-\n"
	if got := must(t, m, "zfs list -H -t all -o name,origin"); got != want {
		t.Errorf("after promote:\n%s\nwant:\n%s", got, want)
	}
	if got := getOne(t, m, "clones", "tank/c@s2"); got != "tank/a\t-" {
		t.Errorf("clones after promote: %q", got)
	}
	if a, c := files(t, m, "/tank/a"), files(t, m, "/tank/c"); a != "f1=one,f2=two,f3=three" || c != "f1=one,f2=two" {
		t.Errorf("data moved by promote: a=%q c=%q", a, c)
	}
	r := sh(m, "zfs destroy -r tank/c")
	if r.code != 1 || r.stderr != "cannot destroy 'tank/c': filesystem has dependent clones\nuse '-R' to destroy the following datasets:\ntank/a@s3\ntank/a\n" {
		t.Errorf("destroy promoted origin: %d %q", r.code, r.stderr)
	}

	// Promote back restores the original shape.
	must(t, m, "zfs promote tank/a")
	want = "tank\t-\ntank/a\t-\ntank/a@s1\t-\ntank/a@s2\t-\ntank/a@s3\t-\ntank/c\ttank/a@s2\n"
	if got := must(t, m, "zfs list -H -t all -o name,origin"); got != want {
		t.Errorf("after promote back:\n%s", got)
	}

	// A conflicting snapshot name blocks the promote.
	must(t, m, "zfs snapshot tank/c@s1")
	r = sh(m, "zfs promote tank/c")
	if r.code != 1 || r.stderr != "cannot promote 'tank/c': conflicting snapshot 's1' from parent 'tank/a@s2'\n" {
		t.Errorf("conflicting promote: %d %q", r.code, r.stderr)
	}

	// -R destroys the clone with the origin snapshot.
	must(t, m, "zfs destroy -R tank/a@s2")
	if got := must(t, m, "zfs list -H -t all -o name"); got != "tank\ntank/a\ntank/a@s1\ntank/a@s3\n" {
		t.Errorf("after destroy -R: %q", got)
	}
}

func TestDeferredDestroy(t *testing.T) {
	m, _ := newModel(t, 1<<30)
	must(t, m, "zfs create tank/a")
	must(t, m, "zfs snapshot tank/a@s")
	must(t, m, "zfs clone tank/a@s tank/c")
	must(t, m, "zfs destroy -d tank/a@s")
	if got := getOne(t, m, "defer_destroy", "tank/a@s"); got != "on\t-" {
		t.Errorf("defer_destroy: %q", got)
	}
	must(t, m, "zfs destroy tank/c")
	if m.Exists("tank/a@s") {
		t.Error("deferred snapshot survived its last clone")
	}
}

func TestRollback(t *testing.T) {
	m, _ := newModel(t, 1<<30)
	must(t, m, "zfs create tank/a")
	must(t, m, "zfs create tank/a/child")
	writeFile(t, m, "/tank/a/f", "v1")
	writeFile(t, m, "/tank/a/child/keep", "child data")
	must(t, m, "zfs snapshot tank/a@s1")
	writeFile(t, m, "/tank/a/f", "v2")
	writeFile(t, m, "/tank/a/g", "new")
	must(t, m, "zfs snapshot tank/a@s2")
	must(t, m, "zfs clone tank/a@s2 tank/c")

	r := sh(m, "zfs rollback tank/a@s1")
	if r.code != 1 || r.stderr != "cannot rollback to 'tank/a@s1': more recent snapshots or bookmarks exist\nuse '-r' to force deletion of the following snapshots and bookmarks:\ntank/a@s2\n" {
		t.Errorf("rollback without -r: %d %q", r.code, r.stderr)
	}
	r = sh(m, "zfs rollback -r tank/a@s1")
	if r.code != 1 || r.stderr != "cannot rollback to 'tank/a@s1': clones of previous snapshots exist\nuse '-R' to force deletion of the following clones and dependents:\ntank/c\n" {
		t.Errorf("rollback -r with clones: %d %q", r.code, r.stderr)
	}
	must(t, m, "zfs rollback -R tank/a@s1")
	if got := files(t, m, "/tank/a"); got != "child/keep=child data,f=v1" {
		t.Errorf("after rollback: %q", got)
	}
	if m.Exists("tank/a@s2") || m.Exists("tank/c") {
		t.Error("rollback -R left the later snapshot or its clone")
	}

	// zvol rollback restores the blocks.
	must(t, m, "zfs create -V 1M tank/v")
	zv, _ := m.ZvolPath("tank/v")
	os.WriteFile(zv, append([]byte("first"), make([]byte, 1<<20-5)...), 0o600)
	must(t, m, "zfs snapshot tank/v@s")
	f, _ := os.OpenFile(zv, os.O_WRONLY, 0)
	f.WriteAt([]byte("SECOND"), 0)
	f.Close()
	must(t, m, "zfs rollback tank/v@s")
	b, _ := os.ReadFile(zv)
	if string(b[:5]) != "first" || len(b) != 1<<20 {
		t.Errorf("zvol after rollback: %q, %d bytes", b[:6], len(b))
	}
}

func TestRename(t *testing.T) {
	m, _ := newModel(t, 1<<30)
	must(t, m, "zfs create -p tank/a/b")
	writeFile(t, m, "/tank/a/b/f", "data")
	must(t, m, "zfs snapshot -r tank/a@s")
	must(t, m, "zfs create tank/dst")
	must(t, m, "zfs rename tank/a tank/dst/a2")
	if got := must(t, m, "zfs list -H -r -t all -o name tank/dst"); got != "tank/dst\ntank/dst/a2\ntank/dst/a2@s\ntank/dst/a2/b\ntank/dst/a2/b@s\n" {
		t.Errorf("after rename: %q", got)
	}
	if got := files(t, m, "/tank/dst/a2/b"); got != "f=data" {
		t.Errorf("data after rename: %q", got)
	}
	if old, ok := m.HostPath("/tank/a/b/f"); !ok {
		t.Error("a path below the pool's mountpoint does not resolve")
	} else if _, err := os.Stat(old); err == nil {
		t.Error("the data is still at the old mountpoint")
	}
	must(t, m, "zfs rename -r tank/dst/a2@s @t")
	if !m.Exists("tank/dst/a2@t") || !m.Exists("tank/dst/a2/b@t") || m.Exists("tank/dst/a2@s") {
		t.Error("recursive snapshot rename")
	}
	must(t, m, "zfs rename -p tank/dst/a2/b tank/x/y/z")
	if got := files(t, m, "/tank/x/y/z"); got != "f=data" {
		t.Errorf("rename -p: %q", got)
	}
}
