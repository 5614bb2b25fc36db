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

func TestLocalRun(t *testing.T) {
	l := NewLocal("", nil)
	big := strings.Repeat("x", 1<<20)
	tests := []struct {
		line       string
		stdin      string
		code       int
		out, errst string
	}{
		{line: "true"},
		{line: "exit 3", code: 3},
		{line: "echo out; echo err >&2; exit 1", code: 1, out: "out\n", errst: "err\n"},
		{line: "kill -9 $$", code: 128 + 9},
		{line: "cat", stdin: "hello\nworld", out: "hello\nworld"},
		{line: "cat"},
		{line: "wc -c | tr -d ' '", stdin: big, out: fmt.Sprint(len(big)) + "\n"},
		{line: "echo ignored-stdin", stdin: big, out: "ignored-stdin\n"},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			out, err := l.Run(testContext(t), tt.line, RunOptions{Stdin: []byte(tt.stdin)})
			if err != nil {
				t.Fatal(err)
			}
			want := Output{Stdout: tt.out, Stderr: tt.errst, Code: tt.code}
			if out != want {
				t.Fatalf("Run = %+v; want %+v", out, want)
			}
		})
	}
}

func TestLocalMissingShell(t *testing.T) {
	shell := t.TempDir() + "/no-such-shell"
	out, err := NewLocal(shell, nil).Run(testContext(t), "true", RunOptions{})
	if !errors.Is(err, ErrUnreachable) || !strings.Contains(err.Error(), shell) {
		t.Fatalf("err = %v; want ErrUnreachable naming %s", err, shell)
	}
	if out.Code != -1 {
		t.Fatalf("Code = %d; want -1", out.Code)
	}
}

func TestLocalContextCancellation(t *testing.T) {
	l := NewLocal("/bin/sh", nil)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	// Not a lone command, so the shell cannot exec it: the child must be
	// killed with the shell.
	out, err := l.Run(ctx, "sleep 5; echo late", RunOptions{})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v; want DeadlineExceeded", err)
	}
	if out.Code != -1 || strings.Contains(out.Stdout, "late") {
		t.Fatalf("Output = %+v; want Code -1 and no output", out)
	}
	// Well under localWaitDelay + sleep: the whole process group died.
	if d := time.Since(start); d > 1500*time.Millisecond {
		t.Fatalf("Run returned after %s", d)
	}

	cancelled, cancel2 := context.WithCancel(context.Background())
	cancel2()
	dir := t.TempDir()
	if _, err := l.Run(cancelled, "touch "+dir+"/ran", RunOptions{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v; want Canceled", err)
	}
	if out, _ := l.Run(testContext(t), "ls "+dir, RunOptions{}); out.Stdout != "" {
		t.Fatalf("a cancelled Run ran its command: %q", out.Stdout)
	}
}

func TestLocalLogsRedactedAndIgnoresPTY(t *testing.T) {
	log, buf := debugLogger()
	l := NewLocal("", log)
	out, err := l.Run(testContext(t), "echo tok-123 >&2; exit 2", RunOptions{PTY: true, Sensitive: []string{"tok-123"}})
	if err != nil || out.Code != 2 || out.Stderr != "tok-123\n" {
		t.Fatalf("Run = %+v, %v", out, err)
	}
	logged := buf.String()
	if strings.Contains(logged, "tok-123") {
		t.Fatalf("secret in log:\n%s", logged)
	}
	for _, want := range []string{"echo <redacted> >&2; exit 2", "code=2", "stderr=", "pty requested but not supported", "duration="} {
		if !strings.Contains(logged, want) {
			t.Errorf("log lacks %q:\n%s", want, logged)
		}
	}
}
