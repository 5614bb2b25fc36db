//go:build unix

package zfs

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"testing"

	"golang.org/x/crypto/ssh"
)

// testSSHServer is a real SSH server (x/crypto) on 127.0.0.1 for the
// executor tests. exec requests run `sh -c` locally, except two canned
// commands that misbehave on purpose:
//
//	__drop__    the server drops the whole connection mid-command
//	__noexit__  the session closes without an exit status
//
// It enforces a per-connection session limit the way OpenSSH does
// (refusing the channel open as "administratively prohibited"), and
// records what it saw: pty requests, signals, keepalives, concurrency.
type testSSHServer struct {
	t        testing.TB
	cfg      *ssh.ServerConfig
	HostKey  ssh.PublicKey
	Addr     string
	User     string
	Password string

	mu sync.Mutex
	// maxSessions per connection; 0 is unlimited, negative refuses all.
	maxSessions int
	// loginShell runs exec requests as loginShell -c line ("": /bin/sh).
	loginShell string
	ln         net.Listener
	conns      map[*ssh.ServerConn]*testConnState
	active     int
	maxActive  int
	refused    int
	ptys       []testPTY
	signals    []string
	keepalives int
	auths      int // authentication attempts of any method (none included)
}

type testConnState struct {
	sessions      int
	muteKeepalive bool
}

type testPTY struct {
	Term       string
	Cols, Rows uint32
}

// sharedHostKey is the host key of every test server that is not given
// one: host keys are trusted per address for the whole process, and a
// later test's server may get a port an earlier one had.
var sharedHostKey = sync.OnceValue(newHostSigner)

func newHostSigner() ssh.Signer {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		panic(err)
	}
	signer, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		panic(err)
	}
	return signer
}

// newTestSSHServer starts a server accepting user "alice" with password
// "pw-Secret!" and, if authorized is not nil, that public key.
func newTestSSHServer(t testing.TB, authorized ssh.PublicKey, maxSessions int) *testSSHServer {
	t.Helper()
	return newTestSSHServerKey(t, authorized, maxSessions, sharedHostKey())
}

// newTestSSHServerKey is newTestSSHServer with the host key signer (and
// more host keys, added before the server starts: the server's config is
// read by its connections without a lock).
func newTestSSHServerKey(t testing.TB, authorized ssh.PublicKey, maxSessions int, signer ssh.Signer, more ...ssh.Signer) *testSSHServer {
	t.Helper()
	srv := &testSSHServer{
		t: t, HostKey: signer.PublicKey(), User: "alice", Password: "pw-Secret!",
		maxSessions: maxSessions, conns: map[*ssh.ServerConn]*testConnState{},
	}
	srv.cfg = &ssh.ServerConfig{
		PasswordCallback: func(md ssh.ConnMetadata, pw []byte) (*ssh.Permissions, error) {
			if md.User() == srv.User && string(pw) == srv.Password {
				return nil, nil
			}
			return nil, errors.New("wrong password")
		},
		PublicKeyCallback: func(md ssh.ConnMetadata, key ssh.PublicKey) (*ssh.Permissions, error) {
			if authorized != nil && md.User() == srv.User && string(key.Marshal()) == string(authorized.Marshal()) {
				return nil, nil
			}
			return nil, errors.New("unknown key")
		},
		AuthLogCallback: func(ssh.ConnMetadata, string, error) {
			srv.mu.Lock()
			srv.auths++
			srv.mu.Unlock()
		},
	}
	srv.cfg.AddHostKey(signer)
	for _, s := range more {
		srv.cfg.AddHostKey(s)
	}
	srv.Start("127.0.0.1:0")
	t.Cleanup(srv.Kill)
	return srv
}

// Start listens on addr (use srv.Addr to come back on the same port).
func (srv *testSSHServer) Start(addr string) {
	srv.t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		srv.t.Fatalf("listen %s: %v", addr, err)
	}
	srv.mu.Lock()
	srv.ln, srv.Addr = ln, ln.Addr().String()
	srv.mu.Unlock()
	go func() {
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			go srv.serve(nc)
		}
	}()
}

// Kill stops listening and drops every connection, like a crashed sshd.
func (srv *testSSHServer) Kill() {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if srv.ln != nil {
		_ = srv.ln.Close()
		srv.ln = nil
	}
	for c := range srv.conns {
		_ = c.Close()
	}
}

// MuteKeepalives makes the server stop answering keepalives on the
// connections it has now, as a peer behind a dead network would.
func (srv *testSSHServer) MuteKeepalives() {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	for _, st := range srv.conns {
		st.muteKeepalive = true
	}
}

