//go:build unix

package zfs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// A shell session gives each program what an exec gives it: the same
// stdout, stderr and status (the test server runs a real /bin/sh, as the
// login shell of exec and as the session's sh), nothing left over from
// the program before, stdin at EOF.
func TestShellParity(t *testing.T) {
	srv := newTestSSHServer(t, nil, 0)
	execS := newTestSSH(t, srv, nil, execOnly)
	shellS := newTestSSH(t, srv, nil, nil)
	programs := []string{
		"true",
		"printf abc",                 // no final newline
		"echo only-err >&2",          // only stderr
		"printf 'o'; printf 'e' >&2", // both streams, no newlines
		"echo out; echo err >&2; exit 1",
		"exit 2",
		"exit 3; echo not-reached",
		"no-such-command-xyz", // 127, the shell's message
		"echo 'unterminated",  // a syntax error: sh's message, status 2
		"if then fi",          // another
		"echo $0",             // the login shell's name, as over exec
		"cd /; pwd",           // the next program starts at home again
		"pwd",
		"X=1; export Y=2", // variables do not leak either
		"echo ${X-unset} ${Y-unset}",
		"trap 'echo trapped' EXIT", // a trap runs at the program's end
		"cat; echo read-eof",       // stdin is at EOF
		"printf '\\n\\n\\n'",       // only newlines
		"printf 'SWY00000000000000000000000000000000\\n\\nSWY00000000000000000000000000000000 0\\n'; exit 4", // marker-like output
		"echo " + Quote(shellHello), // the hello is output like any other
		"printf 'a\\0b'",            // a NUL byte
		"seq 1 20000",               // more than one read
	}
	for _, p := range programs {
		want, werr := execS.Run(testContext(t), p, RunOptions{})
		got, gerr := shellS.Run(testContext(t), p, RunOptions{})
		if werr != nil || gerr != nil || got != want {
			t.Errorf("%q:\n shell %+.200v, %v\n exec  %+.200v, %v", p, got, gerr, want, werr)
		}
	}
	if st := shellS.Stats(); st.ShellSessions != 1 || st.Programs != len(programs) || st.Sessions != 1 {
		t.Errorf("shell stats %+v; want every program on one session", st)
	}
}

// Output arriving while a session is idle (a program's background job
// writing late) puts it out of step: the next program goes to a fresh
// session, its output untouched.
func TestShellStrayOutputDiscardsSession(t *testing.T) {
	srv := newTestSSHServer(t, nil, 0)
	s := newTestSSH(t, srv, nil, nil)
	out, err := s.Run(testContext(t), "(sleep 0.2; echo stray; echo stray-err >&2) & echo fg", RunOptions{})
	if err != nil || out.Stdout != "fg\n" {
		t.Fatalf("Run = %+v, %v", out, err)
	}
	time.Sleep(500 * time.Millisecond)
	out, err = s.Run(testContext(t), "echo next", RunOptions{})
	if err != nil || out != (Output{Stdout: "next\n"}) {
		t.Fatalf("next Run = %+v, %v; want only its own output", out, err)
	}
	if st := s.Stats(); st.ShellSessions != 2 || st.IdleShells != 1 {
		t.Fatalf("Stats = %+v; want the stale session replaced", st)
	}
}

