package infinia

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"
)

// Start listens on addr (e.g. "127.0.0.1:0") and serves in the background:
// https with the self-signed certificate, or http with Options.Plain. A
// server listens on one address.
func (s *Server) Start(addr string) error {
	raw, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("infinia: listen %s: %w", addr, err)
	}
	if err := s.Serve(raw); err != nil {
		raw.Close()
		return err
	}
	return nil
}

// Serve serves on l in the background (Start does this for an address).
func (s *Server) Serve(l net.Listener) error {
	var cfg *tls.Config
	scheme := "http"
	if !s.opts.Plain {
		cert, err := s.certs.Get()
		if err != nil {
			return err
		}
		cfg = &tls.Config{
			Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12, NextProtos: []string{"http/1.1"},
			// Called once per completed handshake, resumed ones included:
			// the count shows whether a client reuses its connections.
			VerifyConnection: func(tls.ConnectionState) error { s.stats.handshakes.Add(1); return nil },
		}
		scheme = "https"
	}
	hs := &http.Server{
		Handler:           s,
		ConnContext:       connContext,
		ReadHeaderTimeout: 30 * time.Second,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelDebug),
	}
	s.lmu.Lock()
	switch {
	case s.closed:
		s.lmu.Unlock()
		return ErrServerClosed
	case s.hs != nil:
		s.lmu.Unlock()
		return errors.New("infinia: the server is already serving (" + s.url + ")")
	}
	s.hs = hs
	s.url = scheme + "://" + l.Addr().String()
	s.lmu.Unlock()
	var tl net.Listener = &trackingListener{Listener: l, srv: s}
	if cfg != nil {
		tl = tls.NewListener(tl, cfg)
	}
	go hs.Serve(tl)
	s.log.Info("infinia simulator listening", "url", s.URL())
	return nil
}

// trackingListener records accepted connections so that Restart can drop
// them and Stats can count them.
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
	l.srv.lmu.Lock()
	closed := l.srv.closed
	if !closed {
		l.srv.conns[tc] = struct{}{}
	}
	l.srv.lmu.Unlock()
	if closed {
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
	c.once.Do(func() {
		c.srv.lmu.Lock()
		delete(c.srv.conns, c)
		c.srv.lmu.Unlock()
	})
	return c.Conn.Close()
}

type connKey struct{}

// connContext puts a request's TCP connection into its context, for
// Faults.DropAfter.
func connContext(ctx context.Context, c net.Conn) context.Context {
	if tc, ok := c.(*tls.Conn); ok {
		c = tc.NetConn()
	}
	if tc, ok := c.(*trackedConn); ok {
		return context.WithValue(ctx, connKey{}, tc)
	}
	return ctx
}

// dropConn closes a request's connection without an answer.
func dropConn(ctx context.Context) {
	if tc, ok := ctx.Value(connKey{}).(*trackedConn); ok {
		tc.Close()
	}
}
