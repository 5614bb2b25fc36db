//go:build unix

package zfs

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
)

// runConcurrently runs n copies of line at once; each must print want.
func runConcurrently(t *testing.T, s *SSH, n int, line, want string) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, err := s.Run(testContext(t), line, RunOptions{})
			if err == nil && out.Stdout != want {
				err = fmt.Errorf("run %d: stdout %q; want %q", i, out.Stdout, want)
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}

func TestSSHSessionLimit(t *testing.T) {
	tests := []struct {
		name            string
		serverMax       int
		clientMax       int
		wantRefused     bool
		wantLimitAtMost int
	}{
		// The configured limit matches the server's: never refused.
		{name: "limit respected", serverMax: 3, clientMax: 3, wantLimitAtMost: 3},
		// The server allows fewer than configured: refusals lower the limit.
		{name: "server limit lower", serverMax: 2, clientMax: 10, wantRefused: true, wantLimitAtMost: 2},
	}
	for _, tt := range tests {
		for _, exec := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/exec=%v", tt.name, exec), func(t *testing.T) {
				testSSHSessionLimit(t, tt.serverMax, tt.clientMax, tt.wantRefused, tt.wantLimitAtMost, exec)
			})
		}
	}
}

func testSSHSessionLimit(t *testing.T, serverMax, clientMax int, wantRefused bool, wantLimitAtMost int, exec bool) {
	srv := newTestSSHServer(t, nil, serverMax)
	s := newTestSSH(t, srv, nil, func(c *SSHConfig) { c.MaxSessions = clientMax; c.NoShellSession = exec })
	runConcurrently(t, s, 20, "sleep 0.05; echo ok", "ok\n")

	st := s.Stats()
	maxActive, active, refused, _ := srv.stats()
	// Idle shell sessions stay open for the next runs, within the limit.
	if maxActive > serverMax || st.MaxInUse > clientMax || st.InUse != 0 || active != st.IdleShells || st.IdleShells > st.Limit {
		t.Errorf("server max %d (limit %d), client %+v, server active %d", maxActive, serverMax, st, active)
	}
	if maxActive < 2 {
		t.Errorf("server saw at most %d sessions at once; want parallel sessions", maxActive)
	}
	if exec && (st.Dials != 1 || st.Sessions != 20 || st.Programs != 0) {
		t.Errorf("Stats = %+v; want 1 dial shared by all, 20 sessions", st)
	}
	// Sessions are reused: a few per slot at most (one closed when the
	// limit drops below the sessions open is made again later).
	if !exec && (st.Dials != 1 || st.Programs != 20 || st.Sessions != st.ShellSessions || st.ShellSessions > 2*serverMax) {
		t.Errorf("Stats = %+v; want 1 dial shared by all, 20 programs on at most %d shell sessions", st, 2*serverMax)
	}
	if (refused > 0) != wantRefused || st.Refused != refused {
		t.Errorf("server refused %d, client counted %d; want refusals: %v", refused, st.Refused, wantRefused)
	}
	if st.Limit > wantLimitAtMost {
		t.Errorf("effective limit %d; want at most %d", st.Limit, wantLimitAtMost)
	}
}

func TestSSHServerRefusingEverySession(t *testing.T) {
	srv := newTestSSHServer(t, nil, -1)
	s := newTestSSH(t, srv, nil, nil)
	out, err := s.Run(testContext(t), "true", RunOptions{})
	if !errors.Is(err, ErrUnreachable) || !strings.Contains(err.Error(), "refuses to open a session") {
		t.Fatalf("err = %v; want ErrUnreachable: the server refuses sessions", err)
	}
	if st := s.Stats(); out.Code != -1 || st.Refused != maxIdleRefusals || st.Sessions != 0 || st.InUse != 0 {
		t.Fatalf("Output %+v, Stats %+v; want %d refusals and nothing run", out, st, maxIdleRefusals)
	}
}

// BenchmarkSSHRunParallel measures commands through one connection's
// session pool against the in-process server.
func BenchmarkSSHRunParallel(b *testing.B) {
	srv := newTestSSHServer(b, nil, 10)
	s := newTestSSH(b, srv, nil, nil)
	ctx := context.Background()
	b.SetParallelism(8) // more callers than the 10 sessions on 2 cores
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := s.Run(ctx, "true", RunOptions{}); err != nil {
				b.Error(err)
				return
			}
		}
	})
	st := s.Stats()
	b.ReportMetric(float64(st.Dials), "dials")
	b.ReportMetric(float64(st.MaxInUse), "max-sessions")
}
