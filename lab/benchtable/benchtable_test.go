package benchtable

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-csi/switchyard/lab/simproc"
	"github.com/switchyard-csi/switchyard/lab/vm"
)

// This test binary is also the simulators' child process (lab/simproc).
func TestMain(m *testing.M) {
	if spec := os.Getenv(simproc.Env); spec != "" {
		os.Exit(simproc.Serve(spec, os.Stdin, os.Stdout))
	}
	os.Exit(m.Run())
}

// TestTables runs three backends' tables at a small scale and checks what
// each row must say: the simulator's round trips per call (one SSH program
// per zfs-generic-nfs create and delete, three TrueNAS calls per create),
// latencies no shorter than the latency the host charges, CPU and RSS read
// from the processes, and the printed table.
func TestTables(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc: Linux only")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	bin := filepath.Join(t.TempDir(), "switchyard")
	if err := vm.BuildBinary(ctx, "github.com/switchyard-csi/switchyard/cmd/switchyard", bin); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	const latency = 3 * time.Millisecond
	tables, err := Run(ctx, Options{Switchyard: bin, Self: self, Backends: []string{"local-hostpath", "zfs-generic-nfs", "freenas-api-nfs-rest"},
		Callers: []int{1, 4}, Ops: 8, Latency: latency, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if len(tables) != 3 {
		t.Fatalf("%d tables, want 3", len(tables))
	}
	wantTrips := map[string]map[string]float64{
		"local-hostpath":       {"create": 0, "delete": 0},
		"zfs-generic-nfs":      {"create": 1, "delete": 1},
		"freenas-api-nfs-rest": {"create": 3, "delete": 5},
	}
	var out bytes.Buffer
	for _, tb := range tables {
		tb.Write(&out)
		if len(tb.Rows) != 4 {
			t.Errorf("%s: %d rows, want 4 (2 caller counts × create, delete)", tb.Backend, len(tb.Rows))
		}
		for _, r := range tb.Rows {
			name := tb.Backend + " " + r.Op
			if want := wantTrips[tb.Backend][r.Op]; r.RoundTrips != want {
				t.Errorf("%s at %d callers: %.2f round trips per op, want %.0f", name, r.Callers, r.RoundTrips, want)
			}
			if r.Ops != 8 || r.PerSecond <= 0 || r.P50 <= 0 || r.P99 < r.P50 {
				t.Errorf("%s: ops %d, %.1f/s, p50 %v, p99 %v", name, r.Ops, r.PerSecond, r.P50, r.P99)
			}
			if r.DriverRSS < 4<<20 {
				t.Errorf("%s: driver RSS %d bytes; a Go gRPC server is more than 4 MiB", name, r.DriverRSS)
			}
			if tb.Latency == 0 {
				if r.Bound != 0 || r.SimCPU != 0 {
					t.Errorf("%s: a bound (%v) or simulator CPU (%v) without a simulator", name, r.Bound, r.SimCPU)
				}
				continue
			}
			if r.Bound != time.Duration(r.RoundTrips*float64(latency)) {
				t.Errorf("%s: bound %v, want round trips × %v", name, r.Bound, latency)
			}
			// One program per zfs call: the host's latency cannot be beaten.
			if tb.Backend == "zfs-generic-nfs" && r.P50 < latency {
				t.Errorf("%s: p50 %v below the %v each round trip is charged", name, r.P50, latency)
			}
		}
	}
	for _, want := range []string{"### local-hostpath", "### zfs-generic-nfs", "### freenas-api-nfs-rest", "| callers | op | ops/s (bound) |", "| 4 | delete |"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the printed tables lack %q:\n%s", want, out.String())
		}
	}
}

// TestUnknownBackend names the backend and the ones it knows.
func TestUnknownBackend(t *testing.T) {
	_, err := Run(context.Background(), Options{Switchyard: "/nonexistent", Backends: []string{"nfs-magic"}})
	if err == nil || !strings.Contains(err.Error(), `"nfs-magic"`) || !strings.Contains(err.Error(), "zfs-generic-nfs") {
		t.Errorf("err = %v; want the unknown name and the known backends", err)
	}
}

// TestDriverThatExits: a binary that exits at once is reported as such,
// at once, not after the 30 s readiness wait.
func TestDriverThatExits(t *testing.T) {
	start := time.Now()
	_, err := Run(context.Background(), Options{Switchyard: "/bin/false", Backends: []string{"local-hostpath"}, Dir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "exited before it was ready") {
		t.Errorf("err = %v; want the driver's early exit", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("took %v; want the exit noticed at once", d)
	}
}
