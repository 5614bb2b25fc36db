package bench

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-csi/switchyard/lab/truenashost"
	"github.com/switchyard-csi/switchyard/lab/zfshost"
)

// The simulated hosts of the process benchmarks run in a process of their
// own: this benchmark binary, started again with simChildEnv set. So the
// three sides of a batch (the driver, the simulator, the benchmark's gRPC
// client) each have their own CPU figure from their own process's
// /proc/<pid>/stat or rusage, instead of the simulator sharing one with the
// client. The child is the same binary, so bench/compare-sim.sh's two
// benchmark binaries (simulators built at two refs) each run their own
// simulator.
//
// The child speaks a line protocol on stdin/stdout: its first line is a
// simHello; then each request line ("reset", "counts") gets one JSON line
// back; EOF on stdin closes the host and ends the process.

const simChildEnv = "SWITCHYARD_BENCH_SIM"

// simSpec is what the parent asks the child to start.
type simSpec struct {
	Kind       string        // "zfs" or "truenas"
	Dir        string        // the host's state directory
	Driver     string        // the driver the config is for
	Latency    time.Duration // per command (zfs) or per API call (truenas)
	RTTLatency time.Duration // per exec or program (zfs)
	Version    string        // truenas release
	// Profile, if set, is where the child writes a pprof CPU profile of
	// itself from start to exit (SWITCHYARD_BENCH_SIM_PPROF).
	Profile string
}

// simHello is the child's first line.
type simHello struct {
	Config string // DriverConfig(Driver, "v", "")
	Addr   string // zfs: the SSH address
	Port   int
	Error  string
}

// simCounts is the answer to "counts": what the host saw since "reset".
type simCounts struct {
	Records int            // commands (zfs) or API calls (truenas) recorded
	Execs   int            // zfs: distinct (connection, session, program)
	Methods map[string]int // truenas: calls by method
	// Transports: truenas calls by transport.
	Transports        map[string]int
	WebSocketSessions int64 // truenas, since start
	RESTCalls         int64
	Connections       int64
}

func TestMain(m *testing.M) {
	if v := os.Getenv(simChildEnv); v != "" {
		os.Exit(simChild(v))
	}
	if v := os.Getenv(floorChildEnv); v != "" {
		os.Exit(floorChild(v))
	}
	os.Exit(m.Run())
}

// simChild runs the host described by the JSON spec until stdin ends.
func simChild(spec string) int {
	var s simSpec
	out := json.NewEncoder(os.Stdout)
	if err := json.Unmarshal([]byte(spec), &s); err != nil {
		_ = out.Encode(simHello{Error: err.Error()})
		return 2
	}
	if s.Profile != "" {
		f, err := os.Create(s.Profile)
		if err == nil && pprof.StartCPUProfile(f) == nil {
			defer func() { pprof.StopCPUProfile(); f.Close() }()
		}
	}
	var reset func()
	var counts func() simCounts
	var closeHost func() error
	var hello simHello
	switch s.Kind {
	case "zfs":
		h, err := zfshost.Start(zfshost.Options{Dir: s.Dir, Latency: s.Latency, RTTLatency: s.RTTLatency})
		if err != nil {
			_ = out.Encode(simHello{Error: err.Error()})
			return 1
		}
		hello = simHello{Config: h.DriverConfig(s.Driver, "v", ""), Addr: h.Addr, Port: h.Port}
		reset, closeHost = h.Server.ResetCommands, h.Close
		counts = func() simCounts {
			recs := h.Server.Commands()
			execs, cmds := execsAndCommands(recs)
			return simCounts{Records: cmds, Execs: execs}
		}
	case "truenas":
		h, err := truenashost.Start(truenashost.Options{Dir: s.Dir, Version: s.Version, Latency: s.Latency})
		if err != nil {
			_ = out.Encode(simHello{Error: err.Error()})
			return 1
		}
		hello = simHello{Config: h.DriverConfig(s.Driver, "v", ""), Port: h.Port}
		reset, closeHost = h.Server.ResetCalls, h.Close
		counts = func() simCounts {
			recs := h.Server.Calls()
			c := simCounts{Records: len(recs), Methods: map[string]int{}, Transports: map[string]int{}}
			for _, r := range recs {
				c.Methods[r.Method]++
				c.Transports[r.Transport]++
			}
			st := h.Server.Stats()
			c.WebSocketSessions, c.RESTCalls, c.Connections = st.WebSocketSessions, st.RESTCalls, st.Connections
			return c
		}
	default:
		_ = out.Encode(simHello{Error: "unknown simulator kind " + s.Kind})
		return 2
	}
	defer closeHost()
	if err := out.Encode(hello); err != nil {
		return 1
	}
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		switch in.Text() {
		case "reset":
			reset()
			_ = out.Encode(true)
		case "counts":
			_ = out.Encode(counts())
		default:
			_ = out.Encode(false)
		}
	}
	return 0
}

// simProc is a simulated host running in a child process.
type simProc struct {
	simHello
	pid int
	in  io.WriteCloser
	out *json.Decoder
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
	spec, err := json.Marshal(s)
	if err != nil {
		b.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), simChildEnv+"="+string(spec))
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	p := &simProc{pid: cmd.Process.Pid, in: in, out: json.NewDecoder(stdout)}
	b.Cleanup(func() {
		in.Close() // the child closes its host and exits
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	if err := p.out.Decode(&p.simHello); err != nil {
		b.Fatalf("simulator process: %v", err)
	}
	if p.Error != "" {
		b.Fatalf("simulator process: %s", p.Error)
	}
	return p
}

// ask sends one request line and decodes the answer into v.
func (p *simProc) ask(b *testing.B, req string, v any) {
	b.Helper()
	if _, err := fmt.Fprintln(p.in, req); err != nil {
		b.Fatalf("simulator process: %v", err)
	}
	if err := p.out.Decode(v); err != nil {
		b.Fatalf("simulator process: %s: %v", req, err)
	}
}

func (p *simProc) reset(b *testing.B) {
	var ok bool
	p.ask(b, "reset", &ok)
}

func (p *simProc) counts(b *testing.B) simCounts {
	var c simCounts
	p.ask(b, "counts", &c)
	return c
}

func (p *simProc) cpu(b *testing.B) time.Duration { return procCPU(b, p.pid) }

// cpuMeter sums the CPU of the three sides over the batches it measures
// (and not the bookkeeping between them).
type cpuMeter struct {
	driver, sim, client time.Duration
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
	f()
	if driverPid != 0 {
		m.driver += procCPU(b, driverPid) - d0
	}
	m.sim += sim.cpu(b) - s0
	m.client += selfCPU(b) - c0
}
