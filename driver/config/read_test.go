package config

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Connection files come from a folder others can write to. None of these
// may hang the reader or make it read without bound.
func TestLoadFileRefusesWhatIsNotAConfigFile(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	if err := os.WriteFile(good, []byte("driver: local-hostpath\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo.yaml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	zero := filepath.Join(dir, "zero.yaml")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.yaml")
	if err := os.WriteFile(big, []byte("a: "+strings.Repeat("x", MaxFileSize)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "dir.yaml")
	if err := os.Mkdir(sub, 0o700); err != nil {
		t.Fatal(err)
	}
	// A Kubernetes Secret volume: name -> ..data/name -> ..<timestamp>/name.
	secret := filepath.Join(dir, "secret")
	if err := os.MkdirAll(filepath.Join(secret, "..2026_11_25"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(secret, "..2026_11_25", "conn.yaml"), []byte("driver: zfs-generic-nfs\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("..2026_11_25", filepath.Join(secret, "..data")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("..data/conn.yaml", filepath.Join(secret, "conn.yaml")); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		path, want, driver string
	}{
		{good, "", "local-hostpath"},
		{filepath.Join(secret, "conn.yaml"), "", "zfs-generic-nfs"},
		{fifo, "not a regular file (a named pipe)", ""},
		{zero, "not a regular file (a character device)", ""},
		{sub, "not a regular file (a directory)", ""},
		{big, "more than the 1048576-byte limit", ""},
		{filepath.Join(dir, "missing.yaml"), "no such file", ""},
	}
	for _, tc := range tests {
		for name, load := range map[string]func(string) (Tree, error){"LoadFile": LoadFile, "LoadMain": LoadMain} {
			t.Run(name+"/"+filepath.Base(tc.path), func(t *testing.T) {
				done := make(chan struct{})
				var tree Tree
				var err error
				go func() { tree, err = load(tc.path); close(done) }()
				select {
				case <-done:
				case <-time.After(5 * time.Second):
					t.Fatal("the read blocked")
				}
				if tc.want == "" {
					if err != nil || tree["driver"] != tc.driver {
						t.Fatalf("tree = %v, err = %v; want driver %s", tree, err, tc.driver)
					}
					return
				}
				if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.path) {
					t.Fatalf("err = %v; want it to name %s and say %q", err, tc.path, tc.want)
				}
			})
		}
	}
}
