package synology

import (
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/switchyard-csi/switchyard/simulators/kernel"
	"github.com/switchyard-csi/switchyard/simulators/selfsigned"
)

// Defaults of a fresh simulator.
const (
	DefaultUser       = "admin"
	DefaultPassword   = "synology"
	DefaultVolume     = "/volume1"
	DefaultVolumeSize = int64(1) << 40
)

// Options configure a Server.
type Options struct {
	// StateDir holds state.json, the LUN files, the shared folders and the
	// TLS certificate. Required.
	StateDir string
	// Plain serves http instead of https.
	Plain bool
	// Users are the DSM accounts (name → password); nil: admin/synology.
	Users map[string]string
	// Volumes are the storage volumes of a fresh StateDir; nil: /volume1
	// of 1 TiB on btrfs.
	Volumes []Volume
	// SessionTTL ends a session this long after its last use (DSM's
	// default idle timeout is 15 minutes); 0 means 15 minutes.
	SessionTTL time.Duration
	// DeleteDelay is how long a deleted LUN stays listed (DSM deletes in
	// the background); 0 means 200 ms, negative deletes at once.
	DeleteDelay time.Duration
	// Kernel, when set, serves mapped LUNs over iSCSI (LIO), shares with
	// NFS rules over nfsd and the other shares over samba; Owner names
	// this simulator's objects there ("synology" by default), Portals are
	// the iSCSI portals (default 0.0.0.0:3260).
	Kernel  *kernel.Reconciler
	Owner   string
	Portals []kernel.Portal
	// Logger receives request logs (never passwords or sids).
	Logger *slog.Logger
	// Latency delays every answer (outside the NAS's lock), for
	// benchmarks against a slow NAS.
	Latency time.Duration
}

// Volume seeds a storage volume.
type Volume struct {
	Path   string // "/volume1"
	Size   int64
	FSType string // "btrfs" (default) or "ext4"
}

// Server is the simulated DSM Web API.
type Server struct {
	opts  Options
	log   *slog.Logger
	store store
	certs selfsigned.Store
	now   func() time.Time

	mu       sync.Mutex // guards st, sessions, pending and pendingSeq
	st       *state
	sessions map[string]*session
	// pending is the newest committed state (JSON), pendingSeq counts
	// commits; flush writes it under saveMu, writtenSeq is what is on disk.
	pending    []byte
	pendingSeq uint64
	saveMu     sync.Mutex
	writtenSeq atomic.Uint64

	requests atomic.Int64
	// beforeCall, when set, runs before each API call is checked and
	// served (tests: a session lost in the middle of a driver's call).
	beforeCall atomic.Pointer[func(api, method string)]

	lmu    sync.Mutex
	hs     *http.Server
	url    string
	closed bool
}

type session struct {
	user     string
	name     string // the session parameter of login
	lastUsed time.Time
}

// New opens (or seeds) the simulator on o.StateDir; it does not listen yet.
func New(o Options) (*Server, error) {
	if o.StateDir == "" {
		return nil, errors.New("synology: StateDir is required")
	}
	if o.Users == nil {
		o.Users = map[string]string{DefaultUser: DefaultPassword}
	}
	if o.SessionTTL == 0 {
		o.SessionTTL = 15 * time.Minute
	}
	if o.DeleteDelay == 0 {
		o.DeleteDelay = 200 * time.Millisecond
	}
	if o.Owner == "" {
		o.Owner = "synology"
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	for _, d := range []string{o.StateDir, filepath.Join(o.StateDir, "luns"), filepath.Join(o.StateDir, "snapshots")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, fmt.Errorf("synology: state directory: %w", err)
		}
	}
	s := &Server{opts: o, log: o.Logger, store: store{dir: o.StateDir}, now: time.Now, sessions: map[string]*session{}}
	s.certs.Dir, s.certs.Name = filepath.Join(o.StateDir, "tls"), "synology-simulator"
	s.certs.Hosts = []string{"127.0.0.1", "::1", "localhost"}
	st, ok, err := s.store.load()
	if err != nil {
		return nil, err
	}
	if !ok {
		st = &state{NextLunID: 1, NextTgtID: 1, NextSnap: 1, NFS: nfsService{Enabled: true, EnabledV4: true, MinorVer: 1}}
		vols := o.Volumes
		if vols == nil {
			vols = []Volume{{Path: DefaultVolume, Size: DefaultVolumeSize}}
		}
		for _, v := range vols {
			if v.FSType == "" {
				v.FSType = "btrfs"
			}
			st.Volumes = append(st.Volumes, &volume{Path: v.Path, Size: v.Size, FSType: v.FSType})
		}
		if err := s.store.save(st); err != nil {
			return nil, err
		}
	}
	s.st = st
	if !o.Plain {
		if _, err := s.certs.Get(); err != nil {
			return nil, err
		}
	}
	if err := s.syncKernel(); err != nil {
		return nil, err
	}
	return s, nil
}

