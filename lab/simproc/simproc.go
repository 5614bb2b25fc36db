// Package simproc runs a simulated storage host (the ZFS-over-SSH host, a
// TrueNAS, an Infinia) in a process of its own, for the lab's benchmarks:
// the driver, the simulator and the benchmark's client then each have their
// own CPU figure from their own process, instead of the simulator's work
// hiding in the client's.
//
// The child is the caller's own executable started again with Env set to a
// JSON Spec; its main must call Serve first thing when Env is set (the
// bench package's TestMain and switchyard-lab's main do). The two speak a
// line protocol on the child's stdin and stdout: the child's first line is
// a Hello; then each request line ("reset", "counts") gets one JSON line
// back; EOF on stdin closes the host and ends the child.
package simproc

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"time"

	"github.com/switchyard-csi/switchyard/lab/infiniahost"
	"github.com/switchyard-csi/switchyard/lab/procstat"
	"github.com/switchyard-csi/switchyard/lab/truenashost"
	"github.com/switchyard-csi/switchyard/lab/zfshost"
	"github.com/switchyard-csi/switchyard/simulators/zfsssh"
)

// Env is the environment variable that makes an executable a simulator
// child; its value is the JSON Spec.
const Env = "SWITCHYARD_BENCH_SIM"

// ProfileEnv, set to a directory in the parent's environment (which the
// child inherits), profiles every simulator child that has no
// Spec.Profile into <dir>/<kind>-<pid>.sim.pprof: how a simulator started
// by switchyard-lab bench is profiled without a flag of its own.
const ProfileEnv = "SWITCHYARD_BENCH_SIM_PPROF"

// Spec is what the parent asks the child to start.
type Spec struct {
	Kind       string        // "zfs", "truenas" or "infinia"
	Dir        string        // the host's state directory
	Driver     string        // zfs, truenas: the driver the config is for
	Latency    time.Duration // per command (zfs), per API call (truenas), per request (infinia)
	RTTLatency time.Duration // zfs: per exec or program
	Version    string        // truenas release
	// Profile, if set, is where the child writes a pprof CPU profile of
	// itself from start to exit.
	Profile string
}

// Hello is the child's first line.
type Hello struct {
	Config string // the driver's connection config for this host
	Addr   string // zfs: the SSH address
	Port   int
	// Params are StorageClass parameters the host needs (infinia: service).
	Params map[string]string `json:",omitempty"`
	Error  string
}

// Counts is the answer to "counts": what the host saw since "reset".
type Counts struct {
	// Records: commands (zfs), API calls (truenas) or routed requests
	// (infinia).
	Records int
	Execs   int            // zfs: distinct (connection, session, program): round trips
	Methods map[string]int // truenas: calls by method
	// Transports: truenas calls by transport.
	Transports        map[string]int
	WebSocketSessions int64 // truenas, since start
	RESTCalls         int64
	Connections       int64
}

// RoundTrips is how many network round trips the host served: programs
// for zfs (one per SSH exec or shell-session program), calls or requests
// for the API hosts.
func (c Counts) RoundTrips() int {
	if c.Execs > 0 {
		return c.Execs
	}
	return c.Records
}

// ExecsAndCommands counts zfs records: distinct (connection, session,
// program) triples, the round trips, and commands.
func ExecsAndCommands(recs []zfsssh.Record) (execs, cmds int) {
	type key struct{ conn, session, program uint64 }
	seen := map[key]bool{}
	for _, r := range recs {
		seen[key{r.Conn, r.Session, r.Program}] = true
	}
	return len(seen), len(recs)
}

// host is a started simulator as the child serves it.
type host struct {
	hello  Hello
	reset  func()
	counts func() Counts
	close  func() error
}

