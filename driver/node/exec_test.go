package node

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	mount "k8s.io/mount-utils"
	utilexec "k8s.io/utils/exec"
	testingexec "k8s.io/utils/exec/testing"
)

// scripted returns a FakeExec whose one command prints out and fails
// with err, recording its argv.
func scripted(argv *[]string, out string, err error) *testingexec.FakeExec {
	return &testingexec.FakeExec{CommandScript: []testingexec.FakeCommandAction{
		func(cmd string, args ...string) utilexec.Cmd {
			*argv = append([]string{cmd}, args...)
			fc := &testingexec.FakeCmd{CombinedOutputScript: []testingexec.FakeAction{
				func() ([]byte, []byte, error) { return []byte(out), nil, err },
			}}
			return testingexec.InitFakeCmd(fc, cmd, args...)
		},
	}}
}

func debugLogger(buf *bytes.Buffer) *slog.Logger {
	return slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

func TestExecRun(t *testing.T) {
	const secret = "s3cr3t-chap"
	tests := []struct {
		name       string
		cmd        Command
		out        string
		err        error
		wantErr    []string // substrings of the error
		notInErr   []string
		wantExit   int
		notInLog   []string
		wantLogged []string
	}{
		{
			name: "success logs the command",
			cmd:  Command{Name: "iscsiadm", Args: []string{"-m", "session"}},
			out:  "tcp: [1] 10.0.0.1:3260,1 iqn.x",
			wantLogged: []string{
				"level=DEBUG", "cmd=iscsiadm", "-m session",
			},
		},
		{
			name:     "failure carries output and exit status",
			cmd:      Command{Name: "iscsiadm", Args: []string{"-m", "node", "-l"}},
			out:      "iscsiadm: No portals found\n",
			err:      testingexec.FakeExitError{Status: 21},
			wantErr:  []string{"iscsiadm -m node -l", "exit 21", "No portals found"},
			wantExit: 21,
		},
		{
			name: "sensitive values are redacted everywhere",
			cmd: Command{
				Name:      "iscsiadm",
				Args:      []string{"-m", "node", "-o", "update", "-n", "node.session.auth.password", "-v", secret},
				Sensitive: []string{secret},
			},
			out:        "cannot set " + secret,
			err:        testingexec.FakeExitError{Status: 7},
			wantErr:    []string{"-v " + redacted, "cannot set " + redacted},
			notInErr:   []string{secret},
			wantExit:   7,
			notInLog:   []string{secret},
			wantLogged: []string{redacted, "exit=7"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var argv []string
			var logs bytes.Buffer
			e := NewExec(scripted(&argv, tt.out, tt.err), 0, debugLogger(&logs))
			out, err := e.Run(context.Background(), tt.cmd)
			if want := append([]string{tt.cmd.Name}, tt.cmd.Args...); strings.Join(argv, " ") != strings.Join(want, " ") {
				t.Fatalf("ran %v, want %v (the real arguments, unredacted)", argv, want)
			}
			if string(out) != tt.out {
				t.Fatalf("output %q, want %q", out, tt.out)
			}
			if (err != nil) != (tt.err != nil) {
				t.Fatalf("err = %v, want failure %t", err, tt.err != nil)
			}
			for _, s := range tt.wantErr {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q lacks %q", err, s)
				}
			}
			for _, s := range tt.notInErr {
				if strings.Contains(err.Error(), s) {
					t.Errorf("error %q contains %q", err, s)
				}
			}
			if tt.err != nil {
				if code, ok := ExitCode(err); !ok || code != tt.wantExit {
					t.Errorf("ExitCode = %d, %t; want %d", code, ok, tt.wantExit)
				}
			}
			for _, s := range tt.wantLogged {
				if !strings.Contains(logs.String(), s) {
					t.Errorf("log %q lacks %q", logs.String(), s)
				}
			}
			for _, s := range tt.notInLog {
				if strings.Contains(logs.String(), s) {
					t.Errorf("log %q contains %q", logs.String(), s)
				}
			}
		})
	}
}

func TestExecRunTimeout(t *testing.T) {
	e := NewExec(nil, 0, quietLogger()) // the real exec
	start := time.Now()
	_, err := e.Run(context.Background(), Command{Name: "sleep", Args: []string{"30"}, Timeout: 100 * time.Millisecond})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want a deadline error", err)
	}
	if !strings.Contains(err.Error(), "sleep 30") {
		t.Fatalf("error %q does not name the command", err)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Fatalf("command ran %v past its timeout", took)
	}
}

// mount-utils reads blkid's exit status with a type assertion, so the
// seam must hand its errors through unchanged.
func TestExecServesMountUtils(t *testing.T) {
	tests := []struct {
		name    string
		out     string
		err     error
		want    string
		wantErr bool
	}{
		{"unformatted (blkid exit 2)", "", testingexec.FakeExitError{Status: 2}, "", false},
		{"ext4", "DEVNAME=/dev/sdq\nTYPE=ext4\n", nil, "ext4", false},
		{"blkid broken", "", testingexec.FakeExitError{Status: 4}, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var argv []string
			var logs bytes.Buffer
			sfm := &mount.SafeFormatAndMount{
				Interface: mount.NewFakeMounter(nil),
				Exec:      NewExec(scripted(&argv, tt.out, tt.err), 0, debugLogger(&logs)),
			}
			got, err := sfm.GetDiskFormat("/dev/sdq")
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Fatalf("GetDiskFormat = %q, %v; want %q, error %t", got, err, tt.want, tt.wantErr)
			}
			if len(argv) == 0 || argv[0] != "blkid" || !strings.Contains(logs.String(), "cmd=blkid") {
				t.Fatalf("blkid did not run through the seam: argv %v, log %q", argv, logs.String())
			}
		})
	}
}

// With the real exec: stderr lands in the error, the exit status is
// readable, and stdin is fed.
func TestExecRealCommand(t *testing.T) {
	e := NewExec(nil, 0, quietLogger())
	_, err := e.Run(context.Background(), Command{Name: "sh", Args: []string{"-c", "echo no such target >&2; exit 3"}})
	if code, ok := ExitCode(err); !ok || code != 3 {
		t.Fatalf("ExitCode(%v) = %d, %t; want 3", err, code, ok)
	}
	if !strings.Contains(err.Error(), "no such target") {
		t.Fatalf("error %q lacks stderr", err)
	}
	out, err := e.Run(context.Background(), Command{Name: "cat", Stdin: []byte("nqn=x,transport=tcp")})
	if err != nil || string(out) != "nqn=x,transport=tcp" {
		t.Fatalf("cat with stdin: %q, %v", out, err)
	}
}
