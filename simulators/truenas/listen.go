package truenas

import (
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"
)

// listener is one address the server serves on.
type listener struct {
	addr net.Addr
	tls  bool
	http *http.Server
}

// Start listens on addr (e.g. "127.0.0.1:0") and serves in the background:
// https/wss when Options.TLS, else http/ws.
func (s *Server) Start(addr string) error { return s.listen(addr, s.opts.TLS) }

// StartTLS listens on addr and serves https/wss with the self-signed
// certificate (see CertPEM), whatever Options.TLS says.
func (s *Server) StartTLS(addr string) error { return s.listen(addr, true) }

func (s *Server) listen(addr string, useTLS bool) error {
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return ErrServerClosed
	}
	var cfg *tls.Config
	if useTLS {
		cert, err := s.certs.Get()
		if err != nil {
			return err
		}
		cfg = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12, NextProtos: []string{"http/1.1"}}
	}
	raw, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("truenas: listen %s: %w", addr, err)
	}
	var l net.Listener = &trackingListener{Listener: raw, srv: s}
	if cfg != nil {
		l = tls.NewListener(l, cfg)
	}
	hs := &http.Server{
		Handler:           s,
		ConnContext:       connContext,
		ReadHeaderTimeout: 30 * time.Second,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelDebug),
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		raw.Close()
		return ErrServerClosed
	}
	s.listeners = append(s.listeners, &listener{addr: raw.Addr(), tls: useTLS, http: hs})
	s.mu.Unlock()
	go hs.Serve(l)
	s.log.Info("truenas simulator listening", "addr", raw.Addr().String(), "tls", useTLS, "version", s.version.String())
	return nil
}

// Addr is the address of the first listener ("" before Start).
func (s *Server) Addr() string {
	if l := s.firstListener(func(*listener) bool { return true }); l != nil {
		return l.addr.String()
	}
	return ""
}

// URL is the base URL of the first listener, e.g. "http://127.0.0.1:8080"
// ("" before Start). The API lives under /api/v2.0, /api/current and
// /websocket.
func (s *Server) URL() string {
	return urlOf(s.firstListener(func(*listener) bool { return true }))
}

// PlainURL is the base URL of the first plain-text listener, TLSURL of the
// first TLS one ("" when there is none).
func (s *Server) PlainURL() string {
	return urlOf(s.firstListener(func(l *listener) bool { return !l.tls }))
}

// TLSURL: see PlainURL.
func (s *Server) TLSURL() string {
	return urlOf(s.firstListener(func(l *listener) bool { return l.tls }))
}

func (s *Server) firstListener(match func(*listener) bool) *listener {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, l := range s.listeners {
		if match(l) {
			return l
		}
	}
	return nil
}

func urlOf(l *listener) string {
	if l == nil {
		return ""
	}
	if l.tls {
		return "https://" + l.addr.String()
	}
	return "http://" + l.addr.String()
}
