//go:build unix

package zfs

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// forgetHostKey drops what trust on first use remembered for addr, so a
// test sees the first use itself.
func forgetHostKey(addr string) {
	trustedHostKeys.mu.Lock()
	delete(trustedHostKeys.byAddr, addr)
	trustedHostKeys.mu.Unlock()
}

// freshTestSSHServer is a server with a host key of its own whose address
// no executor has trusted yet.
func freshTestSSHServer(t *testing.T, more ...ssh.Signer) *testSSHServer {
	srv := newTestSSHServerKey(t, nil, 0, newHostSigner(), more...)
	forgetHostKey(srv.Addr)
	t.Cleanup(func() { forgetHostKey(srv.Addr) })
	return srv
}

// impostor replaces srv with a server holding another host key at the
// same address.
func impostor(t *testing.T, srv *testSSHServer, signer ssh.Signer) *testSSHServer {
	t.Helper()
	srv.Kill()
	imp := newTestSSHServerKey(t, nil, 0, signer)
	imp.Kill()
	imp.Start(srv.Addr)
	return imp
}

// logLines returns the lines of buf at level that contain every text.
func logLines(buf *logBuffer, level string, texts ...string) []string {
	var out []string
	for _, l := range strings.Split(buf.String(), "\n") {
		if !strings.Contains(l, "level="+level+" ") {
			continue
		}
		ok := true
		for _, t := range texts {
			ok = ok && strings.Contains(l, t)
		}
		if ok {
			out = append(out, l)
		}
	}
	return out
}

func TestSSHHostKeyTrustOnFirstUse(t *testing.T) {
	srv := freshTestSSHServer(t)
	fp := ssh.FingerprintSHA256(srv.HostKey)
	log, buf := debugLogger()
	s := newTestSSH(t, srv, log, nil)
	for range 2 {
		if out, err := s.Run(testContext(t), "echo ok", RunOptions{}); err != nil || out.Stdout != "ok\n" {
			t.Fatalf("first use: %+v, %v", out, err)
		}
		_ = s.Close() // force a second handshake
	}
	// A driver rebuilt after a config reload keeps the trust.
	rebuilt := newTestSSH(t, srv, log, nil)
	if _, err := rebuilt.Run(testContext(t), "true", RunOptions{}); err != nil {
		t.Fatalf("rebuilt executor: %v", err)
	}

	if got := logLines(buf, "INFO", "trusted on first use", fp, srv.Addr, "hostKeyFingerprint"); len(got) != 1 {
		t.Fatalf("want one INFO line naming the fingerprint, the host and how to pin it; got %d. log:\n%s", len(got), buf)
	}
	if got := logLines(buf, "WARN", "no hostKeyFingerprint or knownHosts"); len(got) != 2 {
		t.Errorf("want the unpinned warning once per executor (2); got %d. log:\n%s", len(got), buf)
	}
	if strings.Contains(buf.String(), srv.Password) {
		t.Errorf("log leaks the password:\n%s", buf)
	}
}

func TestSSHHostKeyChangeRefused(t *testing.T) {
	srv := freshTestSSHServer(t)
	trusted := ssh.FingerprintSHA256(srv.HostKey)
	log, buf := debugLogger()
	s := newTestSSH(t, srv, log, nil)
	if _, err := s.Run(testContext(t), "true", RunOptions{}); err != nil {
		t.Fatal(err)
	}
	_ = s.Close()

	imp := impostor(t, srv, newHostSigner())
	offered := ssh.FingerprintSHA256(imp.HostKey)
	marker := filepath.Join(t.TempDir(), "ran")
	for _, ex := range []*SSH{s, newTestSSH(t, imp, log, nil)} { // reconnect, and a rebuilt driver
		_, err := ex.Run(testContext(t), "touch "+marker, RunOptions{})
		if !errors.Is(err, ErrHostKey) || !errors.Is(err, ErrAuth) {
			t.Fatalf("err = %v; want ErrHostKey and ErrAuth (FAILED_PRECONDITION)", err)
		}
		for _, want := range []string{trusted, offered, srv.Addr, "sshConnection.hostKeyFingerprint: " + offered, "no credentials were sent"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not contain %q", err, want)
			}
		}
		if strings.Contains(err.Error(), srv.Password) {
			t.Errorf("error leaks the password: %v", err)
		}
	}
	if n := imp.authAttempts(); n != 0 {
		t.Errorf("the impostor saw %d authentication attempts; want none", n)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the command ran on the impostor")
	}
	if got := logLines(buf, "WARN", "changed", trusted, offered); len(got) == 0 {
		t.Errorf("no WARN line names both keys. log:\n%s", buf)
	}

	// The fix the error suggests works: pin the new key.
	pinned := newTestSSH(t, imp, nil, func(c *SSHConfig) { c.HostKeyFingerprint = offered })
	if _, err := pinned.Run(testContext(t), "true", RunOptions{}); err != nil {
		t.Fatalf("pinned to the new key: %v", err)
	}
	if imp.authAttempts() == 0 {
		t.Error("the pinned executor never authenticated")
	}
}

