package driverbin

import (
	"net"
	"os/exec"
	"strconv"
	"testing"
	"time"
)

// FreeLoopback is a free 127.0.0.1 address with a port in [lo, lo+1000).
// Each test package takes its own range: packages' tests run at once.
func FreeLoopback(t testing.TB, lo int) string {
	t.Helper()
	for p := lo; p < lo+1000; p++ {
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		if err == nil {
			l.Close()
			return l.Addr().String()
		}
	}
	t.Fatalf("no free port in %d-%d", lo, lo+999)
	return ""
}

// ZFSSSH starts the ZFS-over-SSH simulator (switchyard-lab zfs-ssh, user
// root, password pw, state in a temporary directory) on a free port of
// [lo, lo+1000) and returns its address once it accepts connections; it is
// killed when the test ends.
func ZFSSSH(t testing.TB, lo int) string {
	t.Helper()
	addr := FreeLoopback(t, lo)
	sim := exec.Command(Lab(t), "zfs-ssh", "--listen", addr, "--state", t.TempDir(), "--password", "pw")
	if err := sim.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.Process.Kill(); _ = sim.Wait() })
	// The callers' first command would otherwise race the listener.
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return addr
		}
		if time.Now().After(deadline) {
			t.Fatalf("the ZFS-over-SSH simulator does not listen on %s: %v", addr, err)
		}
	}
}
