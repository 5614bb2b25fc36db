package zfsssh

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/switchyard-csi/switchyard/simulators/kernel"
)

// Host is the ZFS host behind the shell: *zfsmodel.Model satisfies it. The
// server depends on this interface only, so it can be tested with a fake.
type Host interface {
	// ZFS runs "zfs <args>" and returns its exit code.
	ZFS(args []string, stdin io.Reader, stdout, stderr io.Writer) int
	// Zpool runs "zpool <args>" and returns its exit code.
	Zpool(args []string, stdin io.Reader, stdout, stderr io.Writer) int
	// ZvolPath is the file behind /dev/zvol/<dataset>.
	ZvolPath(dataset string) (file string, ok bool)
	// HostPath is the real directory for a path inside a mounted dataset.
	HostPath(path string) (dir string, ok bool)
}

// Uname is what uname reports.
type Uname struct {
	System  string // uname -s; default "Linux"
	Release string // uname -r; default "6.1.0-28-amd64"
}

// Options configure a Server.
type Options struct {
	Host  Host            // required
	Users map[string]User // login name -> credentials; at least one
	// HostKey is the server's key; nil uses one ed25519 key generated once
	// per process (see processKey), or the one saved in StateDir.
	HostKey ssh.Signer
	// MaxSessions is the per-connection limit of concurrent sessions, like
	// OpenSSH's MaxSessions (default 10). Opening one more is refused.
	MaxSessions int
	// StateDir keeps the LIO and nvmet models and the in-memory files across
	// New/Close. Empty: nothing persists.
	StateDir string
	Hostname string // default "zfs-sim"
	Uname    Uname
	// Paths maps the absolute program paths the shell accepts to a command
	// (see DefaultPaths, which is used when Paths is nil). Bare names are
	// found through PATH (/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin).
	Paths map[string]string
	// Files seeds in-memory files (path -> content), e.g. the marker
	// /var/run/nvmet-config-loaded that drivers test for.
	Files map[string]string
	// Dynamic, when set, is asked before every program runs for the
	// in-memory files that exist below DynamicRoot now (path -> initial
	// content): a tree that follows state kept elsewhere, such as the
	// SCST sysfs of a TrueNAS, whose devices are its iSCSI extents. A
	// file that stays keeps what was written to it; a path ending in "/"
	// is a directory.
	DynamicRoot string
	Dynamic     func() map[string]string
	// NVMetPorts are the nvmet ports that exist when the state has none
	// (configured ports normally pre-exist on a host).
	NVMetPorts []NVMetPort
	// FaultSeed seeds the random error rates (default 1), for reproducible runs.
	FaultSeed uint64
	// MaxRecords bounds Commands() (default 10000, the most recent are kept).
	MaxRecords int
	Logger     *slog.Logger
	// Kernel, when set, makes the modelled targets and shares real: the
	// nvmet and LIO objects and sharenfs/sharesmb follow every command that
	// may change them (see package kernel), at New too; Close removes them.
	// Only where the kernel has the target modules (the lab's storage VM).
	Kernel *kernel.Reconciler
	// KernelOwner names this server's objects in Kernel (default
	// "zfsssh-<Hostname>"); servers sharing a kernel need distinct ones.
	KernelOwner string
}

// ErrServerClosed is returned by Serve after Close.
var ErrServerClosed = errors.New("zfsssh: server closed")

// Server is the SSH server. Create it with New.
type Server struct {
	host     Host
	log      *slog.Logger
	cfg      *ssh.ServerConfig
	signer   ssh.Signer
	users    map[string]*account
	paths    map[string]string
	maxSess  int
	hostname string

	dynamicRoot string
	dynamic     func() map[string]string
	uname       Uname

	fs          *vfs
	kernel      *kernel.Reconciler
	kernelOwner string
	kernelMu    sync.Mutex // one kernel sync at a time, so the last one sees the last change
	lio         *lioModel
	nvmet       *nvmetModel
	faults      *Faults
	stats       counters
	rec         recorder
	procs       procTable

	connIDs atomic.Uint64 // numbers connections from 1

	ctx    context.Context
	cancel context.CancelFunc

	mu        sync.Mutex
	listeners map[net.Listener]struct{}
	conns     map[*sshConn]struct{}
	addr      net.Addr
	closed    bool
	wg        sync.WaitGroup
}

