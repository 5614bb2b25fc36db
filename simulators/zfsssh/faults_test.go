package zfsssh

import (
	"errors"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
)

func TestLatency(t *testing.T) {
	const d = 150 * time.Millisecond
	cases := []struct {
		name    string
		cmdName string
		line    string
		delayed bool
	}{
		{"named command", "zfs", "zfs list", true},
		{"named command through sudo", "zfs", "sudo zfs list", true},
		{"other command", "zfs", "echo x", false},
		{"every command", "", "whoami", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := startEnv(t, nil)
			e.srv.Faults().SetLatency(tc.cmdName, d)
			c := e.client("root")
			start := time.Now()
			r := runOn(t, c, tc.line, "", false)
			took := time.Since(start)
			if r.code != 0 {
				t.Fatalf("run: %+v", r)
			}
			if tc.delayed && took < d {
				t.Fatalf("took %v, want at least %v", took, d)
			}
			// Only a lower bound is reliable on a loaded machine; an
			// undelayed command must simply not wait for the delay twice.
			if !tc.delayed && took >= 2*d {
				t.Fatalf("took %v, the delay applied to another command", took)
			}
			e.srv.Faults().SetLatency(tc.cmdName, 0)
		})
	}
}

func TestErrorRate(t *testing.T) {
	e := startEnv(t, nil)
	e.srv.Faults().SetErrorRate("zfs", 1)
	calls := e.host.callCount()
	r := e.run("zfs create tank/x")
	if r.code != 1 || r.stderr != "injected fault\n" {
		t.Fatalf("run = %+v, want exit 1 and 'injected fault'", r)
	}
	if e.host.callCount() != calls || e.host.has("tank/x") {
		t.Fatal("the failed command reached the host")
	}
	if r := e.run("zpool list"); r.code != 0 {
		t.Fatalf("another command failed: %+v", r)
	}
	e.srv.Faults().SetErrorRate("zfs", 0)
	if r := e.run("zfs list"); r.code != 0 {
		t.Fatalf("after removing the fault: %+v", r)
	}

	// A seed makes a partial rate reproducible.
	outcomes := func(seed uint64) string {
		env := startEnv(t, func(o *Options) { o.FaultSeed = seed })
		env.srv.Faults().SetErrorRate("", 0.5)
		c := env.client("root")
		var b strings.Builder
		for range 24 {
			if runOn(t, c, "true", "", false).code == 0 {
				b.WriteByte('.')
			} else {
				b.WriteByte('x')
			}
		}
		return b.String()
	}
	a, b := outcomes(7), outcomes(7)
	if a != b {
		t.Fatalf("same seed, different outcomes: %s vs %s", a, b)
	}
	if !strings.Contains(a, ".") || !strings.Contains(a, "x") {
		t.Fatalf("rate 0.5 gave %s, want both outcomes", a)
	}
}

// TestDropAfter: the n-th command takes effect, its output and the exit
// status never reach the client, and the commands after it still run, as
// on a host whose sshd lost the connection (procs.go): the shell goes on
// without its client.
func TestDropAfter(t *testing.T) {
	cases := []struct {
		name  string
		n     int
		line  string
		after []string // datasets that must exist afterwards
	}{
		{"first command", 1, "zfs create tank/a; echo visible", []string{"tank/a"}},
		{"second command", 2, "zfs create tank/a; zfs create tank/b; zfs create tank/c", []string{"tank/a", "tank/b", "tank/c"}},
		{"inside sh -c", 2, "sh -c 'zfs create tank/a; zfs create tank/b'", []string{"tank/a", "tank/b"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := startEnv(t, nil)
			e.srv.Faults().DropAfter(tc.n)
			r := runOn(t, e.client("root"), tc.line, "", false)
			var ee *ssh.ExitError
			if r.err == nil || errors.As(r.err, &ee) {
				t.Fatalf("run = %+v, want a lost connection without an exit status", r)
			}
			if r.stdout != "" {
				t.Fatalf("output reached the client: %q", r.stdout)
			}
			waitNoProcs(t, e.srv)
			for _, ds := range tc.after {
				if !e.host.has(ds) {
					t.Errorf("%s missing: the dropped command and the ones after it must take effect", ds)
				}
			}
			if got := e.srv.Stats().DroppedConnections; got != 1 {
				t.Fatalf("DroppedConnections = %d", got)
			}
			// The fault is spent: a retry on a new connection works.
			if r := e.run("zfs create tank/retry"); r.code != 0 || r.err != nil {
				t.Fatalf("retry: %+v", r)
			}
		})
	}
}

func TestRanOutOfInput(t *testing.T) {
	for _, tool := range []string{"targetcli", "nvmetcli"} {
		t.Run(tool, func(t *testing.T) {
			e := startEnv(t, nil)
			e.srv.Faults().RanOutOfInput(1)
			script := "/iscsi create " + iqnBase + ":roi"
			if tool == "nvmetcli" {
				script = "/subsystems create " + nqnBase + ":roi"
			}
			cmd := dcsiCommand(script, tool, false)
			r := runOn(t, e.client("root"), cmd, "", true)
			// democratic-csi retries when stdout (a pty: stderr too) has this.
			if r.code != 1 || !strings.Contains(r.stdout, "EOFError: Ran out of input\r\n") {
				t.Fatalf("first run = %+v", r)
			}
			if len(e.srv.LIO().Targets)+len(e.srv.NVMet().Subsystems) != 0 {
				t.Fatal("the failed run changed the configuration")
			}
			if r := runOn(t, e.client("root"), cmd, "", true); r.code != 0 || strings.Contains(r.stdout, "Ran out of input") {
				t.Fatalf("retry = %+v", r)
			}
			if len(e.srv.LIO().Targets)+len(e.srv.NVMet().Subsystems) != 1 {
				t.Fatal("the retry did not create the object")
			}
		})
	}
}

// waitNoProcs waits until no session's command runs on srv any more.
func waitNoProcs(t *testing.T, srv *Server) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for len(srv.procs.list()) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("commands still running: %+v", srv.procs.list())
		}
		time.Sleep(5 * time.Millisecond)
	}
}
