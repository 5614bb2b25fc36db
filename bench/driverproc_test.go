package bench

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"

	"github.com/switchyard-csi/switchyard/lab/csiclient"
	"github.com/switchyard-csi/switchyard/lab/loadgen"
	"github.com/switchyard-csi/switchyard/lab/procstat"
)

// The benchmarks in this file run the real switchyard binary as its own
// process and read its CPU time from /proc/<pid>/stat around each batch, as
// the measurements of issue 16 did: the driver's cost per operation, apart
// from the client's and the simulator's, on a machine whose other load only
// stretches wall times. SWITCHYARD_BIN names the binary; by default
// bin/switchyard (make build), else one is built into a temporary directory.

// driverBinary returns the switchyard binary to run.
func driverBinary(b *testing.B) string {
	b.Helper()
	if p := os.Getenv("SWITCHYARD_BIN"); p != "" {
		return p
	}
	if p, err := filepath.Abs("../bin/switchyard"); err == nil {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	out := filepath.Join(b.TempDir(), "switchyard")
	cmd := exec.Command("go", "build", "-o", out, "../cmd/switchyard")
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		b.Fatalf("building switchyard (or set SWITCHYARD_BIN): %v", err)
	}
	return out
}

// driverProc is a running switchyard controller.
type driverProc struct {
	c   *csiclient.Client
	pid int
}

// startDriver runs the binary with a main config in dir as a controller.
func startDriver(b *testing.B, dir, main string) driverProc {
	b.Helper()
	mainFile := filepath.Join(dir, "main.yaml")
	if err := os.WriteFile(mainFile, []byte(main), 0o600); err != nil {
		b.Fatal(err)
	}
	sock := filepath.Join(dir, "csi.sock")
	cmd := exec.Command(driverBinary(b), "--driver-config-file="+mainFile, "--csi-name=org.switchyard.bench",
		"--csi-mode=controller", "--server-socket="+sock, "--node-state-dir="+filepath.Join(dir, "state"))
	// The default log level (info), as deployed; the lines go nowhere.
	cmd.Env = append(os.Environ(), "CSI_NODE_ID=bench-node")
	// The driver's own runtime settings, apart from this process's
	// (SWITCHYARD_GOMAXPROCS=1 measures the driver on one P): startServing.
	return startServing(b, cmd, sock)
}

// startServing starts cmd, a CSI server on the unix socket sock, and
// connects to it once it answers Probe as ready. SWITCHYARD_GOMAXPROCS
// sets the server's GOMAXPROCS alone; the server is stopped at cleanup.
func startServing(b *testing.B, cmd *exec.Cmd, sock string) driverProc {
	b.Helper()
	if v := os.Getenv("SWITCHYARD_GOMAXPROCS"); v != "" {
		cmd.Env = append(cmd.Env, "GOMAXPROCS="+v)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	})
	c, err := csiclient.Dial("unix://" + sock)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := c.WaitReady(ctx); err != nil {
		b.Fatal(err)
	}
	return driverProc{c: c, pid: cmd.Process.Pid}
}

// cpu is the process's user+system CPU time so far.
func (d driverProc) cpu(b *testing.B) time.Duration { return procCPU(b, d.pid) }

// procCPU is process pid's user+system CPU time so far (/proc/<pid>/stat).
func procCPU(b *testing.B, pid int) time.Duration {
	b.Helper()
	d, err := procstat.CPU(pid)
	if err != nil {
		b.Fatal(err)
	}
	return d
}

// batch runs op(i) for i in [0,n) from callers goroutines; it returns each
// op's latency and the wall time, and fails b on the first error.
func batch(b *testing.B, n, callers int, op func(i int) error) ([]time.Duration, time.Duration) {
	b.Helper()
	lat, wall, err := loadgen.Timed(n, callers, op)
	if err != nil {
		b.Fatal(err)
	}
	return lat, wall
}

func pct(lat []time.Duration, p float64) time.Duration {
	s := slices.Clone(lat)
	slices.Sort(s)
	return s[min(len(s)-1, int(float64(len(s))*p))]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

// skipUnlessLinux: /proc/<pid>/stat is Linux's.
func skipUnlessLinux(b *testing.B) {
	if runtime.GOOS != "linux" {
		b.Skip("reads the driver's CPU time from /proc (Linux)")
	}
}

var _ = csipb.ControllerServiceCapability_RPC_UNKNOWN

// selfCPU is this process's user+system CPU time so far (getrusage): the
// in-process simulators' and the gRPC client's.
func selfCPU(b *testing.B) time.Duration {
	b.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// perfRecord profiles the driver process with Linux perf while a batch
// runs, when SWITCHYARD_PERF_DIR names a directory: the real binary's CPU,
// kernel included (fsyncs, socket writes), which an in-process pprof
// profile mixes with the client's and the simulator's. The returned stop
// ends the recording into <dir>/<name>.data; read it with
//
//	perf report -i <dir>/<name>.data --no-children --sort symbol --stdio
//
// With SWITCHYARD_PERF_STAT=<events> it counts them instead (perf stat)
// into <dir>/<name>.stat.
func (d driverProc) perfRecord(b *testing.B, name string) (stop func()) {
	b.Helper()
	dir := os.Getenv("SWITCHYARD_PERF_DIR")
	if dir == "" {
		return func() {}
	}
	out := filepath.Join(dir, strings.NewReplacer("/", "_", "=", "").Replace(name)+".data")
	cmd := exec.Command("perf", "record", "-q", "-F", "2000", "-g", "-p", strconv.Itoa(d.pid), "-o", out)
	if ev := os.Getenv("SWITCHYARD_PERF_STAT"); ev != "" {
		// counts instead of samples, e.g. SWITCHYARD_PERF_STAT=task-clock,
		// context-switches,cpu-migrations,syscalls:sys_enter_fsync
		cmd = exec.Command("perf", "stat", "-e", ev, "-p", strconv.Itoa(d.pid), "-o", strings.TrimSuffix(out, ".data")+".stat")
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatalf("perf record (unset SWITCHYARD_PERF_DIR to run without): %v", err)
	}
	time.Sleep(200 * time.Millisecond) // perf attaches
	return func() {
		_ = cmd.Process.Signal(syscall.SIGINT)
		_ = cmd.Wait()
	}
}

// benchScale multiplies the operations of a process benchmark's batch
// (SWITCHYARD_BENCH_SCALE, default 1): a profile under perfRecord wants
// more samples than the table's short runs.
// benchCallers is SWITCHYARD_BENCH_CALLERS, or def: how many concurrent
// callers a benchmark that takes the knob runs (to see one call's latency
// alone, say).
func benchCallers(b *testing.B, def int) int {
	b.Helper()
	v := os.Getenv("SWITCHYARD_BENCH_CALLERS")
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		b.Fatalf("SWITCHYARD_BENCH_CALLERS=%q: want a positive integer", v)
	}
	return n
}

func benchScale(b *testing.B) int {
	b.Helper()
	v := os.Getenv("SWITCHYARD_BENCH_SCALE")
	if v == "" {
		return 1
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		b.Fatalf("SWITCHYARD_BENCH_SCALE=%q: want a positive integer", v)
	}
	return n
}
