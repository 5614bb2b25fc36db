package zfsmodel

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A filesystem made from a spare directory looks like one made by mkdir:
// empty, the fresh mode, new times; a directory someone changed is not
// reused, and an existing directory at the path is still adopted as is.
func TestSpareDirectoriesLookFresh(t *testing.T) {
	sparesAnywhere(t)
	m, err := Open(Options{StateDir: t.TempDir(), Pools: []PoolSpec{{Name: "tank", Size: 1 << 30}}, RescanInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	dir := func(name string) string { return m.dataPath(m.lookup(name)) }
	must(t, m, "zfs create tank/a")
	must(t, m, "zfs create tank/b")
	old := time.Now().Add(-time.Hour)
	os.Chtimes(dir("tank/a"), old, old)
	os.Chmod(dir("tank/b"), 0o777)
	must(t, m, "zfs destroy tank/a")
	must(t, m, "zfs destroy tank/b")
	if n := len(m.sp.dirs); n != 1 {
		t.Fatalf("%d spares, want 1 (the chmodded directory is removed)", n)
	}
	must(t, m, "zfs create tank/c")
	fi, err := os.Stat(dir("tank/c"))
	if err != nil {
		t.Fatal(err)
	}
	if len(m.sp.dirs) != 0 {
		t.Errorf("the spare was not used")
	}
	if fi.Mode() != m.sp.mode || time.Since(fi.ModTime()) > time.Minute {
		t.Errorf("reused directory: mode %v (fresh %v), mtime %v", fi.Mode(), m.sp.mode, fi.ModTime())
	}
	if ents, _ := os.ReadDir(dir("tank/c")); len(ents) != 0 {
		t.Errorf("reused directory not empty: %v", ents)
	}
	// An existing directory at the new dataset's path is adopted, not replaced.
	must(t, m, "zfs destroy tank/c")
	left := filepath.Join(dir("tank"), "d")
	os.Mkdir(left, 0o700)
	must(t, m, "zfs create tank/d")
	if fi, err := os.Stat(dir("tank/d")); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("the directory left behind was not adopted: %v %v", fi, err)
	}
	if len(m.sp.dirs) != 1 {
		t.Errorf("the spare was spent on an existing directory")
	}
	// Below a set-group-ID directory a mkdir inherits the bit: no spare there.
	must(t, m, "zfs create tank/g")
	os.Chmod(dir("tank/g"), 0o755|os.ModeSetgid)
	must(t, m, "zfs create tank/x")
	must(t, m, "zfs destroy tank/x") // one spare again
	must(t, m, "zfs create tank/g/h")
	if fi, err := os.Stat(dir("tank/g/h")); err != nil || fi.Mode()&os.ModeSetgid == 0 || len(m.sp.dirs) != 1 {
		t.Errorf("below a setgid parent: %v %v, %d spares", fi, err, len(m.sp.dirs))
	}
}

// On tmpfs no spare is kept (a mkdir there is cheaper than a spare's
// checks): a destroyed filesystem's directory is removed, and the next
// create makes a fresh one, empty and with the mode a mkdir gives.
func TestNoSparesOnTmpfs(t *testing.T) {
	if !onTmpfs("/dev/shm") {
		t.Skip("/dev/shm is not tmpfs here")
	}
	state, err := os.MkdirTemp("/dev/shm", "zfsmodel-spares-")
	if err != nil {
		t.Skip(err)
	}
	defer os.RemoveAll(state)
	m, err := Open(Options{StateDir: state, Pools: []PoolSpec{{Name: "tank", Size: 1 << 30}}, RescanInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if m.sp.known {
		t.Fatal("spares probed on tmpfs")
	}
	must(t, m, "zfs create tank/a")
	a := m.dataPath(m.lookup("tank/a"))
	if err := os.WriteFile(filepath.Join(a, "f"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	must(t, m, "zfs destroy tank/a")
	must(t, m, "zfs create tank/b")
	must(t, m, "zfs destroy tank/b")
	if _, err := os.Stat(a); !os.IsNotExist(err) {
		t.Errorf("the destroyed filesystem's directory: %v", err)
	}
	if ents, _ := os.ReadDir(filepath.Join(state, "trash")); len(m.sp.dirs) != 0 || len(ents) != 0 {
		t.Errorf("%d spares, trash %v: want none", len(m.sp.dirs), ents)
	}
	must(t, m, "zfs create tank/c")
	fi, err := os.Stat(m.dataPath(m.lookup("tank/c")))
	if err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o755&^umask() {
		t.Fatalf("a new filesystem's directory: %v %v", fi, err)
	}
	if ents, _ := os.ReadDir(m.dataPath(m.lookup("tank/c"))); len(ents) != 0 {
		t.Errorf("a new filesystem's directory holds %v", ents)
	}
}

// sparesAnywhere keeps spares for the rest of the test wherever its
// directory is (tmpfs included), as on ext4.
func sparesAnywhere(t *testing.T) {
	sparesOnTmpfs = true
	t.Cleanup(func() { sparesOnTmpfs = false })
}

// umask is the process's file mode creation mask.
func umask() os.FileMode {
	probe, err := os.MkdirTemp("", "umask-")
	if err != nil {
		return 0o022
	}
	defer os.RemoveAll(probe)
	d := filepath.Join(probe, "d")
	if err := os.Mkdir(d, 0o777); err != nil {
		return 0o022
	}
	fi, err := os.Stat(d)
	if err != nil {
		return 0o022
	}
	return 0o777 &^ fi.Mode().Perm()
}