func start(s Spec) (*host, error) {
	switch s.Kind {
	case "zfs":
		h, err := zfshost.Start(zfshost.Options{Dir: s.Dir, Latency: s.Latency, RTTLatency: s.RTTLatency})
		if err != nil {
			return nil, err
		}
		return &host{
			hello: Hello{Config: h.DriverConfig(s.Driver, "v", ""), Addr: h.Addr, Port: h.Port},
			reset: h.Server.ResetCommands, close: h.Close,
			counts: func() Counts {
				execs, cmds := ExecsAndCommands(h.Server.Commands())
				return Counts{Records: cmds, Execs: execs}
			},
		}, nil
	case "truenas":
		h, err := truenashost.Start(truenashost.Options{Dir: s.Dir, Version: s.Version, Latency: s.Latency})
		if err != nil {
			return nil, err
		}
		return &host{
			hello: Hello{Config: h.DriverConfig(s.Driver, "v", ""), Port: h.Port},
			reset: h.Server.ResetCalls, close: h.Close,
			counts: func() Counts {
				recs := h.Server.Calls()
				c := Counts{Records: len(recs), Methods: map[string]int{}, Transports: map[string]int{}}
				for _, r := range recs {
					c.Methods[r.Method]++
					c.Transports[r.Transport]++
				}
				st := h.Server.Stats()
				c.WebSocketSessions, c.RESTCalls, c.Connections = st.WebSocketSessions, st.RESTCalls, st.Connections
				return c
			},
		}, nil
	case "infinia":
		h, err := infiniahost.Start(context.Background(), infiniahost.Options{Dir: s.Dir, Latency: s.Latency})
		if err != nil {
			return nil, err
		}
		base := h.Server.Stats().Total()
		return &host{
			hello: Hello{Config: string(h.DriverConfig("v", nil)), Params: map[string]string{"service": h.Service}},
			reset: func() { base = h.Server.Stats().Total() },
			close: h.Close,
			counts: func() Counts {
				st := h.Server.Stats()
				return Counts{Records: int(st.Total() - base), Connections: st.Connections}
			},
		}, nil
	}
	return nil, fmt.Errorf("unknown simulator kind %q (want zfs, truenas or infinia)", s.Kind)
}

// Serve runs the host the JSON spec describes until in ends, answering on
// out; it returns the process's exit code.
func Serve(spec string, in io.Reader, out io.Writer) int {
	enc := json.NewEncoder(out)
	var s Spec
	if err := json.Unmarshal([]byte(spec), &s); err != nil {
		_ = enc.Encode(Hello{Error: Env + ": " + err.Error()})
		return 2
	}
	if dir := os.Getenv(ProfileEnv); s.Profile == "" && dir != "" {
		s.Profile = filepath.Join(dir, fmt.Sprintf("%s-%d.sim.pprof", s.Kind, os.Getpid()))
	}
	if s.Profile != "" {
		f, err := os.Create(s.Profile)
		if err == nil && pprof.StartCPUProfile(f) == nil {
			defer func() { pprof.StopCPUProfile(); f.Close() }()
		}
	}
	h, err := start(s)
	if err != nil {
		_ = enc.Encode(Hello{Error: err.Error()})
		return 1
	}
	defer func() { _ = h.close() }()
	if err := enc.Encode(h.hello); err != nil {
		return 1
	}
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		switch sc.Text() {
		case "reset":
			h.reset()
			_ = enc.Encode(true)
		case "counts":
			_ = enc.Encode(h.counts())
		default:
			_ = enc.Encode(false)
		}
	}
	return 0
}

// Proc is a simulated host running in a child process.
type Proc struct {
	Hello
	Pid  int
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *json.Decoder
	done chan struct{}
}

// Start runs exe (an executable whose main calls Serve when Env is set,
// usually os.Executable()) as the host of s. Its stderr goes to stderr.
func Start(exe string, s Spec, stderr io.Writer) (*Proc, error) {
	spec, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), Env+"="+string(spec))
	cmd.Stderr = stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("simulator process %s: %w", exe, err)
	}
	p := &Proc{Pid: cmd.Process.Pid, cmd: cmd, in: in, out: json.NewDecoder(stdout), done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(p.done) }()
	if err := p.out.Decode(&p.Hello); err != nil {
		p.Close()
		return nil, fmt.Errorf("simulator process (%s host): no hello: %w", s.Kind, err)
	}
	if p.Error != "" {
		p.Close()
		return nil, fmt.Errorf("simulator process (%s host): %s", s.Kind, p.Error)
	}
	return p, nil
}

// ask sends one request line and decodes the answer into v.
func (p *Proc) ask(req string, v any) error {
	if _, err := fmt.Fprintln(p.in, req); err != nil {
		return fmt.Errorf("simulator process: %s: %w", req, err)
	}
	if err := p.out.Decode(v); err != nil {
		return fmt.Errorf("simulator process: %s: %w", req, err)
	}
	return nil
}

// Reset starts the host's counts afresh.
func (p *Proc) Reset() error {
	var ok bool
	if err := p.ask("reset", &ok); err != nil {
		return err
	}
	if !ok {
		return errors.New("simulator process: reset refused")
	}
	return nil
}

// Counts is what the host saw since the last Reset.
func (p *Proc) Counts() (Counts, error) {
	var c Counts
	err := p.ask("counts", &c)
	return c, err
}

// CPU is the child's CPU time so far.
func (p *Proc) CPU() (time.Duration, error) { return procstat.CPU(p.Pid) }

// Close ends the child: EOF on its stdin closes the host; a child that has
// not exited 30 s later is killed.
func (p *Proc) Close() {
	p.in.Close()
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}
