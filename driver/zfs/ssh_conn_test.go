//go:build unix

package zfs

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestSSHReconnectsAfterServerRestart(t *testing.T) {
	for _, exec := range []bool{true, false} {
		t.Run(fmt.Sprintf("exec=%v", exec), func(t *testing.T) { testSSHReconnectsAfterServerRestart(t, exec) })
	}
}

func testSSHReconnectsAfterServerRestart(t *testing.T, exec bool) {
	srv := newTestSSHServer(t, nil, 0)
	s := newTestSSH(t, srv, nil, func(c *SSHConfig) { c.NoShellSession = exec })
	if _, err := s.Run(testContext(t), "true", RunOptions{}); err != nil {
		t.Fatal(err)
	}
	srv.Kill()
	srv.Start(srv.Addr)
	if !exec {
		// A program written to an idle session in the instant between
		// the server's close and the client reading it cannot be told
		// from one lost mid-run (ErrConnectionLost; the CO retries):
		// the restart is noticed first, as any idle time allows.
		eventually(t, "the client to notice the closed connection", func() bool {
			s.mu.Lock()
			defer s.mu.Unlock()
			return s.conn == nil || !s.conn.alive()
		})
	}
	out, err := s.Run(testContext(t), "echo back", RunOptions{})
	if err != nil || out.Stdout != "back\n" {
		t.Fatalf("Run after restart = %+v, %v", out, err)
	}
	if st := s.Stats(); st.Reconnects != 1 || st.Dials != 2 {
		t.Fatalf("Stats = %+v; want Reconnects 1, Dials 2", st)
	}
}

// A connection that died without anyone noticing yet: the session open
// fails before the command is sent, so Run retries on a new connection.
func TestSSHRetriesSessionOpenOnDeadConnection(t *testing.T) {
	srv := newTestSSHServer(t, nil, 0)
	s := newTestSSH(t, srv, nil, nil)
	if _, err := s.Run(testContext(t), "true", RunOptions{}); err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	old := s.conn
	stale := newSSHConn(old.client) // not watched: nothing marks it dead
	s.conn = stale
	s.mu.Unlock()
	_ = old.client.Close()

	out, err := s.Run(testContext(t), "echo fresh", RunOptions{})
	if err != nil || out.Stdout != "fresh\n" {
		t.Fatalf("Run = %+v, %v; want a transparent retry", out, err)
	}
	if stale.alive() {
		t.Error("the dead connection is still considered alive")
	}
	if st := s.Stats(); st.Dials != 2 || st.Sessions != 2 || st.Programs != 2 {
		t.Fatalf("Stats = %+v; want 2 dials, 2 sessions, 2 programs", st)
	}
}

func TestSSHConnectionLost(t *testing.T) {
	for _, line := range []string{"__drop__", "__noexit__"} {
		t.Run(line, func(t *testing.T) {
			srv := newTestSSHServer(t, nil, 0)
			// The canned commands are exec requests (shell sessions:
			// ssh_shell_test.go).
			s := newTestSSH(t, srv, nil, execOnly)
			out, err := s.Run(testContext(t), line, RunOptions{})
			if !errors.Is(err, ErrConnectionLost) || !strings.Contains(err.Error(), srv.User+"@"+srv.Addr) {
				t.Fatalf("err = %v; want ErrConnectionLost naming the host", err)
			}
			if out.Code != -1 {
				t.Errorf("Code = %d; want -1", out.Code)
			}
			// The executor recovers on the next command.
			if out, err := s.Run(testContext(t), "echo next", RunOptions{}); err != nil || out.Stdout != "next\n" {
				t.Fatalf("next Run = %+v, %v", out, err)
			}
		})
	}
}

func TestSSHCloseFailsRunningCommands(t *testing.T) {
	srv := newTestSSHServer(t, nil, 0)
	s := newTestSSH(t, srv, nil, nil)
	errc := make(chan error, 1)
	go func() {
		_, err := s.Run(testContext(t), "sleep 3", RunOptions{})
		errc <- err
	}()
	eventually(t, "the command to start", func() bool { _, active, _, _ := srv.stats(); return active == 1 })
	_ = s.Close()
	select {
	case err := <-errc:
		if !errors.Is(err, ErrConnectionLost) {
			t.Fatalf("err = %v; want ErrConnectionLost", err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("Run still waiting after Close")
	}
	if out, err := s.Run(testContext(t), "echo again", RunOptions{}); err != nil || out.Stdout != "again\n" {
		t.Fatalf("Run after Close = %+v, %v", out, err)
	}
}

func TestSSHKeepAliveDetectsDeadConnection(t *testing.T) {
	srv := newTestSSHServer(t, nil, 0)
	log, buf := debugLogger()
	s := newTestSSH(t, srv, log, func(c *SSHConfig) { c.KeepAlive = 50 * time.Millisecond })
	if _, err := s.Run(testContext(t), "true", RunOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "keepalives to arrive", func() bool { _, _, _, n := srv.stats(); return n >= 2 })
	s.mu.Lock()
	c := s.conn
	s.mu.Unlock()
	if !c.alive() {
		t.Fatal("answered keepalives marked the connection dead")
	}

	srv.MuteKeepalives()
	eventually(t, "the silent connection to be marked dead", func() bool { return !c.alive() })
	// The watcher logs just after marking the connection dead, so the line
	// may trail the state change by a scheduling delay on a loaded machine.
	eventually(t, "the keepalive warning to be logged", func() bool { return strings.Contains(buf.String(), "keepalive unanswered") })
	out, err := s.Run(testContext(t), "echo alive", RunOptions{})
	if err != nil || out.Stdout != "alive\n" {
		t.Fatalf("Run = %+v, %v", out, err)
	}
	if st := s.Stats(); st.Reconnects != 1 {
		t.Fatalf("Reconnects = %d; want 1", st.Reconnects)
	}
}
