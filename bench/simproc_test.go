package bench

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-csi/switchyard/lab/simproc"
)

// The simulated hosts of the process benchmarks run in a process of their
// own (lab/simproc): this benchmark binary, started again with simproc.Env
// set. So the three sides of a batch (the driver, the simulator, the
// benchmark's gRPC client) each have their own CPU figure. The child is
// the same binary, so bench/compare-sim.sh's two benchmark binaries
// (simulators built at two refs) each run their own simulator.

type (
	simSpec   = simproc.Spec
	simCounts = simproc.Counts
)

func TestMain(m *testing.M) {
	if v := os.Getenv(simproc.Env); v != "" {
		os.Exit(simproc.Serve(v, os.Stdin, os.Stdout))
	}
	if v := os.Getenv(floorChildEnv); v != "" {
		os.Exit(floorChild(v))
	}
	os.Exit(m.Run())
}

// simProc is a simulated host running in a child process.
type simProc struct {
	*simproc.Proc
	pid int
}

// startSim starts the host of s in a child process; it stops with b.
// SWITCHYARD_BENCH_SIM_PPROF=<dir> profiles the child into
// <dir>/<benchmark name>.sim.pprof.
func startSim(b *testing.B, s simSpec) *simProc {
	b.Helper()
	// SWITCHYARD_BENCH_SIM_DIR=/dev/shm puts the host's state on tmpfs:
	// the simulator's files must survive its process, not the machine, and
	// on this machine's ext4 one mkdir costs ~300 µs of CPU (kernel), more
	// than all the rest of a simulated zfs create.
	if base := os.Getenv("SWITCHYARD_BENCH_SIM_DIR"); base != "" {
		d, err := os.MkdirTemp(base, "switchyard-bench-sim-")
		if err != nil {
			b.Fatalf("SWITCHYARD_BENCH_SIM_DIR: %v", err)
		}
		b.Cleanup(func() { os.RemoveAll(d) })
		s.Dir = d
	}
	if dir := os.Getenv("SWITCHYARD_BENCH_SIM_PPROF"); dir != "" {
		s.Profile = filepath.Join(dir, strings.NewReplacer("/", "_", "=", "").Replace(b.Name())+".sim.pprof")
	}
	self, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	p, err := simproc.Start(self, s, os.Stderr)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(p.Close)
	return &simProc{Proc: p, pid: p.Pid}
}

func (p *simProc) reset(b *testing.B) {
	b.Helper()
	if err := p.Reset(); err != nil {
		b.Fatal(err)
	}
}

func (p *simProc) counts(b *testing.B) simCounts {
	b.Helper()
	c, err := p.Counts()
	if err != nil {
		b.Fatal(err)
	}
	return c
}

func (p *simProc) cpu(b *testing.B) time.Duration { return procCPU(b, p.pid) }

// report adds the machine's figures to b's metrics: machine-busy, the
// share of all cores' time spent busy during the batches (1.0: every core
// all the time), and other-cpu-ms/pair, the busy time that was none of the
// three sides' (other work on the machine), per pair.
func (m *cpuMeter) report(b *testing.B, pairs int) {
	if m.total > 0 {
		b.ReportMetric(float64(m.busy)/float64(m.total), "machine-busy")
	}
	other := m.busy - m.driver - m.sim - m.client
	b.ReportMetric(ms(max(other, 0))/float64(pairs), "other-cpu-ms/pair")
}

// cpuMeter sums the CPU of the three sides over the batches it measures
// (and not the bookkeeping between them).
type cpuMeter struct {
	driver, sim, client time.Duration
	// the whole machine over the same batches (procstat.Machine): busy
	// and total CPU time of all cores
	busy, total time.Duration
}

// measure runs f and adds each side's CPU during it; driverPid 0 means
// the driver runs in this process (counted as the client's).
func (m *cpuMeter) measure(b *testing.B, driverPid int, sim *simProc, f func()) {
	b.Helper()
	var d0 time.Duration
	if driverPid != 0 {
		d0 = procCPU(b, driverPid)
	}
	s0, c0 := sim.cpu(b), selfCPU(b)
	b0, t0 := machineCPU(b)
	f()
	b1, t1 := machineCPU(b)
	m.busy += b1 - b0
	m.total += t1 - t0
	if driverPid != 0 {
		m.driver += procCPU(b, driverPid) - d0
	}
	m.sim += sim.cpu(b) - s0
	m.client += selfCPU(b) - c0
}
