package zfs

import (
	"crypto/ed25519"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// How the SSH executor decides whether the host it reached is the host it
// means (docs/design.md contract 7, "nothing is trusted silently"):
//
//   - sshConnection.hostKeyFingerprint pins one key;
//   - sshConnection.knownHosts names an OpenSSH known_hosts file the key
//     must be listed in (a host missing from it is refused too);
//   - with neither, the first key seen for host:port is trusted for the life
//     of the driver process (trust on first use, logged at INFO with the
//     fingerprint to pin) and any other key offered there later is refused.
//
// A refused key fails the handshake before authentication: no password is
// sent and no command runs.

// ErrHostKey: the host offered a key that is not the pinned, listed or
// first-seen one. Errors that wrap it wrap ErrAuth as well (retrying will
// not help, and callers map both to FAILED_PRECONDITION).
var ErrHostKey = errors.New("ssh host key refused")

// maxKnownHostsSize bounds a known_hosts file (like connection files).
const maxKnownHostsSize = 1 << 20

// trustedHostKeys remembers, per host:port, the first host key an
// unpinned executor accepted in this process: reconnects and executors
// rebuilt after a config reload keep that trust.
var trustedHostKeys = struct {
	mu     sync.Mutex
	byAddr map[string]trustedKey
}{byAddr: map[string]trustedKey{}}

type trustedKey struct{ fingerprint, keyType string }

// trustOnFirstUse returns the key remembered for addr, remembering k when
// there is none yet (first is then true).
func trustOnFirstUse(addr string, k trustedKey) (remembered trustedKey, first bool) {
	trustedHostKeys.mu.Lock()
	defer trustedHostKeys.mu.Unlock()
	if r, ok := trustedHostKeys.byAddr[addr]; ok {
		return r, false
	}
	trustedHostKeys.byAddr[addr] = k
	return k, true
}

// HostKeyWarning returns a one-line warning when cfg pins no host key
// (neither hostKeyFingerprint nor knownHosts), for start-up and config
// checks to show; "" when the key is pinned.
func HostKeyWarning(cfg SSHConfig) string {
	if cfg.HostKeyFingerprint != "" || cfg.KnownHosts != "" {
		return ""
	}
	port := cfg.Port
	if port == 0 {
		port = defaultSSHPort
	}
	addr := net.JoinHostPort(cfg.Host, strconv.Itoa(port))
	return "sshConnection: no hostKeyFingerprint or knownHosts: the first host key seen at " + addr +
		" is trusted for the life of the driver process and a different key there is refused; " +
		"pin it with sshConnection.hostKeyFingerprint (ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub on the host) " +
		"or sshConnection.knownHosts"
}

// sshHostKeyRefused is returned by the host key callback; the dialer turns
// it into an ErrHostKey (and ErrAuth) failure.
type sshHostKeyRefused struct{ msg string }

func (e *sshHostKeyRefused) Error() string { return e.msg }

func hostKeyRefused(format string, args ...any) error {
	return &sshHostKeyRefused{msg: fmt.Sprintf(format, args...)}
}

// hostKeyError builds the executor error for a refused key.
func hostKeyError(format string, args ...any) error {
	return &executorError{msg: fmt.Sprintf(format, args...), kinds: []error{ErrHostKey, ErrAuth}}
}

// CheckKnownHostsFile validates sshConnection.knownHosts (config validation
// calls it, so a bad file is reported before the first connect): an absolute path
// to a regular file of at most 1 MiB that parses as known_hosts.
func CheckKnownHostsFile(path string) error {
	if !filepath.IsAbs(path) {
		return fmt.Errorf("sshConnection.knownHosts: %q must be an absolute path", path)
	}
	_, err := loadKnownHosts(path)
	return err
}

// loadKnownHosts reads the known_hosts file at path. Errors name the key.
func loadKnownHosts(path string) (ssh.HostKeyCallback, error) {
	// Stat does not block on a FIFO and follows links: a link to a device
	// is refused as well.
	fi, err := os.Stat(path)
	switch {
	case err != nil:
		return nil, fmt.Errorf("sshConnection.knownHosts: %v", err)
	case !fi.Mode().IsRegular():
		return nil, fmt.Errorf("sshConnection.knownHosts: %s is not a regular file", path)
	case fi.Size() > maxKnownHostsSize:
		return nil, fmt.Errorf("sshConnection.knownHosts: %s is %d bytes; at most %d are read", path, fi.Size(), maxKnownHostsSize)
	}
	cb, err := knownhosts.New(path)
	if err != nil {
		return nil, fmt.Errorf("sshConnection.knownHosts: %v", err)
	}
	return cb, nil
}

// probeKey is a key no host has: checking it against known_hosts lists the
// keys the file holds for a host.
var probeKey = func() ssh.PublicKey {
	k, err := ssh.NewPublicKey(ed25519.PublicKey(make([]byte, ed25519.PublicKeySize)))
	if err != nil {
		panic(err)
	}
	return k
}()

// knownHostAlgorithms returns the host key algorithms of the keys known
// for addr, so the handshake asks for a key the file can vouch for (as
// OpenSSH does) rather than the client's first preference; nil when the
// file lists none.
func knownHostAlgorithms(cb ssh.HostKeyCallback, addr string) []string {
	var ke *knownhosts.KeyError
	if err := cb(addr, &net.TCPAddr{IP: net.IPv4zero}, probeKey); !errors.As(err, &ke) || len(ke.Want) == 0 {
		return nil
	}
	var algos []string
	seen := map[string]bool{}
	for _, w := range ke.Want {
		names := []string{w.Key.Type()}
		if w.Key.Type() == ssh.KeyAlgoRSA {
			names = []string{ssh.KeyAlgoRSASHA512, ssh.KeyAlgoRSASHA256, ssh.KeyAlgoRSA}
		}
		for _, n := range names {
			if !seen[n] {
				seen[n] = true
				algos = append(algos, n)
			}
		}
	}
	return algos
}

// dialConfig is the client config for one handshake: known_hosts is read
// again each time so an edited file takes effect on the next connect.
func (s *SSH) dialConfig() (*ssh.ClientConfig, error) {
	cfg := *s.clientCfg
	var kh ssh.HostKeyCallback
	if s.st.knownHosts != "" {
		cb, err := loadKnownHosts(s.st.knownHosts)
		if err != nil {
			return nil, hostKeyError("ssh %s: %v", s.st.who, err)
		}
		kh = cb
		cfg.HostKeyAlgorithms = knownHostAlgorithms(cb, s.st.addr)
	}
	cfg.HostKeyCallback = func(_ string, remote net.Addr, key ssh.PublicKey) error {
		return s.checkHostKey(kh, remote, key)
	}
	return &cfg, nil
}

// checkHostKey applies the pinned fingerprint and known_hosts when they
// are configured, trust on first use otherwise.
func (s *SSH) checkHostKey(kh ssh.HostKeyCallback, remote net.Addr, key ssh.PublicKey) error {
	got := ssh.FingerprintSHA256(key)
	addr := s.st.addr
	if s.st.pinned != "" && got != s.st.pinned {
		s.log.Warn("ssh host key refused: it does not match sshConnection.hostKeyFingerprint",
			"host", addr, "offered", got, "pinned", s.st.pinned)
		return hostKeyRefused("host key %s offered by %s does not match sshConnection.hostKeyFingerprint %s; "+
			"refusing to connect (no credentials were sent). If the host's key changed on purpose, check the new key on the host "+
			"(ssh-keygen -lf /etc/ssh/ssh_host_%s_key.pub) and set hostKeyFingerprint to it", got, addr, s.st.pinned, keyFileType(key))
	}
	if kh != nil {
		if err := s.checkKnownHosts(kh, remote, key); err != nil {
			return err
		}
	}
	if s.st.pinned != "" || kh != nil {
		s.hostKeyLog.Do(func() {
			s.log.Debug("ssh host key verified", "host", addr, "fingerprint", got, "type", key.Type())
		})
		return nil
	}

	remembered, first := trustOnFirstUse(addr, trustedKey{fingerprint: got, keyType: key.Type()})
	switch {
	case first:
		s.log.Info("ssh host key trusted on first use: a different key at this address will be refused until the driver restarts; "+
			"pin this one with sshConnection.hostKeyFingerprint or sshConnection.knownHosts",
			"host", addr, "fingerprint", got, "type", key.Type(), "pin", "hostKeyFingerprint: "+got)
	case remembered.fingerprint == got:
		s.hostKeyLog.Do(func() {
			s.log.Debug("ssh host key matches the one trusted on first use", "host", addr, "fingerprint", got)
		})
	default:
		s.log.Warn("ssh host key changed since first use; refusing to connect",
			"host", addr, "trusted", remembered.fingerprint, "offered", got)
		return hostKeyRefused("host key changed: %s offered %s key %s, but this driver trusted %s key %s there on first use; "+
			"refusing to connect (no credentials were sent). If the host's key changed on purpose (reinstalled, or another host took over the address), "+
			"check the new key on the host (ssh-keygen -lf /etc/ssh/ssh_host_%s_key.pub) and pin it: set sshConnection.hostKeyFingerprint: %s "+
			"or list it in sshConnection.knownHosts; otherwise something is impersonating the host",
			addr, key.Type(), got, remembered.keyType, remembered.fingerprint, keyFileType(key), got)
	}
	return nil
}

// checkKnownHosts explains known_hosts' verdict on key.
func (s *SSH) checkKnownHosts(kh ssh.HostKeyCallback, remote net.Addr, key ssh.PublicKey) error {
	err := kh(s.st.addr, remote, key)
	if err == nil {
		return nil
	}
	got := ssh.FingerprintSHA256(key)
	addr, file := s.st.addr, s.st.knownHosts
	var (
		ke      *knownhosts.KeyError
		revoked *knownhosts.RevokedError
	)
	switch {
	case errors.As(err, &revoked):
		s.log.Warn("ssh host key refused: revoked in sshConnection.knownHosts", "host", addr, "offered", got, "file", file)
		return hostKeyRefused("host key %s offered by %s is marked @revoked in sshConnection.knownHosts %s (line %d); refusing to connect (no credentials were sent)",
			got, addr, file, revoked.Revoked.Line)
	case errors.As(err, &ke) && len(ke.Want) == 0:
		s.log.Warn("ssh host refused: not in sshConnection.knownHosts", "host", addr, "offered", got, "file", file)
		return hostKeyRefused("host %s is not listed in sshConnection.knownHosts %s (it offered %s key %s); refusing to connect (no credentials were sent). "+
			"Add the host's key to the file (ssh-keyscan -p %s %s, after checking the fingerprint on the host with ssh-keygen -lf)",
			addr, file, key.Type(), got, portOf(addr), hostOf(addr))
	case errors.As(err, &ke):
		var want []string
		for _, w := range ke.Want {
			want = append(want, fmt.Sprintf("%s at line %d", ssh.FingerprintSHA256(w.Key), w.Line))
		}
		s.log.Warn("ssh host key refused: it does not match sshConnection.knownHosts", "host", addr, "offered", got, "known", want, "file", file)
		return hostKeyRefused("host key %s offered by %s does not match the key(s) sshConnection.knownHosts %s lists for it (%s); "+
			"refusing to connect (no credentials were sent). If the host's key changed on purpose, check the new key on the host and replace its line in the file",
			got, addr, file, strings.Join(want, ", "))
	default:
		return hostKeyRefused("sshConnection.knownHosts %s: %v", file, err)
	}
}

// keyFileType is the <type> of /etc/ssh/ssh_host_<type>_key.pub for key.
func keyFileType(key ssh.PublicKey) string {
	switch key.Type() {
	case ssh.KeyAlgoED25519:
		return "ed25519"
	case ssh.KeyAlgoRSA:
		return "rsa"
	case ssh.KeyAlgoECDSA256, ssh.KeyAlgoECDSA384, ssh.KeyAlgoECDSA521:
		return "ecdsa"
	}
	return "<type>"
}

func hostOf(addr string) string {
	h, _, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	return h
}

func portOf(addr string) string {
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		return strconv.Itoa(defaultSSHPort)
	}
	return p
}
