package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// lockedBuffer is a bytes.Buffer safe for a writer and a reader.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestTruenasCmdFlags: missing or bad flags are usage errors (exit 2)
// that say what is wrong.
func TestTruenasCmdFlags(t *testing.T) {
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"no state", []string{"--version", "25.04"}, "--state is required"},
		{"no version", []string{"--state", t.TempDir()}, "--version is required"},
		{"bad version", []string{"--state", t.TempDir(), "--version", "twenty"}, "--version"},
		{"unsimulated patch", []string{"--state", t.TempDir(), "--version", "25.04.1"}, "not simulated"},
		{"bad key", []string{"--state", t.TempDir(), "--version", "25.04", "--api-key", "ci"}, "name=key"},
		{"ssh without password", []string{"--state", t.TempDir(), "--version", "25.04", "--api-key", "ci=1-" + strings.Repeat("a", 64), "--ssh-listen", "127.0.0.1:0"}, "--ssh-listen needs --password"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var stderr bytes.Buffer
			if rc := truenasCmd(context.Background(), tc.args, io.Discard, &stderr); rc != 2 {
				t.Fatalf("exit %d, want 2 (%s)", rc, stderr.String())
			}
			if !strings.Contains(stderr.String(), tc.want) {
				t.Errorf("stderr %q does not say %q", stderr.String(), tc.want)
			}
		})
	}
}

// TestTruenasCmdServes: the command prints its URLs, serves the API until
// its context ends, then exits 0.
func TestTruenasCmdServes(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr lockedBuffer
	done := make(chan int)
	go func() {
		done <- truenasCmd(ctx, []string{"--listen", "127.0.0.1:0", "--state", t.TempDir(), "--version", "24.10", "--tls-listen", "127.0.0.1:0"}, &stdout, &stderr)
	}()
	re := regexp.MustCompile(`REST +(http://\S+)`)
	var url string
	for deadline := time.Now().Add(10 * time.Second); url == "" && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if m := re.FindStringSubmatch(stdout.String()); m != nil {
			url = m[1]
		}
	}
	if url == "" {
		t.Fatalf("no REST URL printed: %q %q", stdout.String(), stderr.String())
	}
	if !strings.Contains(stdout.String(), "TLS certificate (PEM) written to ") || !strings.Contains(stdout.String(), "root / secret") {
		t.Errorf("output %q", stdout.String())
	}
	req, _ := http.NewRequest(http.MethodGet, url+"/system/version", nil)
	req.SetBasicAuth("root", "secret")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != `"TrueNAS-SCALE-24.10.2"` {
		t.Errorf("system/version: %d %s", resp.StatusCode, body)
	}
	cancel()
	select {
	case rc := <-done:
		if rc != 0 {
			t.Errorf("exit %d: %s", rc, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the command did not stop")
	}
}
