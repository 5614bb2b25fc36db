package zfsmodel

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// spareCheck with plain system calls tells the same things os.Lstat,
// Listxattr and Readdirnames told: only an empty directory with a fresh
// mkdir's mode and no extended attributes is a spare; an empty directory
// that differs is only empty (removed with one rmdir); anything with an
// entry, however far into the listing, or not a directory, is neither.
func TestSpareCheck(t *testing.T) {
	sparesAnywhere(t)
	m, dir := newModel(t, 1<<30)
	if !m.sp.known {
		t.Fatal("spares not probed")
	}
	base := filepath.Join(dir, "trash")
	mk := func(name string) string {
		p := filepath.Join(base, name)
		if err := os.Mkdir(p, 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	fresh := mk("fresh")
	withFile := mk("file")
	if err := os.WriteFile(filepath.Join(withFile, "f"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	withDir := mk("dir")
	if err := os.Mkdir(filepath.Join(withDir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	// More names than one getdents buffer holds.
	many := mk("many")
	for i := range 400 {
		name := fmt.Sprintf("%s-%03d", strings.Repeat("n", 40), i)
		if err := os.WriteFile(filepath.Join(many, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	chmodded := mk("chmodded")
	if err := os.Chmod(chmodded, 0o700); err != nil {
		t.Fatal(err)
	}
	setgid := mk("setgid")
	if err := os.Chmod(setgid, 0o755|os.ModeSetgid); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(base, "plain-file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(base, "link")
	if err := os.Symlink(fresh, link); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		path string
		want int
	}{
		{fresh, spareOK},
		{withFile, spareNo},
		{withDir, spareNo},
		{many, spareNo},
		{chmodded, spareEmptyDir},
		{setgid, spareEmptyDir},
		{file, spareNo},
		{link, spareNo}, // a link to a spare is not one
		{filepath.Join(base, "missing"), spareNo},
	}
	xattr := mk("xattr")
	if unix.Setxattr(xattr, "user.switchyard", []byte("x"), 0) == nil {
		cases = append(cases, struct {
			path string
			want int
		}{xattr, spareEmptyDir})
	} else {
		t.Log("no user extended attributes here: that case is skipped")
	}
	for _, c := range cases {
		if got := m.spareCheck(c.path); got != c.want {
			t.Errorf("%s: spareCheck %d, want %d", filepath.Base(c.path), got, c.want)
		}
	}
}

// A destroyed filesystem's directory that is not kept as a spare is gone
// at once, whatever the reason: the spares are full (an empty directory:
// one rmdir), it was changed (an empty one: rmdir; one with files: the
// whole tree). None stays in the trash, and the spares kept are unchanged.
func TestDiscardPastTheSpares(t *testing.T) {
	sparesAnywhere(t)
	m, dir := newModel(t, 1<<30)
	for i := range maxSpares {
		m.sp.dirs = append(m.sp.dirs, fmt.Sprintf("/nonexistent/%d", i))
	}
	must(t, m, "zfs create tank/empty")
	must(t, m, "zfs create tank/changed")
	must(t, m, "zfs create tank/full")
	if err := os.Chmod(m.dataPath(m.lookup("tank/changed")), 0o700); err != nil {
		t.Fatal(err)
	}
	full := m.dataPath(m.lookup("tank/full"))
	if err := os.MkdirAll(filepath.Join(full, "a", "b"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(full, "a", "b", "f"), []byte("data"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"tank/empty", "tank/changed", "tank/full"} {
		must(t, m, "zfs destroy "+name)
	}
	if ents, err := os.ReadDir(filepath.Join(dir, "trash")); err != nil || len(ents) != 0 {
		t.Errorf("trash: %v %v, want empty", ents, err)
	}
	if len(m.sp.dirs) != maxSpares || m.sp.dirs[maxSpares-1] != fmt.Sprintf("/nonexistent/%d", maxSpares-1) {
		t.Errorf("the spares changed: %d", len(m.sp.dirs))
	}
	for _, p := range []string{"empty", "changed", "full"} {
		if _, err := os.Lstat(filepath.Join(dir, "mnt", "tank", p)); !os.IsNotExist(err) {
			t.Errorf("tank/%s: its directory is still there (%v)", p, err)
		}
	}
}