func TestSSHHostKeyPinnedRefusesBeforeAuth(t *testing.T) {
	srv := freshTestSSHServer(t)
	_, other := newKeyPEM(t)
	wrong := ssh.FingerprintSHA256(other)
	s := newTestSSH(t, srv, nil, func(c *SSHConfig) { c.HostKeyFingerprint = wrong })
	_, err := s.Run(testContext(t), "true", RunOptions{})
	if !errors.Is(err, ErrHostKey) || !strings.Contains(err.Error(), wrong) || !strings.Contains(err.Error(), ssh.FingerprintSHA256(srv.HostKey)) {
		t.Fatalf("err = %v; want ErrHostKey naming both fingerprints", err)
	}
	if n := srv.authAttempts(); n != 0 {
		t.Errorf("server saw %d authentication attempts; want none", n)
	}
	// A pinned executor neither learns nor obeys trust on first use.
	trustedHostKeys.mu.Lock()
	_, learned := trustedHostKeys.byAddr[srv.Addr]
	trustedHostKeys.mu.Unlock()
	if learned {
		t.Error("a pinned executor recorded a first-use key")
	}
}

func ecdsaSigner(t *testing.T) ssh.Signer {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	s, err := ssh.NewSignerFromKey(k)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// writeKnownHosts writes lines to a known_hosts file and returns its path.
func writeKnownHosts(t *testing.T, lines ...string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "known_hosts")
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestSSHKnownHosts(t *testing.T) {
	// A second host key, as sshd usually has: known_hosts may list either.
	// It is added before the server starts (adding it after raced with the
	// server's handshakes, seen with -race).
	ec := ecdsaSigner(t)
	srv := freshTestSSHServer(t, ec)
	entry := knownhosts.Normalize(srv.Addr)
	_, other := newKeyPEM(t)
	otherEC := ecdsaSigner(t).PublicKey()
	tests := []struct {
		name  string
		lines []string
		want  []string // in the error; nil: connects
	}{
		{name: "ed25519 listed", lines: []string{knownhosts.Line([]string{entry}, srv.HostKey)}},
		{name: "only the ecdsa key listed", lines: []string{knownhosts.Line([]string{entry}, ec.PublicKey())}},
		{name: "hashed entry", lines: []string{knownhosts.Line([]string{knownhosts.HashHostname(entry)}, srv.HostKey)}},
		{name: "another key listed", lines: []string{knownhosts.Line([]string{entry}, other)},
			want: []string{"does not match", ssh.FingerprintSHA256(other), "line 1"}},
		{name: "host not listed", lines: []string{knownhosts.Line([]string{"[other.example]:2222"}, srv.HostKey)},
			want: []string{"is not listed", "ssh-keyscan"}},
		{name: "revoked", lines: []string{"@revoked * " + string(ssh.MarshalAuthorizedKey(srv.HostKey)),
			knownhosts.Line([]string{entry}, srv.HostKey)}, want: []string{"@revoked"}},
		{name: "host has none of the listed key types", lines: []string{knownhosts.Line([]string{entry}, otherEC)},
			want: []string{"does not match"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := srv.authAttempts()
			path := writeKnownHosts(t, tt.lines...)
			log, buf := debugLogger()
			s := newTestSSH(t, srv, log, func(c *SSHConfig) { c.KnownHosts = path })
			_, err := s.Run(testContext(t), "true", RunOptions{})
			if tt.want == nil {
				if err != nil {
					t.Fatalf("Run: %v", err)
				}
				if strings.Contains(buf.String(), "trusted on first use") || strings.Contains(buf.String(), "no hostKeyFingerprint") {
					t.Errorf("a known_hosts executor fell back to trust on first use:\n%s", buf)
				}
				return
			}
			if !errors.Is(err, ErrHostKey) || !errors.Is(err, ErrAuth) {
				t.Fatalf("err = %v; want ErrHostKey and ErrAuth", err)
			}
			for _, w := range append(tt.want, "sshConnection.knownHosts "+path, srv.Addr) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			if n := srv.authAttempts() - before; n != 0 {
				t.Errorf("server saw %d authentication attempts; want none", n)
			}
		})
	}
}

func TestSSHKnownHostsNoCommonKeyType(t *testing.T) {
	srv := freshTestSSHServer(t) // ed25519 only
	path := writeKnownHosts(t, knownhosts.Line([]string{knownhosts.Normalize(srv.Addr)}, ecdsaSigner(t).PublicKey()))
	s := newTestSSH(t, srv, nil, func(c *SSHConfig) { c.KnownHosts = path })
	_, err := s.Run(testContext(t), "true", RunOptions{})
	if !errors.Is(err, ErrHostKey) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "none of the key types") {
		t.Fatalf("err = %v; want ErrHostKey naming the file and the key types", err)
	}
	if n := srv.authAttempts(); n != 0 {
		t.Errorf("server saw %d authentication attempts; want none", n)
	}
}

