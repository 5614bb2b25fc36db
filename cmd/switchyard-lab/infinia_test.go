package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a bytes.Buffer that a command writes while a test reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestInfiniaCmdFlags: bad flags are usage errors (exit 2) that say what
// is wrong, through run's dispatch.
func TestInfiniaCmdFlags(t *testing.T) {
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"no state", []string{"infinia"}, "--state is required"},
		{"bad ttl", []string{"infinia", "--state", t.TempDir(), "--token-ttl", "soon"}, "token-ttl"},
		{"negative ttl", []string{"infinia", "--state", t.TempDir(), "--token-ttl", "-1s"}, "--token-ttl must not be negative"},
		{"error rate", []string{"infinia", "--state", t.TempDir(), "--error-rate", "2"}, "--error-rate must be between 0 and 1"},
		{"bad listen", []string{"infinia", "--state", t.TempDir(), "--listen", "127.0.0.1:nope"}, "listen"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var stderr bytes.Buffer
			if rc := run(tc.args, io.Discard, &stderr); rc != 2 {
				t.Fatalf("exit %d, want 2 (%s)", rc, stderr.String())
			}
			if !strings.Contains(stderr.String(), tc.want) {
				t.Errorf("stderr %q does not say %q", stderr.String(), tc.want)
			}
		})
	}
}

// TestInfiniaCmdServes: the command prints the URL, the account and the
// CA file, which a client uses to log in over verified TLS; it exits 0
// when its context ends.
func TestInfiniaCmdServes(t *testing.T) {
	state := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr syncBuffer
	done := make(chan int)
	go func() {
		done <- infiniaCmd(ctx, []string{"--listen", "127.0.0.1:0", "--state", state, "--token-ttl", "1m"}, &stdout, &stderr)
	}()
	re := regexp.MustCompile(`CA certificate +(\S+)`)
	var caFile string
	for deadline := time.Now().Add(10 * time.Second); caFile == "" && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if m := re.FindStringSubmatch(stdout.String()); m != nil {
			caFile = m[1]
		}
	}
	if caFile != filepath.Join(state, "ca.pem") {
		t.Fatalf("CA file %q; output %q %q", caFile, stdout.String(), stderr.String())
	}
	out := stdout.String()
	m := regexp.MustCompile(`infinia REST API +(https://127\.0\.0\.1:\d+)/redapi/v1`).FindStringSubmatch(out)
	if m == nil || !strings.Contains(out, "account           clu1/red/csiAccount (password switchyard-lab)") {
		t.Fatalf("output %q", out)
	}
	pem, err := os.ReadFile(caFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		t.Fatalf("%s holds no certificate", caFile)
	}
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}, Timeout: 10 * time.Second}
	req, _ := http.NewRequest(http.MethodGet, m[1]+"/redapi/v1/auth_user", nil)
	req.Header.Set("user_id", "csiAccount")
	req.Header.Set("password", "switchyard-lab")
	req.Header.Set("level", "clu1/red")
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var env struct {
		Title string
		Data  struct{ Token string }
	}
	err = json.NewDecoder(resp.Body).Decode(&env)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK || strings.Count(env.Data.Token, ".") != 2 {
		t.Fatalf("login: %d %+v %v", resp.StatusCode, env, err)
	}
	hc.CloseIdleConnections()
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