// Cancelling a program closes its session (and signals it, as for an
// exec): the slot is free at once and the next program gets a new one.
func TestShellCancelMidProgram(t *testing.T) {
	srv := newTestSSHServer(t, nil, 0)
	s := newTestSSH(t, srv, nil, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	out, err := s.Run(ctx, "sleep 5; echo late", RunOptions{})
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "may have") || out.Code != -1 {
		t.Fatalf("Run = %+v, %v; want DeadlineExceeded saying the command may have run", out, err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Run returned after %s", d)
	}
	if st := s.Stats(); st.InUse != 0 || st.IdleShells != 0 {
		t.Fatalf("Stats = %+v; want the slot free and the session gone", st)
	}
	out, err = s.Run(testContext(t), "echo next", RunOptions{})
	if err != nil || out != (Output{Stdout: "next\n"}) {
		t.Fatalf("next Run = %+v, %v", out, err)
	}
	eventually(t, "the server to see SIGKILL and end the cancelled session", func() bool {
		_, signals := srv.seen()
		_, active, _, _ := srv.stats()
		return fmt.Sprint(signals) == "[KILL]" && active == 1
	})
	if st := s.Stats(); st.ShellSessions != 2 {
		t.Fatalf("Stats = %+v; want a second session", st)
	}
}

// A session that ends mid-program (its sh killed) answers "may have run",
// as an exec whose connection drops; the next program runs on a new one.
func TestShellClosedMidProgram(t *testing.T) {
	srv := newTestSSHServer(t, nil, 0)
	s := newTestSSH(t, srv, nil, nil)
	out, err := s.Run(testContext(t), "echo started; kill -9 $PPID; sleep 1", RunOptions{})
	if !errors.Is(err, ErrConnectionLost) || !strings.Contains(err.Error(), "may have run") || out.Code != -1 {
		t.Fatalf("Run = %+v, %v; want ErrConnectionLost, may have run", out, err)
	}
	out, err = s.Run(testContext(t), "echo next", RunOptions{})
	if err != nil || out.Stdout != "next\n" {
		t.Fatalf("next Run = %+v, %v", out, err)
	}
}

// A session that ended before it read a program (the server closed it
// while idle, the client not yet aware) certainly did not run it: that
// program may be sent again, on a fresh session.
func TestShellEndedBeforeProgram(t *testing.T) {
	srv := newTestSSHServer(t, nil, 0)
	s := newTestSSH(t, srv, nil, nil)
	ctx := testContext(t)
	c, err := s.connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sh, err := s.openShell(c)
	if err != nil {
		t.Fatal(err)
	}
	defer sh.close()
	// The program returns; its background job kills the session's sh.
	if out, keep, _, err := s.runFramed(ctx, sh, "(sleep 0.1; kill -9 $PPID) >/dev/null 2>&1 &"); err != nil || !keep || out.Code != 0 {
		t.Fatalf("first program = %+v, %v, keep %v", out, err, keep)
	}
	<-sh.ended
	if sh.usable(c, time.Now()) {
		t.Fatal("an ended session is still usable")
	}
	marker := filepath.Join(t.TempDir(), "ran")
	out, keep, notRun, err := s.runFramed(ctx, sh, "touch "+Quote(marker))
	if !errors.Is(err, ErrConnectionLost) || keep || !notRun || out.Code != -1 {
		t.Fatalf("program on the ended session = %+v, %v, keep %v, notRun %v; want notRun", out, err, keep, notRun)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the program ran on a session reported as not having read it")
	}
}

// A login shell that cannot start the session's sh (fish refuses "$0")
// gets an error naming the settings to fix, and nothing ran.
func TestShellLoginShellNotPOSIX(t *testing.T) {
	srv := newTestSSHServer(t, nil, 0)
	fish := filepath.Join(t.TempDir(), "fish")
	if err := os.WriteFile(fish, []byte("#!/bin/sh\necho 'fish: $0 is not supported. In fish, please use $argv[0].' >&2\nexit 127\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	srv.mu.Lock()
	srv.loginShell = fish
	srv.mu.Unlock()
	s := newTestSSH(t, srv, nil, nil)
	out, err := s.Run(testContext(t), "true", RunOptions{})
	if !errors.Is(err, ErrUnreachable) || out.Code != -1 {
		t.Fatalf("Run = %+v, %v; want ErrUnreachable", out, err)
	}
	for _, want := range []string{"sshConnection.shellSession: false", "sshConnection.username", "chsh -s /bin/sh", "fish: $0 is not supported", "exited 127"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}

// A line longer than MaxProgram, a pty or stdin: an exec of its own.
func TestShellNotForExecOnlyRuns(t *testing.T) {
	srv := newTestSSHServer(t, nil, 0)
	s := newTestSSH(t, srv, nil, nil)
	long := "echo " + strings.Repeat("x", MaxProgram)
	for _, tc := range []struct {
		line string
		opts RunOptions
		want string
	}{
		{long, RunOptions{}, strings.Repeat("x", MaxProgram) + "\n"},
		{"echo tty", RunOptions{PTY: true}, "tty\n"},
		{"cat", RunOptions{Stdin: []byte("in")}, "in"},
	} {
		out, err := s.Run(testContext(t), tc.line, tc.opts)
		if err != nil || out.Stdout != tc.want {
			t.Fatalf("Run(%.20q) = %+.40v, %v", tc.line, out, err)
		}
	}
	if st := s.Stats(); st.Programs != 0 || st.Sessions != 3 {
		t.Fatalf("Stats = %+v; want 3 execs, no shell program", st)
	}
}

// Idle shell sessions hold channels: a run that needs an exec of its own
// closes one first rather than be refused for it.
func TestShellIdleSessionsMakeRoomForExec(t *testing.T) {
	srv := newTestSSHServer(t, nil, 2)
	s := newTestSSH(t, srv, nil, func(c *SSHConfig) { c.MaxSessions = 2 })
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := s.Run(testContext(t), "sleep 0.1", RunOptions{}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if st := s.Stats(); st.IdleShells != 2 {
		t.Fatalf("Stats = %+v; want 2 idle sessions", st)
	}
	out, err := s.Run(testContext(t), "echo tty", RunOptions{PTY: true})
	if err != nil || out.Stdout != "tty\n" {
		t.Fatalf("PTY Run = %+v, %v", out, err)
	}
	_, _, refused, _ := srv.stats()
	if st := s.Stats(); refused != 0 || st.Refused != 0 || st.IdleShells != 1 || st.Limit != 2 {
		t.Fatalf("Stats = %+v, server refused %d; want no refusal, one idle session left, limit kept", st, refused)
	}
}

// The framing adds nothing to the log: the command as given, redacted.
func TestShellLogsNoSecretNorMarker(t *testing.T) {
	srv := newTestSSHServer(t, nil, 0)
	log, buf := debugLogger()
	s := newTestSSH(t, srv, log, nil)
	if _, err := s.Run(testContext(t), "echo hunter2 >/dev/null", RunOptions{Sensitive: []string{"hunter2"}}); err != nil {
		t.Fatal(err)
	}
	text := buf.String()
	if strings.Contains(text, "hunter2") || strings.Contains(text, "SWY") || !strings.Contains(text, "echo <redacted> >/dev/null") {
		t.Fatalf("log:\n%s", text)
	}
}
