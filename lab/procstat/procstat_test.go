package procstat

import (
	"os"
	"runtime"
	"testing"
	"time"
)

// TestSelf: this process's CPU grows while it spins, and its RSS is
// within what the Go runtime has mapped.
func TestSelf(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc: Linux only")
	}
	before, err := CPU(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	for end := time.Now().Add(150 * time.Millisecond); time.Now().Before(end); {
	}
	after, err := CPU(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if d := after - before; d < 50*time.Millisecond {
		t.Errorf("CPU grew by %v over 150 ms of spinning; want ≥ 50 ms", d)
	}
	rss, err := RSS(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	if rss < 1<<20 || uint64(rss) > ms.Sys+64<<20 {
		t.Errorf("RSS %d bytes; want between 1 MiB and the runtime's %d bytes + 64 MiB", rss, ms.Sys)
	}
}

// TestGone: a process that does not exist is an error, not zero.
func TestGone(t *testing.T) {
	if _, err := CPU(1 << 30); err == nil {
		t.Error("CPU of pid 2^30: no error")
	}
	if _, err := RSS(1 << 30); err == nil {
		t.Error("RSS of pid 2^30: no error")
	}
}
