//go:build unix

package zfs

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// The same runs give the same output over an exec and over a shell
// session (the test server runs a real sh), stdin or not.
func TestSSHExitCodesAndOutput(t *testing.T) {
	for _, mode := range []string{"exec", "shell"} {
		t.Run(mode, func(t *testing.T) { testSSHExitCodesAndOutput(t, mode == "exec") })
	}
}

func testSSHExitCodesAndOutput(t *testing.T, exec bool) {
	srv := newTestSSHServer(t, nil, 0)
	s := newTestSSH(t, srv, nil, func(c *SSHConfig) { c.NoShellSession = exec })
	big := strings.Repeat("0123456789abcdef", 1<<16) // 1 MiB: more than one SSH window
	tests := []struct {
		line       string
		stdin      string
		code       int
		out, errst string
	}{
		{line: "true"},
		{line: "exit 3", code: 3},
		{line: "echo out; echo err >&2; exit 1", code: 1, out: "out\n", errst: "err\n"},
		{line: "printf 'a\\tb'", out: "a\tb"},
		{line: "kill -9 $$", code: 128 + 9},
		{line: "cat", stdin: "hello\nworld", out: "hello\nworld"},
		{line: "cat"}, // stdin is closed even when empty
		{line: "wc -c | tr -d ' '", stdin: big, out: fmt.Sprint(len(big)) + "\n"},
		{line: "echo ignored-stdin", stdin: big, out: "ignored-stdin\n"},
		{line: "cat >/dev/null; echo done", stdin: big, out: "done\n"},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			out, err := s.Run(testContext(t), tt.line, RunOptions{Stdin: []byte(tt.stdin)})
			if err != nil {
				t.Fatal(err)
			}
			want := Output{Stdout: tt.out, Stderr: tt.errst, Code: tt.code}
			if !exec && strings.HasPrefix(tt.line, "kill -9") && out.Stderr == "Killed\n" {
				// The one difference: the session's sh reports its
				// child's death by a signal (docs/performance.md).
				out.Stderr = ""
			}
			if out != want {
				t.Fatalf("Run = %+.80v; want %+.80v", out, want)
			}
		})
	}
	// Runs with stdin are execs; the others share one shell session.
	withStdin := 0
	for _, tt := range tests {
		if tt.stdin != "" {
			withStdin++
		}
	}
	wantSessions, wantPrograms := withStdin+1, len(tests)-withStdin
	if exec {
		wantSessions, wantPrograms = len(tests), 0
	}
	if st := s.Stats(); st.Dials != 1 || st.Sessions != wantSessions || st.Programs != wantPrograms || st.InUse != 0 {
		t.Fatalf("Stats = %+v; want one connection, %d sessions, %d programs on a shell, none in use", st, wantSessions, wantPrograms)
	}
}

func TestSSHPTY(t *testing.T) {
	srv := newTestSSHServer(t, nil, 0)
	s := newTestSSH(t, srv, nil, nil)
	out, err := s.Run(testContext(t), "echo no-pty", RunOptions{})
	if err != nil || out.Stdout != "no-pty\n" {
		t.Fatalf("Run = %+v, %v", out, err)
	}
	if ptys, _ := srv.seen(); len(ptys) != 0 {
		t.Fatalf("pty requested without RunOptions.PTY: %+v", ptys)
	}
	out, err = s.Run(testContext(t), `echo "$TERM"`, RunOptions{PTY: true})
	if err != nil || out.Stdout != "xterm\n" {
		t.Fatalf("Run with PTY = %+v, %v", out, err)
	}
	ptys, _ := srv.seen()
	if want := []testPTY{{Term: "xterm", Cols: 80, Rows: 40}}; fmt.Sprint(ptys) != fmt.Sprint(want) {
		t.Fatalf("server saw pty requests %+v; want %+v", ptys, want)
	}
}

func TestSSHContextCancellation(t *testing.T) {
	srv := newTestSSHServer(t, nil, 0)
	// The exec path's signal (shell sessions: TestShellCancelMidProgram).
	s := newTestSSH(t, srv, nil, execOnly)

	t.Run("before connecting", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := s.Run(ctx, "true", RunOptions{})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v; want context.Canceled", err)
		}
		if st := s.Stats(); st.Dials != 0 {
			t.Fatalf("dialed for a cancelled call: %+v", st)
		}
	})

	t.Run("while running", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		start := time.Now()
		out, err := s.Run(ctx, "sleep 5", RunOptions{})
		if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "may have") {
			t.Fatalf("err = %v; want DeadlineExceeded saying the command may have run", err)
		}
		if out.Code != -1 {
			t.Errorf("Code = %d; want -1", out.Code)
		}
		if d := time.Since(start); d > 3*time.Second {
			t.Errorf("Run returned after %s", d)
		}
		eventually(t, "the server to see SIGKILL and end the session", func() bool {
			_, signals := srv.seen()
			_, active, _, _ := srv.stats()
			return fmt.Sprint(signals) == "[KILL]" && active == 0
		})
		if st := s.Stats(); st.InUse != 0 {
			t.Fatalf("slot still held: %+v", st)
		}
	})

	t.Run("waiting for a session slot", func(t *testing.T) {
		s := newTestSSH(t, srv, nil, func(c *SSHConfig) { c.MaxSessions = 1 })
		holdCtx := testContext(t)
		go func() { _, _ = s.Run(holdCtx, "sleep 1", RunOptions{}) }()
		eventually(t, "the slot to be taken", func() bool { return s.Stats().InUse == 1 })
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		_, err := s.Run(ctx, "true", RunOptions{})
		if !errors.Is(err, context.DeadlineExceeded) || strings.Contains(err.Error(), "may have") {
			t.Fatalf("err = %v; want DeadlineExceeded, command not sent", err)
		}
	})
}

func TestSSHRedactsSensitiveValuesInLogs(t *testing.T) {
	srv := newTestSSHServer(t, nil, 0)
	log, buf := debugLogger()
	s := newTestSSH(t, srv, log, nil)
	secret, inner := "chap-S3cret-value", "S3cret"
	out, err := s.Run(testContext(t), "echo "+secret+"; echo "+secret+" >&2",
		RunOptions{Sensitive: []string{inner, secret, ""}})
	if err != nil {
		t.Fatal(err)
	}
	if out.Stdout != secret+"\n" || out.Stderr != secret+"\n" {
		t.Fatalf("Output = %+v; must not be redacted", out)
	}
	logged := buf.String()
	if strings.Contains(logged, inner) || !strings.Contains(logged, "echo <redacted>; echo <redacted> >&2") {
		t.Fatalf("log not redacted:\n%s", logged)
	}
	for _, want := range []string{"duration=", "code=0", "level=DEBUG", srv.Addr} {
		if !strings.Contains(logged, want) {
			t.Errorf("log lacks %q:\n%s", want, logged)
		}
	}
	if strings.Contains(logged, srv.Password) {
		t.Errorf("log contains the password:\n%s", logged)
	}
}
