//go:build unix

package zfs

import (
	"strings"
	"testing"
	"time"
)

func TestSSHConfigValidation(t *testing.T) {
	plainPEM, _ := newKeyPEM(t)
	encPEM, _ := encryptedKeyPEM(t)
	valid := SSHConfig{Host: "nas.example", Username: "root", Password: "pw-0ne"}
	tests := []struct {
		name    string
		edit    func(*SSHConfig)
		wantErr string // "" = valid
	}{
		{name: "password only", edit: func(*SSHConfig) {}},
		{name: "key only", edit: func(c *SSHConfig) { c.Password, c.PrivateKey = "", plainPEM }},
		{name: "encrypted key", edit: func(c *SSHConfig) { c.PrivateKey, c.Passphrase = encPEM, testKeyPassphrase }},
		{name: "passphrase on a plain key is ignored", edit: func(c *SSHConfig) { c.PrivateKey, c.Passphrase = plainPEM, "unused" }},
		{name: "fingerprint with padding", edit: func(c *SSHConfig) {
			c.HostKeyFingerprint = "SHA256:" + strings.Repeat("A", 43) + "="
		}},
		{name: "no host", edit: func(c *SSHConfig) { c.Host = " " }, wantErr: "sshConnection.host is required"},
		{name: "port out of range", edit: func(c *SSHConfig) { c.Port = 70000 }, wantErr: "sshConnection.port: 70000"},
		{name: "negative port", edit: func(c *SSHConfig) { c.Port = -1 }, wantErr: "sshConnection.port"},
		{name: "no username", edit: func(c *SSHConfig) { c.Username = "" }, wantErr: "sshConnection.username is required"},
		{name: "no credentials", edit: func(c *SSHConfig) { c.Password = "" }, wantErr: "one of password or privateKey"},
		{name: "garbage key", edit: func(c *SSHConfig) { c.PrivateKey = "-----BEGIN NOTHING-----\nsecretbytes\n" },
			wantErr: "sshConnection.privateKey: not a usable private key"},
		{name: "encrypted key, no passphrase", edit: func(c *SSHConfig) { c.PrivateKey = encPEM },
			wantErr: "set sshConnection.passphrase"},
		{name: "encrypted key, wrong passphrase", edit: func(c *SSHConfig) { c.PrivateKey, c.Passphrase = encPEM, "nope-Pass" },
			wantErr: "sshConnection.passphrase does not decrypt"},
		{name: "fingerprint not SHA256", edit: func(c *SSHConfig) { c.HostKeyFingerprint = "MD5:aa:bb" },
			wantErr: "sshConnection.hostKeyFingerprint"},
		{name: "fingerprint too short", edit: func(c *SSHConfig) { c.HostKeyFingerprint = "SHA256:abcd" },
			wantErr: "not a SHA256 fingerprint"},
		{name: "negative maxSessions", edit: func(c *SSHConfig) { c.MaxSessions = -2 }, wantErr: "sshConnection.maxSessions"},
		{name: "negative dial timeout", edit: func(c *SSHConfig) { c.DialTimeout = -time.Second }, wantErr: "sshConnection.dialTimeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := valid
			tt.edit(&cfg)
			s, err := NewSSH(cfg, nil)
			if tt.wantErr == "" {
				if err != nil || s == nil {
					t.Fatalf("NewSSH = %v; want valid", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v; want it to contain %q", err, tt.wantErr)
			}
			for _, secret := range []string{cfg.Password, cfg.Passphrase, "secretbytes", "PRIVATE KEY"} {
				if secret != "" && strings.Contains(err.Error(), secret) {
					t.Errorf("error %q leaks %q", err, secret)
				}
			}
		})
	}
}

func TestSSHConfigDefaults(t *testing.T) {
	tests := []struct {
		host    string
		wantWho string
	}{
		{"nas.example", "root@nas.example:22"},
		{"fd00::1", "root@[fd00::1]:22"},
	}
	for _, tt := range tests {
		st, err := SSHConfig{Host: tt.host, Username: "root", Password: "x"}.validate()
		if err != nil {
			t.Fatal(err)
		}
		c := st.cfg
		if st.who != tt.wantWho || c.Port != 22 || c.MaxSessions != 10 || c.KeepAlive != 10*time.Second || c.DialTimeout != 10*time.Second {
			t.Errorf("%s: who %q, config %+v; want %s and democratic-csi's defaults", tt.host, st.who, c, tt.wantWho)
		}
	}
	// Validation does not connect: an unreachable host is fine until Run.
	if _, err := NewSSH(SSHConfig{Host: "192.0.2.1", Username: "root", Password: "x"}, nil); err != nil {
		t.Fatalf("NewSSH connected eagerly or failed: %v", err)
	}
}

func TestRedactForLog(t *testing.T) {
	tests := []struct {
		in        string
		sensitive []string
		want      string
	}{
		{"set auth password=abc", nil, "set auth password=abc"},
		{"set auth password=abc", []string{""}, "set auth password=abc"},
		{"user=u1 pass=abc mutual=abc", []string{"abc"}, "user=u1 pass=<redacted> mutual=<redacted>"},
		// The longer secret goes first, so no fragment of it survives.
		{"a=secret b=secret2", []string{"secret", "secret2"}, "a=<redacted> b=<redacted>"},
	}
	for _, tt := range tests {
		if got := redactForLog(tt.in, tt.sensitive); got != tt.want {
			t.Errorf("redactForLog(%q, %q) = %q; want %q", tt.in, tt.sensitive, got, tt.want)
		}
	}
}
