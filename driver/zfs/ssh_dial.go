package zfs

import (
	"context"
	"errors"
	"net"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"
)

// Backoff between connect attempts: quick enough to ride out an sshd
// restart, slow enough not to hammer a host that is down.
const (
	dialBackoffMin = 100 * time.Millisecond
	dialBackoffMax = 2 * time.Second
)

// sshDial is one connect in progress; every Run that needs a connection
// meanwhile waits for the same result.
type sshDial struct {
	done chan struct{}
	conn *sshConn
	err  error
}

// connect returns a live connection, dialing if there is none. The dial
// runs on its own (bounded by DialTimeout and Close) so a caller giving up
// does not fail the others waiting for it.
func (s *SSH) connect(ctx context.Context) (*sshConn, error) {
	s.mu.Lock()
	if c := s.conn; c != nil && c.alive() {
		s.mu.Unlock()
		return c, nil
	}
	d := s.dial
	if d == nil {
		d = &sshDial{done: make(chan struct{})}
		s.dial = d
		go s.dialLoop(s.life, d)
	}
	s.mu.Unlock()
	select {
	case <-d.done:
		return d.conn, d.err
	case <-ctx.Done():
		return nil, cancelledError("ssh "+s.st.who+": connecting", false, ctx.Err())
	}
}

// dialLoop connects with backoff until it succeeds, DialTimeout passes,
// Close is called, or the failure is one retrying cannot fix.
func (s *SSH) dialLoop(life context.Context, d *sshDial) {
	ctx, cancel := context.WithTimeout(life, s.st.cfg.DialTimeout)
	defer cancel()
	var (
		c   *sshConn
		err error
	)
	delay := dialBackoffMin
	for {
		c, err = s.dialOnce(ctx)
		if err == nil || errors.Is(err, ErrAuth) {
			break
		}
		s.log.Debug("ssh connect failed; retrying", "error", err.Error(), "in", delay)
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
		case <-t.C:
		}
		if ctx.Err() != nil {
			break
		}
		delay = min(2*delay, dialBackoffMax)
	}
	if err == nil {
		c.watch(s.st.cfg.KeepAlive, s.log)
	}

	s.mu.Lock()
	if s.dial == d {
		s.dial = nil
		if err == nil {
			s.conn = c
			s.dials.Add(1)
		}
	} else {
		// Close ran while we connected: nobody may use this connection,
		// and a "canceled" dial error would only confuse.
		if err == nil {
			c.kill()
		}
		c, err = nil, newExecutorError(ErrUnreachable, "ssh %s: executor closed while connecting", s.st.who)
	}
	s.mu.Unlock()
	if err == nil && s.dials.Load() > 1 {
		s.log.Info("ssh reconnected")
	}
	d.conn, d.err = c, err
	close(d.done)
}

// dialOnce makes one TCP connection and SSH handshake.
func (s *SSH) dialOnce(ctx context.Context) (*sshConn, error) {
	cfg, err := s.dialConfig()
	if err != nil {
		return nil, err
	}
	var dialer net.Dialer
	raw, err := dialer.DialContext(ctx, "tcp", s.st.addr)
	if err != nil {
		return nil, newExecutorError(ErrUnreachable, "ssh %s: cannot connect to %s: %v", s.st.who, s.st.addr, err)
	}
	// The handshake does not watch ctx: a deadline and an AfterFunc stop a
	// server that accepts TCP but never speaks SSH.
	if dl, ok := ctx.Deadline(); ok {
		_ = raw.SetDeadline(dl)
	}
	stop := context.AfterFunc(ctx, func() { _ = raw.Close() })
	sc, chans, reqs, err := ssh.NewClientConn(raw, s.st.addr, cfg)
	if !stop() && err == nil {
		_ = sc.Close()
		err = ctx.Err()
	}
	if err != nil {
		_ = raw.Close()
		return nil, s.handshakeError(err, cfg)
	}
	_ = raw.SetDeadline(time.Time{})
	return newSSHConn(ssh.NewClient(sc, chans, reqs)), nil
}

// handshakeError sorts a failed handshake into ErrHostKey (with ErrAuth),
// ErrAuth (credentials: retrying will not help) or ErrUnreachable.
func (s *SSH) handshakeError(err error, cfg *ssh.ClientConfig) error {
	var refused *sshHostKeyRefused
	switch {
	case errors.As(err, &refused):
		return hostKeyError("ssh %s: %s", s.st.who, refused.Error())
	case len(cfg.HostKeyAlgorithms) > 0 && strings.Contains(err.Error(), "no common algorithm for host key"):
		// Only the key types known_hosts lists for the host were asked for.
		return hostKeyError("ssh %s: the host offers none of the key types sshConnection.knownHosts %s lists for it (%s); "+
			"refusing to connect (no credentials were sent). If the host's keys changed on purpose, replace its lines in the file",
			s.st.who, s.st.knownHosts, strings.Join(cfg.HostKeyAlgorithms, ", "))
	case strings.Contains(err.Error(), "unable to authenticate"),
		strings.Contains(err.Error(), "too many authentication"):
		// x/crypto has no typed error for this; its text is stable.
		return sshAuthFailed(s.st.who, s.st.methods)
	default:
		return newExecutorError(ErrUnreachable, "ssh %s: handshake with %s failed: %v", s.st.who, s.st.addr, err)
	}
}
