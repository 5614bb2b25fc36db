package zfs

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"

	"golang.org/x/crypto/ssh"
)

// SSH is an Executor that runs commands on one host over one SSH
// connection, with up to MaxSessions commands in flight at once (each in
// its own session, as OpenSSH multiplexes them). The connection is made
// on first use, kept alive, and replaced when it dies. Commands without a
// pty or stdin go to long-lived shell sessions, one per session slot
// (ssh_shell.go), unless SSHConfig.NoShellSession.
type SSH struct {
	st         *sshSettings
	log        *slog.Logger
	clientCfg  *ssh.ClientConfig
	limit      *sshLimiter
	hostKeyLog sync.Once

	mu   sync.Mutex
	conn *sshConn
	dial *sshDial // the connect in progress, shared by concurrent Runs
	// life is cancelled by Close, abandoning an in-progress connect.
	life       context.Context
	cancelLife context.CancelFunc

	// shells are the connection's idle shell sessions (ssh_shell.go).
	shells shellPool
	// orphans are the shell sessions lost mid-program (ssh_orphans.go).
	orphans orphanSet

	dials        atomic.Int64
	sessions     atomic.Int64
	refused      atomic.Int64
	shellsOpened atomic.Int64
	programs     atomic.Int64
}

var _ Executor = (*SSH)(nil)

// SSHStats describes an SSH executor's work so far.
type SSHStats struct {
	Dials      int // connections established
	Reconnects int // connections established to replace an earlier one
	Sessions   int // channels opened: one per exec, one per shell session
	// ShellSessions are the shell sessions opened (counted in Sessions
	// too), Programs the commands sent to them, IdleShells those idle now.
	ShellSessions int
	Programs      int
	IdleShells    int
	Refused       int // session opens the server refused (its MaxSessions is lower)
	InUse         int // session slots held now
	MaxInUse      int // most session slots ever held at once
	Limit         int // effective session limit: MaxSessions, or lower once the server refused
}

// NewSSH validates cfg and returns an executor; it does not connect until
// the first Run. log may be nil.
func NewSSH(cfg SSHConfig, log *slog.Logger) (*SSH, error) {
	st, err := cfg.validate()
	if err != nil {
		return nil, err
	}
	s := &SSH{
		st:    st,
		log:   orDiscard(log).With("executor", "ssh", "target", st.who),
		limit: newSSHLimiter(st.cfg.MaxSessions),
	}
	s.life, s.cancelLife = context.WithCancel(context.Background())
	s.clientCfg = &ssh.ClientConfig{
		User: st.cfg.Username,
		Auth: st.auth,
		// dialConfig sets the HostKeyCallback of each handshake.
	}
	if w := HostKeyWarning(st.cfg); w != "" {
		s.log.Warn(w)
	}
	return s, nil
}

// Close drops the connection (failing commands still running on it) and
// abandons a connect in progress. A later Run connects again.
func (s *SSH) Close() error {
	s.mu.Lock()
	s.cancelLife()
	s.life, s.cancelLife = context.WithCancel(context.Background())
	s.dial = nil
	c := s.conn
	s.conn = nil
	s.mu.Unlock()
	s.shells.closeAll()
	if c != nil {
		c.kill()
	}
	return nil
}

// Stats reports counters for tests and benchmarks.
func (s *SSH) Stats() SSHStats {
	limit, inUse, maxInUse := s.limit.snapshot()
	dials := int(s.dials.Load())
	return SSHStats{
		Dials:         dials,
		Reconnects:    max(dials-1, 0),
		Sessions:      int(s.sessions.Load()),
		ShellSessions: int(s.shellsOpened.Load()),
		Programs:      int(s.programs.Load()),
		IdleShells:    s.shells.size(),
		Refused:       int(s.refused.Load()),
		InUse:         inUse,
		MaxInUse:      maxInUse,
		Limit:         limit,
	}
}
