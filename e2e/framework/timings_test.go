package framework

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestTimingsTable(t *testing.T) {
	tm := NewTimings()
	tm.Record("zfs-generic-nfs", "Filesystem", PVCToBound, 3*time.Second)
	tm.Record("zfs-generic-nfs", "Filesystem", PVCToBound, 1*time.Second)
	tm.Record("zfs-generic-nfs", "Filesystem", PVCToBound, 2*time.Second)
	tm.Record("local-hostpath", "Filesystem", PVCToPodRunning, 5*time.Second)
	tab := tm.Table()
	lines := strings.Split(strings.TrimSpace(tab), "\n")
	if len(lines) != 3 {
		t.Fatalf("want a header and 2 rows, got:\n%s", tab)
	}
	if !strings.HasPrefix(lines[1], "local-hostpath") {
		t.Errorf("rows are not sorted by backend:\n%s", tab)
	}
	f := strings.Fields(lines[2])
	// backend mode metric(2 words) n min median max
	if got := strings.Join(f[len(f)-4:], " "); got != "3 1.0s 2.0s 3.0s" {
		t.Errorf("zfs row ends %q, want n=3 min 1.0s median 2.0s max 3.0s", got)
	}
	dir := t.TempDir()
	if err := tm.Write(dir); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"timings.txt", "timings.json"} {
		if _, err := os.Stat(filepath.Join(dir, n)); err != nil {
			t.Error(err)
		}
	}
}
