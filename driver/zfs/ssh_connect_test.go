//go:build unix

package zfs

import (
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
)

func TestSSHAuthentication(t *testing.T) {
	keyPEM, pub := newKeyPEM(t)
	encPEM, encPub := encryptedKeyPEM(t)
	otherPEM, _ := newKeyPEM(t)
	tests := []struct {
		name     string
		key      ssh.PublicKey // authorized on the server
		edit     func(cfg *SSHConfig)
		wantAuth bool   // errors.Is ErrAuth
		wantMsg  string // in the error
	}{
		{name: "password", edit: func(*SSHConfig) {}},
		{name: "key", key: pub, edit: func(c *SSHConfig) { c.Password, c.PrivateKey = "", keyPEM }},
		{name: "encrypted key", key: encPub, edit: func(c *SSHConfig) { c.Password, c.PrivateKey, c.Passphrase = "", encPEM, testKeyPassphrase }},
		{name: "key refused, password accepted", edit: func(c *SSHConfig) { c.PrivateKey = otherPEM }},
		{name: "wrong password", edit: func(c *SSHConfig) { c.Password = "not-the-PASSWORD" },
			wantAuth: true, wantMsg: "authentication failed (password)"},
		{name: "unknown key", key: pub, edit: func(c *SSHConfig) { c.Password, c.PrivateKey = "", otherPEM },
			wantAuth: true, wantMsg: "authentication failed (publickey)"},
		{name: "wrong user", edit: func(c *SSHConfig) { c.Username = "mallory" },
			wantAuth: true, wantMsg: "ssh mallory@"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newTestSSHServer(t, tt.key, 0)
			var cfgUsed SSHConfig
			s := newTestSSH(t, srv, nil, func(c *SSHConfig) { tt.edit(c); cfgUsed = *c })
			start := time.Now()
			out, err := s.Run(testContext(t), "echo hello", RunOptions{})
			if !tt.wantAuth {
				if err != nil || out.Stdout != "hello\n" || out.Code != 0 {
					t.Fatalf("Run = %+v, %v; want hello", out, err)
				}
				return
			}
			if !errors.Is(err, ErrAuth) {
				t.Fatalf("err = %v; want ErrAuth", err)
			}
			wantWho := cfgUsed.Username + "@" + srv.Addr
			for _, want := range []string{wantWho, tt.wantMsg} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not contain %q", err, want)
				}
			}
			for _, secret := range []string{cfgUsed.Password, "PRIVATE KEY"} {
				if secret != "" && strings.Contains(err.Error(), secret) {
					t.Errorf("error %q leaks a credential", err)
				}
			}
			if out.Code != -1 {
				t.Errorf("Code = %d; want -1", out.Code)
			}
			// Retrying cannot fix credentials: no backoff loop.
			if d := time.Since(start); d > time.Second {
				t.Errorf("auth failure took %s; want no retries", d)
			}
		})
	}
}

func TestSSHHostKeyPinning(t *testing.T) {
	srv := newTestSSHServer(t, nil, 0)
	right := ssh.FingerprintSHA256(srv.HostKey)
	_, other := newKeyPEM(t)
	wrong := ssh.FingerprintSHA256(other)

	s := newTestSSH(t, srv, nil, func(c *SSHConfig) { c.HostKeyFingerprint = right + "=" })
	if out, err := s.Run(testContext(t), "echo ok", RunOptions{}); err != nil || out.Stdout != "ok\n" {
		t.Fatalf("pinned to the right key: %+v, %v", out, err)
	}

	s = newTestSSH(t, srv, nil, func(c *SSHConfig) { c.HostKeyFingerprint = wrong })
	_, err := s.Run(testContext(t), "echo ok", RunOptions{})
	if !errors.Is(err, ErrAuth) || !strings.Contains(err.Error(), right) || !strings.Contains(err.Error(), wrong) {
		t.Fatalf("pinned to another key: err = %v; want ErrAuth naming both fingerprints", err)
	}
}

func TestSSHUnreachable(t *testing.T) {
	// A port with nothing listening.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedAddr := ln.Addr().String()
	_ = ln.Close()
	// A port that accepts TCP but never speaks SSH.
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = silent.Close() })
	go func() {
		for {
			c, err := silent.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { _ = c.Close() })
		}
	}()

	for name, addr := range map[string]string{"refused": closedAddr, "silent": silent.Addr().String()} {
		t.Run(name, func(t *testing.T) {
			host, port := hostPort(t, addr)
			s, err := NewSSH(SSHConfig{Host: host, Port: port, Username: "root", Password: "x", DialTimeout: 400 * time.Millisecond}, nil)
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			out, err := s.Run(testContext(t), "true", RunOptions{})
			if !errors.Is(err, ErrUnreachable) || !strings.Contains(err.Error(), addr) {
				t.Fatalf("err = %v; want ErrUnreachable naming %s", err, addr)
			}
			if out.Code != -1 {
				t.Errorf("Code = %d; want -1", out.Code)
			}
			if d := time.Since(start); d > 3*time.Second {
				t.Errorf("took %s; DialTimeout is 400ms", d)
			}
		})
	}
}
