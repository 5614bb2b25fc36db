package main

import (
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// TestMain lets the test binary act as the pause command itself
// (PAUSE_AS_MAIN=1), so the test drives the real main through signals.
func TestMain(m *testing.M) {
	if os.Getenv("PAUSE_AS_MAIN") == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func start(t *testing.T) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "PAUSE_AS_MAIN=1")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	return cmd
}

func waitExit(t *testing.T, cmd *exec.Cmd, within time.Duration) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(within):
		t.Fatalf("pause did not exit within %v", within)
		return nil
	}
}

// The kubelet stops a sandbox with SIGTERM; pause must exit at once and cleanly.
func TestStopsOnSIGTERM(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		cmd := start(t)
		time.Sleep(200 * time.Millisecond) // let it install its handler
		if err := cmd.Process.Signal(sig); err != nil {
			t.Fatal(err)
		}
		if err := waitExit(t, cmd, 5*time.Second); err != nil {
			t.Errorf("after %v: %v, want exit 0", sig, err)
		}
	}
}

// SIGCHLD (a child of the pod exiting) must not stop the sandbox.
func TestSurvivesSIGCHLD(t *testing.T) {
	cmd := start(t)
	time.Sleep(200 * time.Millisecond)
	if err := cmd.Process.Signal(syscall.SIGCHLD); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	if err := cmd.Process.Signal(syscall.Signal(0)); err != nil {
		t.Fatalf("pause exited on SIGCHLD: %v", err)
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	if err := waitExit(t, cmd, 5*time.Second); err != nil {
		t.Errorf("after SIGTERM: %v", err)
	}
}
