package framework

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// runScript runs a pod script with this machine's busybox, as the test
// image does, and returns its exit code and termination message.
func runScript(t *testing.T, script string, env map[string]string) (int, string) {
	t.Helper()
	cmd, term, out := scriptCmd(t, script, env)
	return finish(t, cmd.Run(), term, out)
}

// scriptCmd prepares a pod script on this machine's busybox; it returns
// the command, its termination-log file and its output.
func scriptCmd(t *testing.T, script string, env map[string]string) (*exec.Cmd, string, *bytes.Buffer) {
	t.Helper()
	bb, err := exec.LookPath("busybox")
	if err != nil {
		t.Skip("busybox is not installed (apt-get install busybox-static): the pod scripts run on busybox")
	}
	dir := t.TempDir()
	term := filepath.Join(dir, "termination-log")
	cmd := exec.Command(bb, "sh", "-c", script)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "TERMLOG=" + term, "READY=" + filepath.Join(dir, "ready"),
		"PATTERN=spec-42", "BYTES=300000", "WAIT=2", "TARGET_KIB=1", "DATA=", "DEV=", "STOP="}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	return cmd, term, &out
}

// finish turns a script's end into its exit code and termination message.
func finish(t *testing.T, err error, term string, out *bytes.Buffer) (int, string) {
	t.Helper()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	msg, _ := os.ReadFile(term)
	t.Logf("exit %d, output: %s", code, out.String())
	return code, strings.TrimSpace(string(msg))
}

func TestWriterThenReaderFilesystem(t *testing.T) {
	data := t.TempDir()
	code, msg := runScript(t, WriterScript, map[string]string{"DATA": data})
	if code != 0 || !strings.HasPrefix(msg, "size_kib=") {
		t.Fatalf("writer: exit %d, message %q; want 0 and size_kib=", code, msg)
	}
	if fi, err := os.Stat(filepath.Join(data, "pattern")); err != nil || fi.Size() != 300000 {
		t.Fatalf("pattern file: %v %v", fi, err)
	}
	code, msg = runScript(t, ReaderScript, map[string]string{"DATA": data})
	if code != 0 || !strings.HasPrefix(msg, "pattern ok") {
		t.Fatalf("reader: exit %d, message %q; want pattern ok", code, msg)
	}
	// Another spec's pattern is not this one's.
	code, msg = runScript(t, ReaderScript, map[string]string{"DATA": data, "PATTERN": "spec-43"})
	if code != 1 || !strings.Contains(msg, "pattern mismatch") {
		t.Fatalf("reader of another pattern: exit %d, message %q; want a mismatch", code, msg)
	}
}

func TestReaderOnEmptyVolumeFails(t *testing.T) {
	code, msg := runScript(t, ReaderScript, map[string]string{"DATA": t.TempDir()})
	if code != 1 || !strings.Contains(msg, "/pattern on the volume") {
		t.Fatalf("exit %d, message %q; want a missing-file failure", code, msg)
	}
}

func TestWriterGivesUpWhenTheVolumeDoesNotGrow(t *testing.T) {
	code, msg := runScript(t, WriterScript, map[string]string{"DATA": t.TempDir(), "TARGET_KIB": "999999999999", "WAIT": "1"})
	if code != 1 || !strings.Contains(msg, "size stayed at") {
		t.Fatalf("exit %d, message %q; want the size timeout", code, msg)
	}
}

func TestWriterThenReaderBlock(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("a loop device needs root")
	}
	img := filepath.Join(t.TempDir(), "disk")
	if err := os.WriteFile(img, make([]byte, 8<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("losetup", "-f", "--show", img).Output()
	if err != nil {
		t.Skipf("no loop device here: %v", err)
	}
	dev := strings.TrimSpace(string(out))
	t.Cleanup(func() { _ = exec.Command("losetup", "-d", dev).Run() })
	code, msg := runScript(t, WriterScript, map[string]string{"DEV": dev, "TARGET_KIB": "8192"})
	if code != 0 || msg != "size_kib=8192" {
		t.Fatalf("writer: exit %d, message %q; want size_kib=8192", code, msg)
	}
	code, msg = runScript(t, ReaderScript, map[string]string{"DEV": dev})
	if code != 0 || !strings.HasPrefix(msg, "pattern ok") {
		t.Fatalf("reader: exit %d, message %q", code, msg)
	}
}

// With STOP, a writer that saw the volume grow keeps running (the kubelet
// expands only for a running pod) until the stop file has content.
func TestWriterWaitsForStopAfterGrowing(t *testing.T) {
	stop := filepath.Join(t.TempDir(), "stop")
	if err := os.WriteFile(stop, nil, 0o600); err != nil { // the projection of an unset annotation
		t.Fatal(err)
	}
	cmd, term, out := scriptCmd(t, WriterScript, map[string]string{"DATA": t.TempDir(), "STOP": stop, "WAIT": "30"})
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		code, msg := finish(t, err, term, out)
		t.Fatalf("the writer left before the stop: exit %d, message %q", code, msg)
	case <-time.After(2500 * time.Millisecond):
	}
	if err := os.WriteFile(stop, []byte("stop"), 0o600); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		code, msg := finish(t, err, term, out)
		if code != 0 || !strings.HasPrefix(msg, "size_kib=") {
			t.Fatalf("exit %d, message %q; want 0 and size_kib=", code, msg)
		}
		if !strings.Contains(out.String(), "grown to ") {
			t.Errorf("the output does not report the growth before the stop: %s", out.String())
		}
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatal("the writer did not end within 10s of the stop")
	}
}

func TestWriterWithoutStopGivesUpNamingIt(t *testing.T) {
	stop := filepath.Join(t.TempDir(), "stop")
	code, msg := runScript(t, WriterScript, map[string]string{"DATA": t.TempDir(), "STOP": stop, "WAIT": "1"})
	if code != 1 || !strings.Contains(msg, "no stop in "+stop) {
		t.Fatalf("exit %d, message %q; want the stop timeout naming the file", code, msg)
	}
}