// New builds a server; call Serve, Start or ListenAndServe to accept connections.
func New(o Options) (*Server, error) {
	if o.Host == nil {
		return nil, errors.New("zfsssh: Options.Host is required")
	}
	users, err := buildAccounts(o.Users)
	if err != nil {
		return nil, err
	}
	s := &Server{
		host:     o.Host,
		log:      o.Logger,
		users:    users,
		paths:    o.Paths,
		maxSess:  o.MaxSessions,
		hostname: o.Hostname,

		dynamicRoot: o.DynamicRoot,
		dynamic:     o.Dynamic,
		uname:       o.Uname,
		faults:      newFaults(o.FaultSeed),
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.maxSess <= 0 {
		s.maxSess = 10
	}
	if s.hostname == "" {
		s.hostname = "zfs-sim"
	}
	if s.uname.System == "" {
		s.uname.System = "Linux"
	}
	if s.uname.Release == "" {
		s.uname.Release = "6.1.0-28-amd64"
	}
	if s.paths == nil {
		s.paths = DefaultPaths()
	}
	for p, name := range s.paths {
		if lookupProgram(name) == nil {
			return nil, fmt.Errorf("zfsssh: Options.Paths[%q] = %q: no such command (known: %v)", p, name, programNames())
		}
	}
	s.rec.max = o.MaxRecords
	if s.rec.max <= 0 {
		s.rec.max = 10000
	}
	s.signer = o.HostKey
	if s.signer == nil {
		var err error
		if s.signer, err = hostKey(o.StateDir); err != nil {
			return nil, err
		}
	}
	var filesState, lioState, nvmetState string
	if o.StateDir != "" {
		if err := os.MkdirAll(o.StateDir, 0o755); err != nil {
			return nil, fmt.Errorf("zfsssh: state directory: %w", err)
		}
		filesState = filepath.Join(o.StateDir, "files.json")
		lioState = filepath.Join(o.StateDir, "lio.json")
		nvmetState = filepath.Join(o.StateDir, "nvmet.json")
	}
	if s.fs, err = newVFS(o.Host, filesState); err != nil {
		return nil, fmt.Errorf("zfsssh: %w", err)
	}
	s.seedFiles(o.Files)
	if s.lio, err = loadLIO(lioState); err != nil {
		return nil, fmt.Errorf("zfsssh: %w", err)
	}
	if s.nvmet, err = loadNVMet(nvmetState, o.NVMetPorts, s.uname.Release); err != nil {
		return nil, fmt.Errorf("zfsssh: %w", err)
	}
	s.kernel, s.kernelOwner = o.Kernel, o.KernelOwner
	if s.kernelOwner == "" {
		s.kernelOwner = "zfsssh-" + s.hostname
	}
	if err := s.syncKernel(); err != nil {
		return nil, fmt.Errorf("zfsssh: serving the saved targets and shares: %w", err)
	}
	s.cfg = &ssh.ServerConfig{
		PasswordCallback:  s.passwordAuth,
		PublicKeyCallback: s.publicKeyAuth,
		// What Debian 12's sshd announces; some clients log it.
		ServerVersion: "SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u3",
	}
	s.cfg.AddHostKey(s.signer)
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.listeners = map[net.Listener]struct{}{}
	s.conns = map[*sshConn]struct{}{}
	return s, nil
}

// processKey is the host key of every server made without one (and without
// a key saved in its state directory). The
// driver trusts the first key it sees at an address and refuses another
// one there later, so servers made in turn by one test process (which may
// get a port an earlier one had) must not each bring their own key.
var processKey = sync.OnceValues(func() (ed25519.PrivateKey, error) {
	_, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("zfsssh: generating a host key: %w", err)
	}
	return key, nil
})

// seedFiles creates the standard directories, the program files and the
// Options.Files.
func (s *Server) seedFiles(files map[string]string) {
	for _, d := range []string{"/bin", "/dev", "/dev/zvol", "/etc", "/etc/target", "/etc/nvmet", "/home", "/root",
		"/run", "/sbin", "/usr/bin", "/usr/sbin", "/usr/local/bin", "/usr/local/sbin", "/var/lib"} {
		s.fs.ensureDir(d, 0o755, 0)
	}
	s.fs.ensureDir("/tmp", 0o1777, 0)
	for _, u := range s.users {
		if !u.root {
			s.fs.ensureDir(u.home, 0o755, 0)
			s.fs.chownMem(u.home, u.uid)
		}
	}
	for p := range s.paths {
		if fi, err := s.fs.stat(p); err != nil || fi.kind != kindFile {
			s.fs.putFile(p, nil, 0o755)
		}
	}
	for p, content := range files {
		s.fs.putFile(clean("/", p), []byte(content), 0o644)
	}
	_ = s.fs.save()
}

