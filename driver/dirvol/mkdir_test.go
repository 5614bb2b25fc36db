package dirvol

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestMkdirAllDurableNamesWhatItMakes: the directories whose parents get
// synced are exactly those MkdirAll makes, deepest first, and none that
// existed before.
func TestMkdirAllDurableNamesWhatItMakes(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "a", "b", "c")
	want := []string{dir, filepath.Join(root, "a", "b"), filepath.Join(root, "a")}
	if got := missingDirs(dir); !slices.Equal(got, want) {
		t.Fatalf("missingDirs = %v, want %v", got, want)
	}
	if err := mkdirAllDurable(dir); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		t.Fatalf("%s not made: %v", dir, err)
	}
	if got := missingDirs(dir); len(got) != 0 {
		t.Errorf("missingDirs after the make = %v, want none", got)
	}
	if err := mkdirAllDurable(dir); err != nil {
		t.Errorf("again, when it exists: %v", err)
	}
}
