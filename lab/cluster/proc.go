package cluster

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The cluster's processes outlive the program that started them (`cluster
// up` returns while they run), so each one is recorded in the state dir as
// run/<seq>-<name>.pid with its start time; Stop, from any process, finds
// them there. The start time guards against killing a recycled pid.

// Spawn starts argv as a cluster process named name: in its own process
// session and process group, stdout and stderr appended to logs/<name>.log, stopped by Stop in
// reverse start order. env is added to this process's environment.
func (c *Local) Spawn(name string, argv []string, env []string) error {
	if len(argv) == 0 {
		return fmt.Errorf("spawn %s: empty command", name)
	}
	for _, d := range []string{c.path("logs"), c.path("run")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	logf, err := os.OpenFile(c.LogPath(name), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logf.Close()
	fmt.Fprintf(logf, "=== %s %s\n", time.Now().UTC().Format(time.RFC3339), strings.Join(argv, " "))
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Env = append(withoutProxy(os.Environ()), env...)
	cmd.Dir = c.dir
	// A session of its own: no terminal's hangup or Ctrl-C reaches it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s (%s): %w", name, argv[0], err)
	}
	st, _ := procStartTime(cmd.Process.Pid)
	seq := len(c.procs()) + 1
	pidFile := filepath.Join(c.path("run"), fmt.Sprintf("%03d-%s.pid", seq, name))
	if err := os.WriteFile(pidFile, []byte(fmt.Sprintf("%d %d\n", cmd.Process.Pid, st)), 0o644); err != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		return err
	}
	// Reaped here while this program lives; adopted by init once it exits.
	go func() { _ = cmd.Wait() }()
	return nil
}

// withoutProxy drops the HTTP proxy variables from environ. The cluster's
// processes only talk to this machine, the lab's veth networks and the
// storage VM, never through a proxy; but kube-apiserver honours
// HTTPS_PROXY for its connections to kubelets, so on a machine whose
// environment names an egress proxy (CI reaches the Go module proxy
// through one) `kubectl exec` to a node at 10.250.0.x went to that proxy
// and came back "unable to upgrade connection: resolve_deny: denied
// destination".
func withoutProxy(environ []string) []string {
	out := environ[:0:0]
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		switch strings.ToLower(name) {
		case "http_proxy", "https_proxy", "all_proxy", "no_proxy":
			continue
		}
		out = append(out, kv)
	}
	return out
}

// LogPath is the log file of the cluster process name.
func (c *Local) LogPath(name string) string { return filepath.Join(c.path("logs"), name+".log") }

// proc is one recorded process.
type proc struct {
	name  string
	file  string
	pid   int
	start uint64
}

// procs lists the recorded processes in start order.
func (c *Local) procs() []proc {
	files, _ := filepath.Glob(filepath.Join(c.path("run"), "*.pid"))
	sort.Strings(files)
	var out []proc
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		var p proc
		if _, err := fmt.Sscan(string(b), &p.pid, &p.start); err != nil || p.pid <= 1 {
			continue
		}
		base := strings.TrimSuffix(filepath.Base(f), ".pid")
		if i := strings.IndexByte(base, '-'); i >= 0 {
			base = base[i+1:]
		}
		p.name, p.file = base, f
		out = append(out, p)
	}
	return out
}

// running reports whether the recorded process still runs.
func (p proc) running() bool {
	st, err := procStartTime(p.pid)
	return err == nil && (p.start == 0 || st == p.start)
}

// Running reports whether the named cluster process runs.
func (c *Local) Running(name string) bool {
	for _, p := range c.procs() {
		if p.name == name {
			return p.running()
		}
	}
	return false
}

// stopProc stops the process group: SIGTERM, then SIGKILL after grace.
func stopProc(p proc, grace time.Duration) {
	if !p.running() {
		return
	}
	_ = syscall.Kill(-p.pid, syscall.SIGTERM)
	_ = syscall.Kill(p.pid, syscall.SIGTERM)
	deadline := time.Now().Add(grace)
	for time.Now().Before(deadline) && p.running() {
		time.Sleep(50 * time.Millisecond)
	}
	if p.running() {
		_ = syscall.Kill(-p.pid, syscall.SIGKILL)
		_ = syscall.Kill(p.pid, syscall.SIGKILL)
		for i := 0; i < 100 && p.running(); i++ {
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// procStartTime reads the start time (field 22 of /proc/<pid>/stat); a
// zombie counts as gone.
func procStartTime(pid int) (uint64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, errors.New("malformed stat")
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 {
		return 0, errors.New("malformed stat")
	}
	if f[0] == "Z" || f[0] == "X" {
		return 0, errors.New("zombie")
	}
	return strconv.ParseUint(f[19], 10, 64)
}

// tail returns the last n lines of a file, for error messages.
func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// RunningProcesses names the cluster processes that run, as name[pid].
func (c *Local) RunningProcesses() []string {
	var out []string
	for _, p := range c.procs() {
		if p.running() {
			out = append(out, fmt.Sprintf("%s[%d]", p.name, p.pid))
		}
	}
	return out
}