func TestSSHKnownHostsValidation(t *testing.T) {
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage")
	if err := os.WriteFile(garbage, []byte("host ssh-ed25519 not-base64!!\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	unreadable := filepath.Join(dir, "unreadable")
	if err := os.WriteFile(unreadable, nil, 0o000); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big")
	if err := os.WriteFile(big, make([]byte, maxKnownHostsSize+1), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ name, path, want string }{
		{"missing", filepath.Join(dir, "nope"), "no such file"},
		{"relative", "known_hosts", "absolute path"},
		{"directory", dir, "not a regular file"},
		{"device", "/dev/zero", "not a regular file"},
		{"too big", big, "at most"},
		{"not known_hosts", garbage, "garbage:1"},
	}
	if os.Geteuid() != 0 { // root reads anything
		tests = append(tests, struct{ name, path, want string }{"unreadable", unreadable, "permission denied"})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := SSHConfig{Host: "nas", Username: "root", Password: "pw-Secret!", KnownHosts: tt.path}
			_, err := NewSSH(cfg, nil)
			if err == nil || !strings.Contains(err.Error(), "sshConnection.knownHosts") || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v; want one naming sshConnection.knownHosts and %q", err, tt.want)
			}
		})
	}
}

func TestSSHKnownHostsRemovedAfterStart(t *testing.T) {
	srv := freshTestSSHServer(t)
	path := writeKnownHosts(t, knownhosts.Line([]string{knownhosts.Normalize(srv.Addr)}, srv.HostKey))
	s := newTestSSH(t, srv, nil, func(c *SSHConfig) { c.KnownHosts = path })
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	_, err := s.Run(testContext(t), "true", RunOptions{})
	if !errors.Is(err, ErrHostKey) || !strings.Contains(err.Error(), "sshConnection.knownHosts") {
		t.Fatalf("err = %v; want ErrHostKey naming sshConnection.knownHosts", err)
	}
}

func TestHostKeyWarning(t *testing.T) {
	tests := []struct {
		name string
		cfg  SSHConfig
		want []string // nil: no warning
	}{
		{name: "nothing pinned", cfg: SSHConfig{Host: "nas.example"},
			want: []string{"sshConnection: no hostKeyFingerprint or knownHosts", "nas.example:22", "trusted", "refused",
				"sshConnection.hostKeyFingerprint", "sshConnection.knownHosts"}},
		{name: "port", cfg: SSHConfig{Host: "fd00::1", Port: 2222}, want: []string{"[fd00::1]:2222"}},
		{name: "fingerprint", cfg: SSHConfig{Host: "nas", HostKeyFingerprint: "SHA256:x"}},
		{name: "known_hosts", cfg: SSHConfig{Host: "nas", KnownHosts: "/etc/ssh/ssh_known_hosts"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := HostKeyWarning(tt.cfg)
			if tt.want == nil {
				if got != "" {
					t.Fatalf("HostKeyWarning = %q; want none", got)
				}
				return
			}
			if strings.Contains(got, "\n") {
				t.Errorf("warning spans lines: %q", got)
			}
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("HostKeyWarning = %q; want it to contain %q", got, w)
				}
			}
		})
	}
}
