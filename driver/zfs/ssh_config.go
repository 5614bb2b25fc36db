package zfs

import (
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"
)

// SSHConfig is democratic-csi's sshConnection block plus switchyard's pool
// and liveness knobs. Zero values take the defaults noted on each field.
type SSHConfig struct {
	Host string
	Port int // default 22
	// Username is the login; Password and/or PrivateKey authenticate it
	// (when both are set the key is offered first, as ssh2 does).
	Username   string
	Password   string
	PrivateKey string // PEM (OpenSSH, PKCS#1, PKCS#8 or SEC1)
	Passphrase string // decrypts an encrypted PrivateKey
	// MaxSessions bounds concurrent sessions on the one connection;
	// default 10, OpenSSH's MaxSessions default. A server that refuses
	// sooner lowers the effective limit.
	MaxSessions int
	// KeepAlive is the interval between keepalive@openssh.com requests;
	// default 10s (democratic-csi's keepaliveInterval), negative disables.
	// Three intervals without a reply mark the connection dead.
	KeepAlive time.Duration
	// DialTimeout bounds one connect, including retries with backoff;
	// default 10s.
	DialTimeout time.Duration
	// HostKeyFingerprint ("SHA256:<base64>", as ssh-keygen -lf prints)
	// pins the host key. With neither it nor KnownHosts, the first key
	// seen at host:port is trusted for the life of the process (logged at
	// INFO) and a different key later is refused (see ssh_hostkey.go).
	HostKeyFingerprint string
	// KnownHosts is the absolute path of an OpenSSH known_hosts file the
	// host's key must be listed in; a host it does not list is refused.
	KnownHosts string
	// NoShellSession sends every command as its own exec (two round trips)
	// instead of to a long-lived `sh -s` per session slot (one round trip):
	// sshConnection.shellSession: false. For hosts whose sh is not POSIX
	// or that forbid long-lived sessions.
	NoShellSession bool
}

const (
	defaultSSHPort        = 22
	defaultSSHMaxSessions = 10
	defaultSSHKeepAlive   = 10 * time.Second
	defaultSSHDialTimeout = 10 * time.Second
)

// sshSettings is a validated SSHConfig, ready to dial.
type sshSettings struct {
	cfg     SSHConfig // with defaults applied
	addr    string    // host:port
	who     string    // user@host:port, the prefix of every error
	prefix  string    // "ssh " + who, made once: every program needs it at hand
	methods string    // auth methods offered, for the auth error
	auth    []ssh.AuthMethod
	pinned  string // normalised HostKeyFingerprint, or ""
	// knownHosts is the checked KnownHosts path, or "".
	knownHosts string
}

// validate applies defaults and checks cfg. Errors name the config key
// (sshConnection.<key>) and never contain a secret.
func (cfg SSHConfig) validate() (*sshSettings, error) {
	if strings.TrimSpace(cfg.Host) == "" {
		return nil, errors.New("sshConnection.host is required")
	}
	if cfg.Port == 0 {
		cfg.Port = defaultSSHPort
	}
	if cfg.Port < 1 || cfg.Port > 65535 {
		return nil, fmt.Errorf("sshConnection.port: %d is not a TCP port (1-65535)", cfg.Port)
	}
	if cfg.Username == "" {
		return nil, errors.New("sshConnection.username is required")
	}
	if cfg.Password == "" && cfg.PrivateKey == "" {
		return nil, errors.New("sshConnection: one of password or privateKey is required")
	}
	switch {
	case cfg.MaxSessions == 0:
		cfg.MaxSessions = defaultSSHMaxSessions
	case cfg.MaxSessions < 0:
		return nil, fmt.Errorf("sshConnection.maxSessions: %d must be positive", cfg.MaxSessions)
	}
	if cfg.KeepAlive == 0 {
		cfg.KeepAlive = defaultSSHKeepAlive
	}
	switch {
	case cfg.DialTimeout == 0:
		cfg.DialTimeout = defaultSSHDialTimeout
	case cfg.DialTimeout < 0:
		return nil, fmt.Errorf("sshConnection.dialTimeout: %s must be positive", cfg.DialTimeout)
	}

	st := &sshSettings{cfg: cfg, addr: net.JoinHostPort(cfg.Host, strconv.Itoa(cfg.Port))}
	st.who = cfg.Username + "@" + st.addr
	st.prefix = "ssh " + st.who

	var methods []string
	if cfg.PrivateKey != "" {
		signer, err := parseSSHKey(cfg.PrivateKey, cfg.Passphrase)
		if err != nil {
			return nil, err
		}
		st.auth = append(st.auth, ssh.PublicKeys(signer))
		methods = append(methods, "publickey")
	}
	if cfg.Password != "" {
		st.auth = append(st.auth, ssh.Password(cfg.Password))
		methods = append(methods, "password")
	}
	st.methods = strings.Join(methods, ",")

	if cfg.HostKeyFingerprint != "" {
		fp, err := normaliseFingerprint(cfg.HostKeyFingerprint)
		if err != nil {
			return nil, err
		}
		st.pinned = fp
	}
	if cfg.KnownHosts != "" {
		if err := CheckKnownHostsFile(cfg.KnownHosts); err != nil {
			return nil, err
		}
		st.knownHosts = cfg.KnownHosts
	}
	return st, nil
}

// parseSSHKey reads a PEM private key. The parser's own messages are kept
// (they say what is wrong, never echo key material).
func parseSSHKey(pemText, passphrase string) (ssh.Signer, error) {
	var (
		signer ssh.Signer
		err    error
	)
	if passphrase != "" {
		signer, err = ssh.ParsePrivateKeyWithPassphrase([]byte(pemText), []byte(passphrase))
	} else {
		signer, err = ssh.ParsePrivateKey([]byte(pemText))
	}
	var missing *ssh.PassphraseMissingError
	switch {
	case err == nil:
		return signer, nil
	case errors.As(err, &missing):
		return nil, errors.New("sshConnection.privateKey is encrypted: set sshConnection.passphrase")
	case errors.Is(err, x509.IncorrectPasswordError):
		return nil, errors.New("sshConnection.passphrase does not decrypt sshConnection.privateKey")
	case passphrase != "" && (strings.Contains(err.Error(), "not an encrypted key") || strings.Contains(err.Error(), "not password protected")):
		// A passphrase for a plain key is harmless: ssh2 ignores it too.
		return parseSSHKey(pemText, "")
	default:
		return nil, fmt.Errorf("sshConnection.privateKey: not a usable private key: %v", err)
	}
}

// normaliseFingerprint accepts "SHA256:<base64>" with or without padding
// and returns it in ssh.FingerprintSHA256's form.
func normaliseFingerprint(fp string) (string, error) {
	b64, ok := strings.CutPrefix(strings.TrimSpace(fp), "SHA256:")
	if !ok {
		return "", fmt.Errorf("sshConnection.hostKeyFingerprint: %q is not of the form SHA256:<base64> (ssh-keygen -lf prints it)", fp)
	}
	sum, err := base64.RawStdEncoding.DecodeString(strings.TrimRight(b64, "="))
	if err != nil || len(sum) != 32 {
		return "", fmt.Errorf("sshConnection.hostKeyFingerprint: %q is not a SHA256 fingerprint (32 bytes, base64)", fp)
	}
	return "SHA256:" + base64.RawStdEncoding.EncodeToString(sum), nil
}