// HostKey is the server's public host key (for a client's HostKeyCallback).
func (s *Server) HostKey() ssh.PublicKey { return s.signer.PublicKey() }

// Faults is the fault-injection control.
func (s *Server) Faults() *Faults { return s.faults }

// Start listens on addr (e.g. "127.0.0.1:0") and serves in the background.
func (s *Server) Start(addr string) (net.Addr, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("zfsssh: listen %s: %w", addr, err)
	}
	if err := s.track(l); err != nil {
		l.Close()
		return nil, err
	}
	go s.serve(l)
	return l.Addr(), nil
}

// ListenAndServe listens on addr and serves until Close.
func (s *Server) ListenAndServe(addr string) error {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("zfsssh: listen %s: %w", addr, err)
	}
	return s.Serve(l)
}

// Serve accepts connections on l until Close; it then returns ErrServerClosed.
func (s *Server) Serve(l net.Listener) error {
	if err := s.track(l); err != nil {
		l.Close()
		return err
	}
	return s.serve(l)
}

func (s *Server) track(l net.Listener) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrServerClosed
	}
	s.listeners[l] = struct{}{}
	if s.addr == nil {
		s.addr = l.Addr()
	}
	return nil
}

func (s *Server) serve(l net.Listener) error {
	delay := 5 * time.Millisecond
	for {
		nc, err := l.Accept()
		if err != nil {
			s.mu.Lock()
			closed := s.closed
			s.mu.Unlock()
			if closed {
				return ErrServerClosed
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				time.Sleep(delay)
				continue
			}
			return err
		}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			nc.Close()
			return ErrServerClosed
		}
		s.wg.Add(1)
		s.mu.Unlock()
		go s.handleConn(nc)
	}
}

// Addr is the address of the first listener (nil before one is served).
func (s *Server) Addr() net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addr
}

// Close stops the listeners, drops every live connection, waits for the
// running commands to end and leaves the state in StateDir.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	for l := range s.listeners {
		l.Close()
	}
	for c := range s.conns {
		c.nc.Close()
	}
	s.mu.Unlock()
	s.cancel()
	s.wg.Wait()
	var kerr error
	if s.kernel != nil {
		kerr = s.kernel.Close(s.kernelOwner)
	}
	return errors.Join(s.fs.save(), s.lio.save(), s.nvmet.save(), kerr)
}

// hostKeyFile keeps the generated host key in the state directory, as
// sshd keeps /etc/ssh/ssh_host_ed25519_key: a host restarted on its state
// directory presents the same key, so clients that pinned it reconnect.
const hostKeyFile = "ssh_host_ed25519_key"

// hostKey loads the host key from dir, or takes the process's key (and
// saves it there when dir is set).
func hostKey(dir string) (ssh.Signer, error) {
	file := ""
	if dir != "" {
		file = filepath.Join(dir, hostKeyFile)
		if data, err := os.ReadFile(file); err == nil {
			signer, err := ssh.ParsePrivateKey(data)
			if err != nil {
				return nil, fmt.Errorf("zfsssh: host key %s: %w", file, err)
			}
			return signer, nil
		} else if !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("zfsssh: host key: %w", err)
		}
	}
	key, err := processKey()
	if err != nil {
		return nil, err
	}
	signer, err := ssh.NewSignerFromKey(key)
	if err != nil {
		return nil, fmt.Errorf("zfsssh: host key: %w", err)
	}
	if file != "" {
		block, err := ssh.MarshalPrivateKey(key, "")
		if err != nil {
			return nil, fmt.Errorf("zfsssh: host key: %w", err)
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("zfsssh: state directory: %w", err)
		}
		if err := writeFileAtomic(file, pem.EncodeToMemory(block)); err != nil {
			return nil, fmt.Errorf("zfsssh: saving the host key: %w", err)
		}
	}
	return signer, nil
}
