package truenas

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"

	"github.com/switchyard-csi/switchyard/simulators/selfsigned"
	"github.com/switchyard-csi/switchyard/simulators/truenas/census"
	"github.com/switchyard-csi/switchyard/simulators/truenas/middleware"
	"github.com/switchyard-csi/switchyard/simulators/zfsmodel"
	"github.com/switchyard-csi/switchyard/simulators/zfsssh"
)

// ErrServerClosed is returned by Start and StartTLS after Close.
var ErrServerClosed = errors.New("truenas: server closed")

// Server is the simulated middleware. Create it with New, then Start
// and/or StartTLS.
type Server struct {
	opts     Options
	version  middleware.Version
	log      *slog.Logger
	reg      *middleware.Registry
	model    *zfsmodel.Model
	ownModel bool
	svc      services
	auth     *authStore
	jobs     *jobManager
	faults   *Faults
	rec      recorder
	stats    counters
	hostID   string
	// svcState is the service.* table (methods_service.go).
	svcState *serviceState
	// census is what the release really has (nil for a release without
	// a digest): an unknown method's error names its service as known
	// when the release has it.
	census *census.Census
	certs  selfsigned.Store

	authEpoch atomic.Uint64 // bumped by ExpireSessions

	mu        sync.Mutex
	closed    bool
	gen       *generation
	listeners []*listener
	conns     map[*trackedConn]struct{}
	sessions  map[*session]struct{} // WebSocket sessions, for job events
	ssh       []*zfsssh.Server
	// busy counts running calls, jobs and WebSocket connection handlers;
	// Close waits for it.
	busy sync.WaitGroup
	// workers run the WebSocket calls (workers.go).
	workers *callWorkers
}

// New builds a server on the model in o.StateDir (or o.Model) with the
// methods of o.Version registered; it does not listen yet.
func New(o Options) (*Server, error) {
	if err := o.validate(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(o.StateDir, 0o755); err != nil {
		return nil, fmt.Errorf("truenas: state directory: %w", err)
	}
	s := &Server{
		opts: o, version: o.Version, log: o.Logger, reg: middleware.NewRegistry(),
		faults: newFaults(o.FaultSeed), gen: newGeneration(),
		conns: map[*trackedConn]struct{}{}, sessions: map[*session]struct{}{},
		workers: newCallWorkers(max(1, o.MaxConcurrentCalls)),
	}
	s.rec.max = o.MaxRecords
	s.certs.Dir, s.certs.Name = filepath.Join(o.StateDir, "tls"), "truenas"
	s.certs.Hosts = []string{"127.0.0.1", "::1", "localhost", o.Hostname}
	s.jobs = newJobManager(s)
	var err error
	if s.auth, err = newAuthStore(filepath.Join(o.StateDir, "auth.json"), o.Users, o.APIKeys); err != nil {
		return nil, err
	}
	if s.hostID, err = loadHostID(filepath.Join(o.StateDir, "host_id")); err != nil {
		return nil, err
	}
	s.model = o.Model
	if s.model == nil {
		s.model, err = zfsmodel.Open(zfsmodel.Options{StateDir: filepath.Join(o.StateDir, "zfs"), Pools: o.Pools})
		if err != nil {
			return nil, fmt.Errorf("truenas: %w", err)
		}
		s.ownModel = true
	}
	if err := mountUnderMnt(s.model); err != nil {
		_ = s.closeModel()
		return nil, err
	}
	s.census, _ = census.Load(s.version.Release())
	if err := s.registerBuiltins(); err != nil {
		_ = s.closeModel()
		return nil, err
	}
	if err := s.registerServices(); err != nil {
		_ = s.closeModel()
		return nil, err
	}
	s.alignParams()
	if o.TLS {
		if _, err := s.certs.Get(); err != nil {
			_ = s.closeModel()
			return nil, err
		}
	}
	return s, nil
}

// Registry is the method registry: tests may add methods to it.
func (s *Server) Registry() *middleware.Registry { return s.reg }

// Model is the ZFS model the services act on.
func (s *Server) Model() *zfsmodel.Model { return s.model }

// Version is the release simulated.
func (s *Server) Version() middleware.Version { return s.version }

// CertPEM is the PEM of the self-signed certificate the TLS listeners
// present (generated on first use and kept in StateDir/tls), for clients
// to trust.
func (s *Server) CertPEM() []byte {
	if _, err := s.certs.Get(); err != nil {
		s.log.Error("TLS certificate", "error", err)
		return nil
	}
	return s.certs.PEM()
}

// ExpireSessions makes every logged-in WebSocket session unauthenticated:
// their next call fails with ENOTAUTHENTICATED until they log in again,
// as when middlewared's session lifetime ends.
func (s *Server) ExpireSessions() { s.authEpoch.Add(1) }

// Restart simulates a middlewared restart: every open connection is
// dropped without an answer, every in-flight call and job is cancelled
// and forgotten (job ids start from 1 again); the listeners, the ZFS model
// and the services' objects stay.
func (s *Server) Restart() {
	s.mu.Lock()
	old := s.gen
	s.gen = newGeneration()
	conns := make([]*trackedConn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	// The jobs are forgotten and the restart counted before any client can
	// see its connection drop: a client that reconnects at once must find
	// the new generation whole (a late reset would cancel the jobs it just
	// started, and a late count would miss a restart the client saw).
	s.jobs.reset()
	s.stats.restarts.Add(1)
	old.cancel()
	for _, c := range conns {
		c.Close()
	}
	s.log.Info("truenas simulator restarted", "dropped_connections", len(conns))
}

// begin registers a running call, job or connection handler; false once
// the server is closed.
func (s *Server) begin() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.busy.Add(1)
	return true
}

func (s *Server) end() { s.busy.Done() }

// generation returns the current generation.
func (s *Server) generation() *generation {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gen
}

// Close stops the listeners and SSH servers, drops every connection, waits
// for in-flight calls and jobs to return (handlers must honour their
// context), and closes the model if the server opened it. The state stays
// in StateDir.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	g := s.gen
	ls := s.listeners
	sshs := s.ssh
	conns := make([]*trackedConn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	g.cancel()
	var errs []error
	for _, l := range ls {
		if err := l.http.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
			errs = append(errs, err)
		}
	}
	for _, c := range conns {
		c.Close()
	}
	s.jobs.reset()
	s.busy.Wait()
	s.workers.close()
	for _, ss := range sshs {
		errs = append(errs, ss.Close())
	}
	errs = append(errs, s.svc.close())
	errs = append(errs, s.closeModel())
	return errors.Join(errs...)
}

func (s *Server) closeModel() error {
	if s.ownModel {
		return s.model.Close()
	}
	return nil
}

// CertFile is where the certificate's PEM is kept (StateDir/tls/cert.pem).
func (s *Server) CertFile() string { return s.certs.CertFile() }
