package zfsssh

import (
	"context"
	"io"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/crypto/ssh"
)

// sessionEnv is what a session's commands see of their session.
type sessionEnv struct {
	srv    *Server
	conn   *sshConn // nil when a shell runs outside SSH (tests)
	user   *account
	connID uint64
	id     uint64
	pty    bool
	cols   atomic.Int64 // terminal width (window-change can update it)
	line   string       // the command line being run, for Records
	// program numbers the programs a shell session's sh has read (0: the
	// exec's own command line), for Records.
	program uint64
	// channel is the session's channel (stdin of an exec), so that a
	// "sh -s" reading it can tell it is a shell session.
	channel io.Reader
	// out holds the session's output until sshd would send it (outbox.go);
	// nil outside SSH.
	out *outbox
}

// wait is called by a command about to wait (sleep, an injected latency):
// sshd would have sent what it wrote meanwhile.
func (e *sessionEnv) wait() {
	if e != nil && e.out != nil {
		_ = e.out.Flush() // a failed send shows on the next write
	}
}

func (e *sessionEnv) cwd() string { return e.user.home }

func (e *sessionEnv) uid(root bool) int {
	if root {
		return 0
	}
	return e.user.uid
}

// dropConnection cuts the connection (fault injection) after what the
// session's commands printed so far has left: sshd would have sent it
// before the command that the drop interrupts.
func (e *sessionEnv) dropConnection() {
	if e.conn != nil {
		e.wait()
		e.conn.drop()
	}
}

// session is one session channel.
type session struct {
	c      *sshConn
	ch     ssh.Channel
	env    *sessionEnv
	ctx    context.Context
	cancel context.CancelFunc

	// pgid is the session's process group in Server.procs (0: none yet);
	// args is its command line as ps shows it.
	pgid int
	args string

	mu       sync.Mutex
	started  bool
	signal   string
	done     chan struct{}
	released sync.Once
}

func (c *sshConn) serveSession(id uint64, ch ssh.Channel, reqs <-chan *ssh.Request) {
	defer c.wg.Done()
	s := &session{c: c, ch: ch, done: make(chan struct{})}
	s.env = &sessionEnv{srv: c.srv, conn: c, user: c.user, connID: c.id, id: id}
	s.env.cols.Store(80)
	// The session's command outlives its channel and its connection, as
	// with sshd (procs.go): only a signal or the host's shutdown ends it.
	s.ctx, s.cancel = context.WithCancel(c.srv.ctx)
	defer s.cancel()
	for req := range reqs {
		s.request(req)
	}
	// The client closed the channel (or the connection is gone): the
	// command sees EOF on stdin and its output goes nowhere.
	s.mu.Lock()
	started := s.started
	s.mu.Unlock()
	if started && s.env.pty {
		// A command on a terminal dies with it: sshd closes the pty's
		// master, the kernel hangs up the session (SIGHUP) and throws
		// away the input not yet read. Only a command without a pty
		// outlives its channel.
		s.cancel()
	}
	if started {
		<-s.done
	} else {
		s.release()
	}
}

func (s *session) request(req *ssh.Request) {
	reply := func(ok bool) {
		if req.WantReply {
			req.Reply(ok, nil)
		}
	}
	s.mu.Lock()
	started := s.started
	s.mu.Unlock()
	switch req.Type {
	case "pty-req":
		var m struct {
			Term                   string
			Cols, Rows, Width, Hgt uint32
			Modes                  string
		}
		if started || ssh.Unmarshal(req.Payload, &m) != nil {
			reply(false)
			return
		}
		s.env.pty = true
		if m.Cols > 0 {
			s.env.cols.Store(int64(m.Cols))
		}
		reply(true)
	case "env":
		var m struct{ Name, Value string }
		// Debian's sshd accepts LANG and LC_* only (AcceptEnv).
		ok := ssh.Unmarshal(req.Payload, &m) == nil && (m.Name == "LANG" || strings.HasPrefix(m.Name, "LC_"))
		reply(ok && !started)
	case "exec":
		var m struct{ Command string }
		if started || ssh.Unmarshal(req.Payload, &m) != nil {
			reply(false)
			return
		}
		s.start(s.env.user.shellName() + " -c " + m.Command)
		reply(true)
		go s.runExec(m.Command)
	case "shell":
		if started {
			reply(false)
			return
		}
		s.start("-" + s.env.user.shellName())
		reply(true)
		go s.runShell()
	case "window-change":
		var m struct{ Cols, Rows, Width, Height uint32 }
		if ssh.Unmarshal(req.Payload, &m) == nil && m.Cols > 0 {
			s.env.cols.Store(int64(m.Cols))
		}
		reply(true)
	case "signal":
		var m struct{ Signal string }
		// OpenSSH delivers a signal (killpg of the session's group) only
		// from its privilege-separated child, which a root login does not
		// have after authentication: for root it logs "session signalling
		// requires privilege separation" and the command runs on
		// (measured with Debian 12's OpenSSH 9.2; docs/performance.md).
		if ssh.Unmarshal(req.Payload, &m) == nil && !s.env.user.root {
			s.kill(m.Signal)
		} else if s.env.user.root {
			s.c.srv.log.Debug("session signalling requires privilege separation", "conn", s.c.id, "session", s.env.id, "signal", m.Signal)
		}
	default:
		// subsystem (sftp), x11-req, auth-agent-req@openssh.com, channel
		// keepalives: refused, as a minimal OpenSSH would.
		reply(false)
	}
}

