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
