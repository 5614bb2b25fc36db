package zfs

import (
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/crypto/ssh"
)

// keepAliveMisses is how many intervals a keepalive may go unanswered
// before the connection is declared dead (ssh2's and OpenSSH's
// ServerAliveCountMax default).
const keepAliveMisses = 3

// sshConn is one established connection. It is never revived: once dead
// it is replaced by a fresh dial.
type sshConn struct {
	client *ssh.Client
	// open counts sessions open on this connection right now; a refusal
	// with n open tells us the server allows at most n.
	open atomic.Int32
	dead chan struct{}
	once sync.Once
}

func newSSHConn(client *ssh.Client) *sshConn {
	return &sshConn{client: client, dead: make(chan struct{})}
}

func (c *sshConn) alive() bool {
	select {
	case <-c.dead:
		return false
	default:
		return true
	}
}

// kill marks the connection dead and closes it, which fails every session
// still on it. Returns true for the call that did it.
func (c *sshConn) kill() bool {
	first := false
	c.once.Do(func() {
		first = true
		close(c.dead)
		_ = c.client.Close()
	})
	return first
}

// watch starts the goroutines that mark the connection dead when the
// server or network closes it and, if interval > 0, when keepalives stop
// being answered. They end with the connection.
func (c *sshConn) watch(interval time.Duration, log *slog.Logger) {
	go func() {
		err := c.client.Wait()
		if c.kill() {
			log.Info("ssh connection closed", "reason", sshErrText(err))
		}
	}()
	if interval <= 0 {
		return
	}
	go c.keepAlive(interval, log)
}

func (c *sshConn) keepAlive(interval time.Duration, log *slog.Logger) {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-c.dead:
			return
		case <-tick.C:
		}
		reply := make(chan error, 1)
		go func() {
			// OpenSSH answers this unknown request with a failure; any
			// answer at all proves the peer is alive.
			_, _, err := c.client.SendRequest("keepalive@openssh.com", true, nil)
			reply <- err
		}()
		timeout := time.NewTimer(keepAliveMisses * interval)
		select {
		case err := <-reply:
			timeout.Stop()
			if err != nil {
				if c.kill() {
					log.Warn("ssh keepalive failed; reconnecting on next command", "error", err.Error())
				}
				return
			}
		case <-timeout.C:
			// A half-open TCP connection never errors: only silence shows it.
			if c.kill() {
				log.Warn("ssh keepalive unanswered; reconnecting on next command", "waited", keepAliveMisses*interval)
			}
			return
		case <-c.dead:
			timeout.Stop()
			return
		}
	}
}

func sshErrText(err error) string {
	if err == nil {
		return "closed"
	}
	return err.Error()
}

// newSession opens a session channel, giving up when the connection is
// found dead meanwhile. x/crypto's NewSession can wait forever for the
// open's answer when the connection's reader ends while the open is being
// sent (its channel was added after the others were dropped); the watch
// goroutine's kill still comes, so waiting for it bounds the open. The
// abandoned open's goroutine ends with the process at worst.
func (c *sshConn) newSession() (*ssh.Session, error) {
	type opened struct {
		s   *ssh.Session
		err error
	}
	got := make(chan opened, 1)
	go func() {
		s, err := c.client.NewSession()
		got <- opened{s, err}
	}()
	select {
	case o := <-got:
		return o.s, o.err
	case <-c.dead:
		return nil, errors.New("ssh: the connection closed while a session was being opened")
	}
}
