package zfsssh

import (
	"context"
	"net"
	"sync"
	"time"

	"golang.org/x/crypto/ssh"
)

// sshConn is one authenticated SSH connection.
type sshConn struct {
	srv    *Server
	id     uint64
	nc     net.Conn
	user   *account
	ctx    context.Context
	cancel context.CancelFunc

	mu       sync.Mutex
	sessions int    // open session channels
	nextID   uint64 // session numbering
	wg       sync.WaitGroup
}

// handshakeTimeout bounds a client that connects and never authenticates.
const handshakeTimeout = 30 * time.Second

func (s *Server) handleConn(nc net.Conn) {
	defer s.wg.Done()
	nc.SetDeadline(time.Now().Add(handshakeTimeout))
	sc, chans, reqs, err := ssh.NewServerConn(nc, s.cfg)
	if err != nil {
		s.log.Debug("ssh handshake failed", "remote", nc.RemoteAddr().String(), "err", err)
		nc.Close()
		return
	}
	nc.SetDeadline(time.Time{})
	c := &sshConn{srv: s, id: s.connIDs.Add(1), nc: nc, user: s.users[sc.User()]}
	c.ctx, c.cancel = context.WithCancel(s.ctx)
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		sc.Close()
		c.cancel()
		return
	}
	s.conns[c] = struct{}{}
	s.mu.Unlock()
	s.stats.connections.Add(1)
	s.log.Debug("ssh connection", "conn", c.id, "user", c.user.name, "remote", nc.RemoteAddr().String())

	go c.globalRequests(reqs)
	for nch := range chans {
		c.openChannel(nch)
	}
	// The connection is gone: stop what its sessions run, then wait for them.
	c.cancel()
	c.wg.Wait()
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
	s.log.Debug("ssh connection closed", "conn", c.id)
}

// globalRequests answers connection-level requests the way OpenSSH does for
// the ones it does not implement: with a failure reply. A keepalive only
// needs an answer, so "keepalive@openssh.com" is answered like that too.
func (c *sshConn) globalRequests(reqs <-chan *ssh.Request) {
	for req := range reqs {
		if req.Type == "keepalive@openssh.com" {
			c.srv.stats.keepalives.Add(1)
		}
		if req.WantReply {
			req.Reply(false, nil)
		}
	}
}

// openChannel accepts session channels up to MaxSessions; one more is
// refused as OpenSSH refuses it ("administratively prohibited: open failed").
func (c *sshConn) openChannel(nch ssh.NewChannel) {
	if nch.ChannelType() != "session" {
		nch.Reject(ssh.UnknownChannelType, "unknown channel type")
		return
	}
	c.mu.Lock()
	if c.sessions >= c.srv.maxSess {
		c.mu.Unlock()
		c.srv.stats.sessionsRejected.Add(1)
		c.srv.log.Debug("session refused: MaxSessions reached", "conn", c.id, "max", c.srv.maxSess)
		nch.Reject(ssh.Prohibited, "open failed")
		return
	}
	c.sessions++
	c.nextID++
	id := c.nextID
	raiseMax(&c.srv.stats.maxInUse, int64(c.sessions))
	c.mu.Unlock()
	ch, reqs, err := nch.Accept()
	if err != nil {
		c.release()
		return
	}
	c.srv.stats.sessions.Add(1)
	c.wg.Add(1)
	go c.serveSession(id, ch, reqs)
}

func (c *sshConn) release() {
	c.mu.Lock()
	c.sessions--
	c.mu.Unlock()
}

// drop closes the TCP connection without a goodbye (Faults.DropAfter).
func (c *sshConn) drop() {
	c.srv.stats.dropped.Add(1)
	c.srv.log.Info("dropping connection (fault injection)", "conn", c.id)
	c.cancel()
	c.nc.Close()
}
