package infinia

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/switchyard-csi/switchyard/simulators/selfsigned"
)

// ErrServerClosed is returned by Start after Close.
var ErrServerClosed = errors.New("infinia: server closed")

// Server is the simulated Infinia REST API. Create it with New, then
// Start it.
type Server struct {
	opts   Options
	log    *slog.Logger
	store  store
	target Target
	faults *Faults
	stats  counters
	certs  selfsigned.Store
	now    func() time.Time // the clock of token issue and expiry (tests replace it)

	key    atomic.Pointer[[]byte] // the JWT signing key; replaced to forget tokens
	tokens tokenCache             // the last token verified with key

	mu sync.Mutex // guards st and j
	st *state
	j  *journal // the changes since the snapshot (journal.go)

	lmu      sync.Mutex // guards the fields below
	closed   bool
	hs       *http.Server
	url      string
	conns    map[*trackedConn]struct{}
	done     chan struct{} // closed by Close: ends latency sleeps
	inflight sync.WaitGroup
}

// New opens the simulator on o.StateDir (seeding it on first use); it
// does not listen yet.
func New(o Options) (*Server, error) {
	if err := o.validate(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(o.StateDir, 0o755); err != nil {
		return nil, fmt.Errorf("infinia: state directory: %w", err)
	}
	s := &Server{
		opts: o, log: o.Logger, store: store{dir: o.StateDir}, target: o.Target,
		faults: newFaults(o.FaultSeed), now: time.Now,
		conns: map[*trackedConn]struct{}{}, done: make(chan struct{}),
	}
	s.certs.Dir, s.certs.Name = filepath.Join(o.StateDir, "tls"), "infinia-simulator"
	s.certs.Hosts = []string{"127.0.0.1", "::1", "localhost"}
	s.stats.init()
	s.rotateKey()
	st, ok, err := s.store.load()
	if err != nil {
		return nil, err
	}
	if !ok {
		if st, err = newState(o.Seed); err != nil {
			return nil, err
		}
	}
	replayed, err := s.store.replay(st)
	if err != nil {
		return nil, err
	}
	// A new tree or a replayed journal becomes the snapshot, then the
	// journal starts empty (in this order: see journal.go).
	if !ok || replayed {
		if err = s.store.save(st); err != nil {
			return nil, err
		}
	}
	if s.j, err = s.store.openJournal(); err != nil {
		return nil, err
	}
	if err := s.store.ensureData(st); err != nil {
		s.j.close()
		return nil, err
	}
	s.st = st
	if !o.Plain {
		if _, err := s.certs.Get(); err != nil {
			s.j.close()
			return nil, err
		}
	}
	return s, nil
}

// rotateKey makes a new JWT signing key: every token issued so far stops
// verifying (401).
func (s *Server) rotateKey() {
	k := randomBytes(32)
	s.key.Store(&k)
}

// ExpireTokens makes every issued token invalid at once (the next call
// with one is 401), as when tokens expire under a client.
func (s *Server) ExpireTokens() {
	s.rotateKey()
	s.log.Info("infinia simulator: tokens expired")
}

// Restart simulates a restart of the REST service: every open connection
// is dropped without an answer and every issued token is forgotten; the
// listener and the object tree stay.
func (s *Server) Restart() {
	s.rotateKey()
	s.lmu.Lock()
	conns := make([]*trackedConn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.lmu.Unlock()
	for _, c := range conns {
		c.Close()
	}
	s.stats.restarts.Add(1)
	s.log.Info("infinia simulator restarted", "dropped_connections", len(conns))
}

// URL is the base URL, "https://127.0.0.1:<port>" (http with
// Options.Plain); "" before Start. The API is under /redapi/v1.
func (s *Server) URL() string {
	s.lmu.Lock()
	defer s.lmu.Unlock()
	return s.url
}

// CertPEM is the PEM of the self-signed certificate the server presents,
// for clients to trust (nil with Options.Plain). It is also its own CA.
func (s *Server) CertPEM() []byte {
	if s.opts.Plain {
		return nil
	}
	return s.certs.PEM()
}

// DataPath is the data file of the volume with this uuid.
func (s *Server) DataPath(uuid string) string { return s.store.dataPath(uuid) }

// Close stops listening, drops every connection and waits for the calls in
// flight. The state stays in StateDir.
func (s *Server) Close() error {
	s.lmu.Lock()
	if s.closed {
		s.lmu.Unlock()
		return nil
	}
	s.closed = true
	close(s.done)
	hs := s.hs
	conns := make([]*trackedConn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.lmu.Unlock()
	var err error
	if hs != nil {
		err = hs.Close()
	}
	for _, c := range conns {
		c.Close()
	}
	s.inflight.Wait()
	s.mu.Lock()
	if jerr := s.j.close(); err == nil {
		err = jerr
	}
	s.mu.Unlock()
	return err
}

// enter registers a request in flight; false once the server is closed.
func (s *Server) enter() bool {
	s.lmu.Lock()
	defer s.lmu.Unlock()
	if s.closed {
		return false
	}
	s.inflight.Add(1)
	return true
}

func (s *Server) leave() { s.inflight.Done() }

// sleep waits d unless the server closes first.
func (s *Server) sleep(d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-s.done:
	}
}
