package zfs

import (
	"context"
	"crypto/sha256"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
)

// One SSH connection per storage host and login, for the whole process.
//
// The proxy rebuilds a connection's driver when its file changes (and
// several connection files may name the same host); each build used to
// dial its own SSH connection, paying a TCP and SSH handshake and the
// host's login again, and letting two connections to one host exceed its
// MaxSessions together. SharedSSH hands every executor built from an
// identical config the same *SSH, counted by reference: the connection,
// its sessions and its session limit are shared, and it closes with the
// last user.

var shared = struct {
	mu    sync.Mutex
	conns map[[sha256.Size]byte]*sharedConn
}{conns: map[[sha256.Size]byte]*sharedConn{}}

type sharedConn struct {
	ssh  *SSH
	refs int
}

// sharedKey identifies a config: every field, secrets included, hashed
// (the key never leaves this process and never holds the secrets).
func sharedKey(cfg SSHConfig) [sha256.Size]byte {
	h := sha256.New()
	for _, f := range []string{cfg.Host, strconv.Itoa(cfg.Port), cfg.Username, cfg.Password, cfg.PrivateKey, cfg.Passphrase,
		strconv.Itoa(cfg.MaxSessions), cfg.KeepAlive.String(), cfg.DialTimeout.String(), cfg.HostKeyFingerprint, cfg.KnownHosts,
		strconv.FormatBool(cfg.NoShellSession)} {
		// Length-prefixed, so no two configs give the same stream.
		_, _ = fmt.Fprintf(h, "%d:%s", len(f), f)
	}
	var k [sha256.Size]byte
	h.Sum(k[:0])
	return k
}

// SharedSSH returns an executor on the process's one connection for cfg,
// validating cfg like NewSSH. Nothing is contacted until the first Run.
// The connection's logger is the first user's.
func SharedSSH(cfg SSHConfig, log *slog.Logger) (*SharedSSHExecutor, error) {
	if _, err := cfg.validate(); err != nil {
		return nil, err
	}
	return &SharedSSHExecutor{cfg: cfg, key: sharedKey(cfg), log: log}, nil
}

// SharedSSHExecutor is one user's handle on a shared connection. Close
// releases the handle's reference; a Run after Close takes one again.
type SharedSSHExecutor struct {
	cfg SSHConfig
	key [sha256.Size]byte
	log *slog.Logger

	mu  sync.Mutex
	ssh *SSH // nil: holds no reference
}

var _ Executor = (*SharedSSHExecutor)(nil)

// acquire returns the shared *SSH, taking this handle's reference first.
func (e *SharedSSHExecutor) acquire() (*SSH, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.ssh != nil {
		return e.ssh, nil
	}
	shared.mu.Lock()
	defer shared.mu.Unlock()
	c := shared.conns[e.key]
	if c == nil {
		s, err := NewSSH(e.cfg, e.log)
		if err != nil {
			return nil, err
		}
		c = &sharedConn{ssh: s}
		shared.conns[e.key] = c
	}
	c.refs++
	e.ssh = c.ssh
	return c.ssh, nil
}

// Run runs line on the shared connection.
func (e *SharedSSHExecutor) Run(ctx context.Context, line string, o RunOptions) (Output, error) {
	s, err := e.acquire()
	if err != nil {
		return Output{}, err
	}
	return s.Run(ctx, line, o)
}

// Close releases this handle; the last one closes the connection.
func (e *SharedSSHExecutor) Close() error {
	e.mu.Lock()
	s := e.ssh
	e.ssh = nil
	e.mu.Unlock()
	if s == nil {
		return nil
	}
	shared.mu.Lock()
	c := shared.conns[e.key]
	last := false
	if c != nil && c.ssh == s {
		c.refs--
		if c.refs <= 0 {
			delete(shared.conns, e.key)
			last = true
		}
	}
	shared.mu.Unlock()
	if last {
		return s.Close()
	}
	return nil
}

// Stats reports the shared connection's counters (zero before first use).
func (e *SharedSSHExecutor) Stats() SSHStats {
	e.mu.Lock()
	s := e.ssh
	e.mu.Unlock()
	if s == nil {
		return SSHStats{}
	}
	return s.Stats()
}
