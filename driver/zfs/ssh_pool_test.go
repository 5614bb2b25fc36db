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
		t.Run(tt.name, func(t *testing.T) {
			srv := newTestSSHServer(t, nil, tt.serverMax)
			s := newTestSSH(t, srv, nil, func(c *SSHConfig) { c.MaxSessions = tt.clientMax })
			runConcurrently(t, s, 20, "sleep 0.05; echo ok", "ok\n")

			st := s.Stats()
			maxActive, active, refused, _ := srv.stats()
			if maxActive > tt.serverMax || st.MaxInUse > tt.clientMax || st.InUse != 0 || active != 0 {
				t.Errorf("server max %d (limit %d), client %+v, server active %d", maxActive, tt.serverMax, st, active)
			}
			if maxActive < 2 {
				t.Errorf("server saw at most %d sessions at once; want parallel sessions", maxActive)
			}
			if st.Dials != 1 || st.Sessions != 20 {
				t.Errorf("Stats = %+v; want 1 dial shared by all, 20 sessions", st)
			}
			if (refused > 0) != tt.wantRefused || st.Refused != refused {
				t.Errorf("server refused %d, client counted %d; want refusals: %v", refused, st.Refused, tt.wantRefused)
			}
			if st.Limit > tt.wantLimitAtMost {
				t.Errorf("effective limit %d; want at most %d", st.Limit, tt.wantLimitAtMost)
			}
		})
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