func (srv *testSSHServer) serve(nc net.Conn) {
	sc, chans, reqs, err := ssh.NewServerConn(nc, srv.cfg)
	if err != nil {
		_ = nc.Close()
		return
	}
	st := &testConnState{}
	srv.mu.Lock()
	srv.conns[sc] = st
	srv.mu.Unlock()
	defer func() {
		srv.mu.Lock()
		delete(srv.conns, sc)
		srv.mu.Unlock()
	}()
	go func() {
		for r := range reqs {
			srv.mu.Lock()
			mute := st.muteKeepalive
			if r.Type == "keepalive@openssh.com" {
				srv.keepalives++
			}
			srv.mu.Unlock()
			if r.Type == "keepalive@openssh.com" && mute {
				continue
			}
			// OpenSSH answers keepalive@openssh.com (and anything it does
			// not know) with a failure.
			_ = r.Reply(false, nil)
		}
	}()
	for nch := range chans {
		if nch.ChannelType() != "session" {
			_ = nch.Reject(ssh.UnknownChannelType, "unknown channel type")
			continue
		}
		srv.mu.Lock()
		if srv.maxSessions < 0 || srv.maxSessions > 0 && st.sessions >= srv.maxSessions {
			srv.refused++
			srv.mu.Unlock()
			_ = nch.Reject(ssh.Prohibited, "open failed")
			continue
		}
		st.sessions++
		srv.active++
		srv.maxActive = max(srv.maxActive, srv.active)
		srv.mu.Unlock()
		ch, creqs, err := nch.Accept()
		if err != nil {
			srv.endSession(st)
			continue
		}
		go srv.session(sc, st, ch, creqs)
	}
}

func (srv *testSSHServer) endSession(st *testConnState) {
	srv.mu.Lock()
	st.sessions--
	srv.active--
	srv.mu.Unlock()
}

func (srv *testSSHServer) session(sc *ssh.ServerConn, st *testConnState, ch ssh.Channel, reqs <-chan *ssh.Request) {
	var once sync.Once
	end := func() { once.Do(func() { srv.endSession(st) }) }
	defer func() { end(); _ = ch.Close() }()
	var (
		pty  *testPTY
		proc = make(chan *os.Process, 1)
		done = make(chan struct{})
	)
	for {
		var r *ssh.Request
		select {
		case r = <-reqs:
		case <-done:
			return
		}
		if r == nil {
			return
		}
		switch r.Type {
		case "pty-req":
			var p struct {
				Term                      string
				Cols, Rows, Width, Height uint32
				Modes                     string
			}
			if err := ssh.Unmarshal(r.Payload, &p); err != nil {
				_ = r.Reply(false, nil)
				continue
			}
			pty = &testPTY{Term: p.Term, Cols: p.Cols, Rows: p.Rows}
			srv.mu.Lock()
			srv.ptys = append(srv.ptys, *pty)
			srv.mu.Unlock()
			_ = r.Reply(true, nil)
		case "signal":
			var s struct{ Signal string }
			_ = ssh.Unmarshal(r.Payload, &s)
			srv.mu.Lock()
			srv.signals = append(srv.signals, s.Signal)
			srv.mu.Unlock()
			select {
			case p := <-proc:
				_ = syscall.Kill(-p.Pid, syscall.SIGKILL)
				proc <- p
			default:
			}
		case "exec":
			var e struct{ Command string }
			if err := ssh.Unmarshal(r.Payload, &e); err != nil {
				_ = r.Reply(false, nil)
				continue
			}
			_ = r.Reply(true, nil)
			switch e.Command {
			case "__drop__":
				_ = sc.Close()
				return
			case "__noexit__":
				return
			}
			go func() {
				code, sig := srv.run(e.Command, pty, ch, proc)
				end() // before the close, as sshd frees its session slot
				if sig != "" {
					_, _ = ch.SendRequest("exit-signal", false, ssh.Marshal(struct {
						Signal     string
						CoreDumped bool
						Error      string
						Lang       string
					}{Signal: sig}))
				} else {
					var b [4]byte
					binary.BigEndian.PutUint32(b[:], uint32(code))
					_, _ = ch.SendRequest("exit-status", false, b[:])
				}
				close(done)
			}()
		default:
			if r.WantReply {
				_ = r.Reply(false, nil)
			}
		}
	}
}

// run executes line with sh -c, wired to the channel; a pty only merges
// stderr into stdout and sets TERM (the fixture needs no real terminal).
func (srv *testSSHServer) run(line string, pty *testPTY, ch ssh.Channel, proc chan *os.Process) (code int, signal string) {
	srv.mu.Lock()
	shell := srv.loginShell
	srv.mu.Unlock()
	if shell == "" {
		shell = "/bin/sh"
	}
	cmd := exec.Command(shell, "-c", line)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Stdout, cmd.Stderr = ch, ch.Stderr()
	if pty != nil {
		cmd.Stderr = ch
		cmd.Env = append(os.Environ(), "TERM="+pty.Term)
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return 127, ""
	}
	if err := cmd.Start(); err != nil {
		return 127, ""
	}
	proc <- cmd.Process
	go func() {
		_, _ = io.Copy(stdin, ch)
		_ = stdin.Close()
	}()
	err = cmd.Wait()
	<-proc
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		names := map[syscall.Signal]string{syscall.SIGKILL: "KILL", syscall.SIGTERM: "TERM", syscall.SIGINT: "INT"}
		if n, ok := names[ws.Signal()]; ok {
			return 0, n
		}
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		return 127, ""
	}
	return cmd.ProcessState.ExitCode(), ""
}

// stats reads the counters under the lock.
func (srv *testSSHServer) stats() (maxActive, active, refused, keepalives int) {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	return srv.maxActive, srv.active, srv.refused, srv.keepalives
}

func (srv *testSSHServer) seen() (ptys []testPTY, signals []string) {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	return append([]testPTY(nil), srv.ptys...), append([]string(nil), srv.signals...)
}

// authAttempts counts the authentication attempts the server has seen.
func (srv *testSSHServer) authAttempts() int {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	return srv.auths
}
