package zfsmodel

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// walkDirBytes is dirBytes as it was (filepath.WalkDir): the reference the
// unsorted walk must agree with.
func walkDirBytes(dir string, skip map[string]bool) int64 {
	var total int64
	_ = filepath.WalkDir(dir, func(path string, e fs.DirEntry, err error) error {
		if err != nil || path == dir {
			return nil //nolint:nilerr // as dirBytes
		}
		if e.IsDir() {
			if filepath.Dir(path) == dir && skip[e.Name()] {
				return filepath.SkipDir
			}
			return nil
		}
		total += fileBytes(path)
		return nil
	})
	return total
}

func TestDirBytesIsWalkDir(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "ds")
	write := func(rel string, n int) {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, make([]byte, n), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a", 10000)
	write("sub/b", 70000)
	write("sub/deeper/c", 5000)
	write("child/d", 90000) // a child filesystem's directory: skipped at the top only
	write("sub/child/e", 30000)
	for i := 0; i < 700; i++ { // more entries than one getdents buffer holds
		write(fmt.Sprintf("many/file-with-a-longer-name-%04d", i), 1+i*7)
	}
	if err := os.Symlink(filepath.Join(dir, "sub"), filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(dir, filepath.Join(root, "dslink")); err != nil {
		t.Fatal(err)
	}
	skip := map[string]bool{"child": true}
	for _, tc := range []struct {
		dir  string
		skip map[string]bool
	}{{dir, skip}, {dir, nil}, {filepath.Join(root, "dslink"), nil}, {filepath.Join(root, "missing"), nil}, {filepath.Join(dir, "a"), nil}} {
		want := walkDirBytes(tc.dir, tc.skip)
		if got := dirBytes(tc.dir, tc.skip); got != want {
			t.Errorf("dirBytes(%s, %v) = %d; WalkDir's sum is %d", tc.dir, tc.skip, got, want)
		}
	}
	if dirBytes(dir, skip) >= dirBytes(dir, nil) || dirBytes(dir, skip) == 0 {
		t.Errorf("skip had no effect: %d with, %d without", dirBytes(dir, skip), dirBytes(dir, nil))
	}
}
