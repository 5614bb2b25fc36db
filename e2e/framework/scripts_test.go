package framework

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// runScript runs a pod script with this machine's busybox, as the test
// image does, and returns its exit code and termination message.
func runScript(t *testing.T, script string, env map[string]string) (int, string) {
	t.Helper()
	bb, err := exec.LookPath("busybox")
	if err != nil {
		t.Skip("busybox is not installed (apt-get install busybox-static): the pod scripts run on busybox")
	}
	dir := t.TempDir()
	term := filepath.Join(dir, "termination-log")
	cmd := exec.Command(bb, "sh", "-c", script)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "TERMLOG=" + term, "READY=" + filepath.Join(dir, "ready"),
		"PATTERN=spec-42", "BYTES=300000", "WAIT=2", "TARGET_KIB=1", "DATA=", "DEV="}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
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
