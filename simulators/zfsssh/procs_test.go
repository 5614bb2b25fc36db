package zfsssh

import (
	"strings"
	"testing"
	"time"
)

// A command whose client went away runs on (an exec and a program of a
// long-lived `sh -s` alike), ps lists its session's group, and kill of the
// group ends it before its next command: what Debian 12's sshd does
// (procs.go).
func TestCommandOutlivesItsConnection(t *testing.T) {
	for _, mode := range []string{"exec", "sh -s"} {
		t.Run(mode, func(t *testing.T) {
			e := startEnv(t, nil)
			c := e.client("root")
			s, err := c.NewSession()
			if err != nil {
				t.Fatal(err)
			}
			const slow = "sleep 0.3; zfs create tank/late; sleep 5; zfs create tank/never"
			if mode == "exec" {
				err = s.Start(slow + " # tag-" + strings.ReplaceAll(mode, " ", ""))
			} else {
				in, _ := s.StdinPipe()
				err = s.Start(`printf '%s\n' hello; sh -s "$0" tag-shs`)
				if err == nil {
					_, err = in.Write([]byte(slow + "\n"))
				}
			}
			if err != nil {
				t.Fatal(err)
			}
			time.Sleep(100 * time.Millisecond)
			c.Close() // the connection drops mid-program
			deadline := time.Now().Add(5 * time.Second)
			for !e.host.has("tank/late") {
				if time.Now().After(deadline) {
					t.Fatal("the command stopped with its connection; sshd lets it run on")
				}
				time.Sleep(10 * time.Millisecond)
			}
			ps := e.run("ps -A -o pgid=,args=")
			var pgid string
			for _, l := range strings.Split(ps.stdout, "\n") {
				if strings.Contains(l, "tag-") {
					pgid = strings.Fields(l)[0]
				}
			}
			if pgid == "" {
				t.Fatalf("ps does not list the orphan: %q", ps.stdout)
			}
			if r := e.run("kill -s KILL -- -" + pgid); r.code != 0 {
				t.Fatalf("kill: %+v", r)
			}
			waitNoProcs(t, e.srv)
			if e.host.has("tank/never") {
				t.Fatal("the killed command went on")
			}
			if r := e.run("kill -s KILL -- -" + pgid); r.code == 0 || !strings.Contains(r.stdout+r.stderr, "No such process") {
				t.Fatalf("kill of a gone group: %+v", r)
			}
		})
	}
}

// A command on a pty dies with its connection: sshd closes the pty's
// master and the kernel hangs the session up (SIGHUP), so it never runs
// its next command. (nvmetcli and targetcli run this way; a leftover one
// would race the client's retry.)
func TestPTYCommandHungUpWithItsConnection(t *testing.T) {
	e := startEnv(t, nil)
	c := e.client("root")
	s, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.RequestPty("xterm", 40, 80, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Start("sleep 0.5; zfs create tank/after-hangup"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	c.Close() // the connection drops mid-program
	waitNoProcs(t, e.srv)
	time.Sleep(600 * time.Millisecond)
	if e.host.has("tank/after-hangup") {
		t.Fatal("the command on the pty went on after its connection dropped")
	}
}
