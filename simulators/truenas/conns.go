package truenas

import (
	"context"
	"crypto/tls"
	"net"
	"sync"
)

// trackingListener records every accepted connection so that Restart and
// Close can drop them, WebSocket ones included (net/http forgets a
// connection once it is hijacked).
type trackingListener struct {
	net.Listener
	srv *Server
}

func (l *trackingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	tc := &trackedConn{Conn: c, srv: l.srv}
	if !l.srv.trackConn(tc) {
		c.Close()
		return nil, net.ErrClosed
	}
	l.srv.stats.connections.Add(1)
	return tc, nil
}

// trackedConn is an accepted TCP connection.
type trackedConn struct {
	net.Conn
	srv  *Server
	once sync.Once
}

func (c *trackedConn) Close() error {
	c.once.Do(func() { c.srv.untrackConn(c) })
	return c.Conn.Close()
}

func (s *Server) trackConn(c *trackedConn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.conns[c] = struct{}{}
	return true
}

func (s *Server) untrackConn(c *trackedConn) {
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
}

type connKey struct{}

// connContext puts the request's TCP connection in its context so that a
// transport can drop it (Faults.DropAfter).
func connContext(ctx context.Context, c net.Conn) context.Context {
	if tc, ok := c.(*tls.Conn); ok {
		c = tc.NetConn()
	}
	if tc, ok := c.(*trackedConn); ok {
		return context.WithValue(ctx, connKey{}, tc)
	}
	return ctx
}

// dropConn closes the TCP connection of a request without an answer.
func dropConn(ctx context.Context) {
	if tc, ok := ctx.Value(connKey{}).(*trackedConn); ok {
		tc.srv.stats.dropped.Add(1)
		tc.Close()
	}
}