// start marks the session's command started and enters it in the
// process table as args.
func (s *session) start(args string) {
	s.mu.Lock()
	s.started = true
	s.args = args
	s.mu.Unlock()
	s.pgid = s.c.srv.procs.add(s)
}

// kill ends the session's command with sig (a "signal" request, kill of
// its group): sshd's killpg of the session's process group.
func (s *session) kill(sig string) {
	s.mu.Lock()
	s.signal = sig
	s.mu.Unlock()
	s.cancel()
}

// streams are the session's stdin, stdout and stderr, through its outbox.
// With a pty both outputs go to the terminal, and the terminal turns "\n"
// into "\r\n" (ONLCR).
func (s *session) streams() (in io.Reader, out, errw io.Writer) {
	s.env.out = newOutbox(s.ch, s.ch.Stderr())
	in = &inReader{r: s.ch, o: s.env.out}
	if s.env.pty {
		w := &ttyWriter{w: s.env.out.Stdout()}
		return in, w, w
	}
	return in, s.env.out.Stdout(), s.env.out.Stderr()
}

var secretRE = regexp.MustCompile(`(password=)\S+`)

func (s *session) runExec(command string) {
	s.env.line = command
	in, out, errw := s.streams()
	s.env.channel = in
	// Command lines can carry CHAP secrets (targetcli "set auth password=").
	s.c.srv.log.Debug("exec", "conn", s.c.id, "session", s.env.id, "user", s.env.user.name, "command", secretRE.ReplaceAllString(command, "${1}<redacted>"))
	// One network round trip per exec (Faults.SetRoundTripLatency),
	// before the command's own per-command latencies.
	if d := s.c.srv.faults.RoundTripDelay(); d > 0 {
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-s.ctx.Done():
			t.Stop()
			s.finish(130)
			return
		}
	}
	if n := s.c.srv.faults.streamDrop(); n > 0 {
		out = &droppingWriter{w: out, f: s.c.srv.faults, left: n, drop: s.env.dropConnection}
	}
	sh := newShell(s.env, s.env.user.root, s.env.user.shellName(), 0)
	// The exec that starts a driver's shell session is its framing, like
	// the frames after it (shellsession.go): the login shell's work.
	sh.framing = strings.Contains(command, shellSessionStart)
	st := sh.run(s.ctx, command, stdio{in: in, out: out, err: errw})
	s.finish(st)
}

func (s *session) runShell() {
	in, out, errw := s.streams()
	st := s.interactive(in, out, errw)
	s.finish(st)
}

// finish sends EOF, the exit status (or the signal that ended the command)
// and closes the channel, as sshd does.
func (s *session) finish(status int) {
	defer close(s.done)
	s.c.srv.procs.remove(s.pgid)
	if s.env.out != nil {
		// All the output, then EOF and the status, as sshd sends them.
		_ = s.env.out.Close()
	}
	s.ch.CloseWrite()
	s.mu.Lock()
	sig := s.signal
	s.mu.Unlock()
	if sig != "" {
		s.ch.SendRequest("exit-signal", false, ssh.Marshal(struct {
			Signal     string
			CoreDumped bool
			Error      string
			Lang       string
		}{Signal: sig}))
	} else {
		s.ch.SendRequest("exit-status", false, ssh.Marshal(struct{ Status uint32 }{uint32(status)}))
	}
	s.release()
}

// release frees the session slot before the channel is closed, so a client
// that sees the close can immediately open a new session.
func (s *session) release() {
	s.released.Do(func() {
		s.c.release()
		s.ch.Close()
	})
}

// ttyWriter is the output side of a pseudo-terminal.
type ttyWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (t *ttyWriter) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, err := t.w.Write([]byte(strings.ReplaceAll(string(b), "\n", "\r\n"))); err != nil {
		return 0, err
	}
	return len(b), nil
}