// Start listens on addr ("127.0.0.1:0") and serves in the background.
func (s *Server) Start(addr string) error {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("synology: listen %s: %w", addr, err)
	}
	scheme := "http"
	if !s.opts.Plain {
		cert, err := s.certs.Get()
		if err != nil {
			l.Close()
			return err
		}
		l = tls.NewListener(l, &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})
		scheme = "https"
	}
	hs := &http.Server{Handler: s, ReadHeaderTimeout: 30 * time.Second, ErrorLog: slog.NewLogLogger(s.log.Handler(), slog.LevelDebug)}
	s.lmu.Lock()
	if s.closed || s.hs != nil {
		s.lmu.Unlock()
		l.Close()
		return errors.New("synology: server closed or already serving")
	}
	s.hs, s.url = hs, scheme+"://"+l.Addr().String()
	s.lmu.Unlock()
	go hs.Serve(l)
	return nil
}

// URL is "https://127.0.0.1:<port>" ("" before Start).
func (s *Server) URL() string {
	s.lmu.Lock()
	defer s.lmu.Unlock()
	return s.url
}

// CertPEM is the self-signed certificate the server presents (nil when
// Plain).
func (s *Server) CertPEM() []byte {
	if s.opts.Plain {
		return nil
	}
	return s.certs.PEM()
}

// ExpireSessions ends every session at once, as DSM does after its idle
// timeout: the next call with an old sid gets 106 (session timeout).
func (s *Server) ExpireSessions() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, ss := range s.sessions {
		ss.lastUsed = time.Time{}
	}
}

// BeforeCall sets fn to run before each Web API call is checked and
// served, outside the NAS's lock (nil: none). Tests use it to change the
// NAS in the middle of a driver's call, e.g. ExpireSessions after the LUN
// of a CreateVolume was made and before its target is.
func (s *Server) BeforeCall(fn func(api, method string)) {
	if fn == nil {
		s.beforeCall.Store(nil)
		return
	}
	s.beforeCall.Store(&fn)
}

// SetPassword changes (or adds) an account's password.
func (s *Server) SetPassword(user, password string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.opts.Users[user] = password
}

// Close stops listening and writes the last changes; the state stays in
// StateDir.
func (s *Server) Close() error {
	s.lmu.Lock()
	if s.closed {
		s.lmu.Unlock()
		return nil
	}
	s.closed = true
	hs := s.hs
	s.lmu.Unlock()
	var err error
	if hs != nil {
		err = hs.Close()
	}
	if ferr := s.flushAll(); ferr != nil && err == nil {
		err = fmt.Errorf("synology: saving state: %w", ferr)
	}
	return err
}

// Requests is the number of Web API requests served so far.
func (s *Server) Requests() int64 { return s.requests.Load() }

// LUNPath is the data file of the LUN with this uuid (for tests and the
// lab).
func (s *Server) LUNPath(uuid string) string { return s.store.lunFile(uuid) }

// ShareDir is the directory of a shared folder.
func (s *Server) ShareDir(volPath, name string) string { return s.store.shareDir(volPath, name) }

// newUUID is a random RFC 4122 version 4 UUID.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

func newSID() string {
	var b [24]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
