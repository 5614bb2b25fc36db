package dirvol

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCloneOrCopyFallsBack: on a file system without reflinks (tmpfs, ext4)
// the bytes are copied.
func TestCloneOrCopyFallsBack(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "a")
	if err := os.WriteFile(src, []byte(strings.Repeat("x", 70000)), 0o600); err != nil {
		t.Fatal(err)
	}
	in, _ := os.Open(src)
	defer in.Close()
	out, err := os.Create(filepath.Join(dir, "b"))
	if err != nil {
		t.Fatal(err)
	}
	if err := cloneOrCopy(out, in); err != nil {
		t.Fatal(err)
	}
	out.Close()
	got, _ := os.ReadFile(filepath.Join(dir, "b"))
	if len(got) != 70000 {
		t.Errorf("copied %d bytes", len(got))
	}
}
