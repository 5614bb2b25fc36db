//go:build unix

package zfs

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
)

// logBuffer captures slog output from many goroutines.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func debugLogger() (*slog.Logger, *logBuffer) {
	b := &logBuffer{}
	return slog.New(slog.NewTextHandler(b, &slog.HandlerOptions{Level: slog.LevelDebug})), b
}

// hostPort splits the server's address for SSHConfig.
func hostPort(t testing.TB, addr string) (string, int) {
	t.Helper()
	h, p, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	n, _ := strconv.Atoi(p)
	return h, n
}

// newTestSSH returns an executor for srv logging in with the password;
// edit adjusts the config first.
func newTestSSH(t testing.TB, srv *testSSHServer, log *slog.Logger, edit func(*SSHConfig)) *SSH {
	t.Helper()
	host, port := hostPort(t, srv.Addr)
	cfg := SSHConfig{Host: host, Port: port, Username: srv.User, Password: srv.Password, DialTimeout: 2 * time.Second}
	if edit != nil {
		edit(&cfg)
	}
	s, err := NewSSH(cfg, log)
	if err != nil {
		t.Fatalf("NewSSH: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// execOnly is newTestSSH's edit for tests of the exec path itself (one
// channel per command): sshConnection.shellSession: false.
func execOnly(c *SSHConfig) { c.NoShellSession = true }

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// eventually polls cond for up to 3s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(3 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}

// newKeyPEM makes a fresh unencrypted ed25519 key.
func newKeyPEM(t *testing.T) (string, ssh.PublicKey) {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKey(priv, "test")
	if err != nil {
		t.Fatal(err)
	}
	sshPub, err := ssh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(block)), sshPub
}

// encryptedTestKeyPEM is a throwaway key made by
// `ssh-keygen -t ed25519 -a 1 -N key-pass`: real ssh-keygen output, and
// one bcrypt round keeps parsing it fast (the default 16 take seconds
// under -race).
const (
	encryptedTestKeyPEM = `-----BEGIN OPENSSH PRIVATE KEY-----
b3BlbnNzaC1rZXktdjEAAAAACmFlczI1Ni1jdHIAAAAGYmNyeXB0AAAAGAAAABD0eUtmi1
/103j9ga5q0OAOAAAAAQAAAAEAAAAzAAAAC3NzaC1lZDI1NTE5AAAAIP6bNNiBXau6xZgD
GQSIPA5bHyTKJpt5U7Z4zHMXsuyyAAAAoHcN4TceRk0bNNKP2mtoK5tpOYqomNZQfp4tx1
5OpiqcgPq1auEqr4rTTazLhfR0flpXsC8VNb5TA2fCwNI9EEwGe0muQJl/2M0bruATdvzP
iWtH7N3teFdmXuBOl6262Mi5U795wttUnvlI6XH9c+hRc/ewqT1oHcFz/PemHz565SmrfI
vG+scfyI5u7+t08+Xsw1NZlHXcpZoFR/B1TPY=
-----END OPENSSH PRIVATE KEY-----
`
	encryptedTestKeyPub = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIP6bNNiBXau6xZgDGQSIPA5bHyTKJpt5U7Z4zHMXsuyy switchyard-test"
	testKeyPassphrase   = "key-pass"
)

func encryptedKeyPEM(t *testing.T) (string, ssh.PublicKey) {
	t.Helper()
	pub, _, _, _, err := ssh.ParseAuthorizedKey([]byte(encryptedTestKeyPub))
	if err != nil {
		t.Fatal(err)
	}
	return encryptedTestKeyPEM, pub
}
