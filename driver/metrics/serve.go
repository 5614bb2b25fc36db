package metrics

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Server serves /metrics over plain HTTP.
type Server struct {
	srv  *http.Server
	addr net.Addr
	done chan struct{}
}

// Listen opens address (":9808", "127.0.0.1:9808", port 0 for any free
// port) and serves /metrics from m's registry until Stop.
func (m *Metrics) Listen(address string, log *slog.Logger) (*Server, error) {
	l, err := net.Listen("tcp", address)
	if err != nil {
		return nil, fmt.Errorf("--metrics-address %s: %w", address, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{
		// A failing collector must not hide the others.
		ErrorHandling: promhttp.ContinueOnError,
		// Bounds concurrent scrapes: a scrape storm must not starve CSI calls.
		MaxRequestsInFlight: 4,
		Timeout:             10 * time.Second,
	}))
	s := &Server{
		srv:  &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second},
		addr: l.Addr(),
		done: make(chan struct{}),
	}
	go func() {
		defer close(s.done)
		if err := s.srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("metrics endpoint stopped", "address", s.addr.String(), "error", err)
		}
	}()
	return s, nil
}

// Addr is the address actually listened on (port 0 resolved).
func (s *Server) Addr() net.Addr { return s.addr }

// Stop closes the endpoint, letting scrapes in progress finish until ctx ends.
func (s *Server) Stop(ctx context.Context) {
	if err := s.srv.Shutdown(ctx); err != nil {
		_ = s.srv.Close()
	}
	<-s.done
}
