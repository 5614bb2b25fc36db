package zfs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/switchyard-csi/switchyard/driver/metrics/roundtrip"
)

// One long-lived shell per session slot (docs/performance.md, "One shell
// session per session slot"). An exec costs two round trips before its
// output is back (the channel open, then the exec request); a program
// written to a shell already running costs one. So a run that needs
// neither a pty nor stdin goes, framed (ssh_shell_frame.go), to an idle
// shell session of the connection, or to a new one, which the run then
// leaves idle for the next. Open sessions, idle or busy, never exceed the
// session limit (sshLimiter): a slot holds at most one channel, and an
// idle session is parked only while slots in use plus idle sessions stay
// within the limit.
//
// A session whose output is not exactly what the framing says (stray
// bytes, a marker out of place), that ends, that the caller cancels or
// whose connection dies is closed, never reused.

// shellIdleMax: a session idle longer is closed rather than used (NAT and
// firewall timeouts, sshd's own); the next run opens a fresh one.
const shellIdleMax = time.Minute

// shellEndWait bounds the wait for a session's exit status once its
// streams ended, and for a graceful close.
const shellEndWait = 2 * time.Second

// shellChunkBuf is the read size of a session's streams.
const shellChunkBuf = 8 << 10

// shellSession is one `sh -s` on its own channel.
type shellSession struct {
	conn  *sshConn
	sess  *ssh.Session
	stdin io.WriteCloser
	// rd is what the streams' readers read (ssh_shell_read.go).
	rd *shellReads
	// ended is closed once the channel is closed (waitErr then holds
	// Wait's result: an *ssh.ExitError or nil for an orderly end).
	ended     chan struct{}
	waitErr   error
	closeOnce sync.Once
	// id names the session in the host's process list (ssh_orphans.go).
	id string
	// fresh: no program has run yet, so the hellos are still ahead.
	fresh   bool
	lastUse time.Time
}

// openShell opens a channel and starts `sh -s` on it through the login
// shell: two round trips, paid once per session.
func (s *SSH) openShell(c *sshConn) (*shellSession, error) {
	sess, err := c.newSession()
	if err != nil {
		return nil, err
	}
	stdin, err1 := sess.StdinPipe()
	stdout, err2 := sess.StdoutPipe()
	stderr, err3 := sess.StderrPipe()
	if err := errors.Join(err1, err2, err3); err != nil {
		_ = sess.Close()
		return nil, err
	}
	s.sessions.Add(1)
	s.shellsOpened.Add(1)
	c.open.Add(1)
	sh := &shellSession{conn: c, sess: sess, stdin: stdin, rd: newShellReads(),
		ended: make(chan struct{}), id: newSessionID(), fresh: true, lastUse: time.Now()}
	if err := sess.Start(shellStartCommand(sh.id)); err != nil {
		sh.close()
		return nil, err
	}
	go sh.rd.pump(stdout, false)
	go sh.rd.pump(stderr, true)
	go func() {
		sh.waitErr = sess.Wait()
		close(sh.ended)
	}()
	return sh, nil
}

// drain waits until both streams end or wait passes, and returns what
// they brought: the output of a session that ended before taking a
// program.
func (sh *shellSession) drain(wait time.Duration) (ob, eb []byte) {
	t := time.NewTimer(wait)
	defer t.Stop()
	for !sh.rd.bothEnded() {
		select {
		case <-sh.rd.wake:
		case <-t.C:
			return sh.rd.bytes()
		}
	}
	return sh.rd.bytes()
}

// close closes the channel at once (the program, if any, loses its
// streams; sh gets EOF or SIGHUP from sshd).
func (sh *shellSession) close() {
	sh.closeOnce.Do(func() {
		_ = sh.sess.Close()
		sh.conn.open.Add(-1)
	})
}

// closeGracefully ends an idle session by EOF on sh's stdin and waits a
// little for the server to close it, so that a channel opened next is not
// refused for a session the server still counts.
func (sh *shellSession) closeGracefully() {
	_ = sh.stdin.Close()
	t := time.NewTimer(shellEndWait)
	select {
	case <-sh.ended:
	case <-t.C:
	}
	t.Stop()
	sh.close()
}

// usable reports whether an idle session may take a program: its
// connection is c, it has not ended, nothing arrived since its last
// program (that would be out of step), and it has not idled too long.
func (sh *shellSession) usable(c *sshConn, now time.Time) bool {
	if sh.conn != c || !c.alive() || !sh.rd.idleInStep() || now.Sub(sh.lastUse) > shellIdleMax {
		return false
	}
	select {
	case <-sh.ended:
		return false
	default:
		return true
	}
}

// shellPool holds a connection's idle sessions, most recently used last.
type shellPool struct {
	mu   sync.Mutex
	idle []*shellSession
}

// take returns an idle session usable on c, or nil; the unusable ones it
// meets are closed.
func (p *shellPool) take(c *sshConn) *shellSession {
	now := time.Now()
	p.mu.Lock()
	var drop []*shellSession
	var got *shellSession
	for len(p.idle) > 0 && got == nil {
		sh := p.idle[len(p.idle)-1]
		p.idle = p.idle[:len(p.idle)-1]
		if sh.usable(c, now) {
			got = sh
		} else {
			drop = append(drop, sh)
		}
	}
	p.mu.Unlock()
	for _, sh := range drop {
		sh.close()
	}
	return got
}

// put parks sh for the next run when the limit allows. The caller has
// released its slot already: while it held it, a session parked by another
// caller that had not yet released its own would be counted twice (once
// idle, once in use), and the limit check would close a session that fits.
// A slot taken since the release is in inUse, so parking never lets the
// channels open exceed the limit.
func (p *shellPool) put(sh *shellSession, l *sshLimiter) {
	limit, inUse, _ := l.snapshot()
	p.mu.Lock()
	if inUse+len(p.idle) < limit {
		p.idle = append(p.idle, sh)
		sh = nil
	}
	p.mu.Unlock()
	if sh != nil {
		sh.closeGracefully()
	}
}

// makeRoom closes idle sessions (oldest first) until the slots in use
// plus the idle sessions fit the limit: the caller holds a slot and is
// about to open a channel of its own.
func (p *shellPool) makeRoom(l *sshLimiter) {
	for {
		limit, inUse, _ := l.snapshot()
		p.mu.Lock()
		if inUse+len(p.idle) <= limit || len(p.idle) == 0 {
			p.mu.Unlock()
			return
		}
		sh := p.idle[0]
		p.idle = p.idle[1:]
		p.mu.Unlock()
		sh.closeGracefully()
	}
}

// closeAll closes every idle session.
func (p *shellPool) closeAll() {
	p.mu.Lock()
	idle := p.idle
	p.idle = nil
	p.mu.Unlock()
	for _, sh := range idle {
		sh.close()
	}
}

func (p *shellPool) size() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.idle)
}

// useShell reports whether a run goes to a shell session: not when it
// needs a pty or stdin (exec semantics), nor when the connection turned
// sessions off (sshConnection.shellSession: false), nor for a line longer
// than MaxProgram (it goes to `sh -c` as one argument, whose limit is
// ARG_MAX, like an exec's).
func (s *SSH) useShell(line string, opts RunOptions) bool {
	return !s.st.cfg.NoShellSession && !opts.PTY && len(opts.Stdin) == 0 && len(line) <= MaxProgram
}

// runOnShell runs line on a shell session. A program that certainly did
// not start (the session had ended before it was read) is sent once more
// on a fresh session; everything else answers as an exec would.
func (s *SSH) runOnShell(ctx context.Context, line string) (Output, error) {
	for attempt := 0; ; attempt++ {
		var sh *shellSession
		var notRun, keep, sent bool
		out, err := s.withChannel(ctx, func(c *sshConn) error {
			if sh = s.shells.take(c); sh != nil {
				return nil
			}
			var err error
			sh, err = s.openShell(c)
			return err
		}, func(*sshConn) (Output, error) {
			sent = true
			out, k, nr, err := s.runFramed(ctx, sh, line)
			notRun, keep = nr, k
			if !keep {
				sh.close()
			}
			return out, err
		})
		if keep {
			s.shells.put(sh, s.limit) // after withChannel released the slot
		}
		if sent && lostMidProgram(err, notRun) {
			// It may still run on the host: the next run ends it first.
			s.orphans.add(sh.id)
		}
		if notRun && attempt == 0 && ctx.Err() == nil {
			s.log.Debug("ssh shell session ended before the program was read; sending it on a fresh session")
			continue
		}
		return out, err
	}
}

// runFramed sends line on sh and reads its output, status and end
// markers. keep: sh is in step and may take the next program. notRun: sh
// ended in order before it began the program, which therefore never ran.
func (s *SSH) runFramed(ctx context.Context, sh *shellSession, line string) (out Output, keep, notRun bool, err error) {
	prefix := s.st.prefix
	lost := Output{Code: -1}
	m := newMarker()
	s.programs.Add(1)
	roundtrip.Count(ctx, roundtrip.SSH)
	sh.rd.begin(&shellProgram{m: m, hello: sh.fresh})
	if n, werr := sh.stdin.Write(frameProgram(line, m)); werr != nil {
		if n == 0 {
			// A fresh session that is already gone may be a login shell
			// that refused the start command: say so rather than retry.
			if sh.fresh {
				ob, eb := sh.drain(shellEndWait)
				if o, k, nr, e := s.shellEnded(ctx, sh, false, ob, eb); errors.Is(e, ErrUnreachable) {
					return o, k, nr, e
				}
			}
			return lost, false, true, newExecutorError(ErrConnectionLost, "%s: the shell session ended before the command was sent: %v", prefix, werr)
		}
		return lost, false, false, newExecutorError(ErrConnectionLost, "%s: connection lost while sending the command (it may have run): %v", prefix, werr)
	}
	// When one stream ends the other may still hold the last bytes (a
	// login shell's complaint on stderr arrives after stdout closed), so
	// it is read to its end too, for at most shellEndWait.
	var endWait <-chan time.Time
	for {
		st := sh.rd.state()
		p := st.prog
		switch {
		case p.ost == frameDesync || p.est == frameDesync:
			return lost, false, false, s.desyncError(sh)
		case p.ost == frameDone && p.est == frameDone:
			sh.rd.finish()
			sh.fresh = false
			sh.lastUse = time.Now()
			return Output{Stdout: p.stdout, Stderr: p.stderr, Code: p.code}, true, false, nil
		case st.outEnded && st.errEnded:
			ob, eb := sh.rd.bytes()
			return s.shellEnded(ctx, sh, p.begun, ob, eb)
		case (st.outEnded || st.errEnded) && endWait == nil:
			endWait = time.After(shellEndWait)
		}
		select {
		case <-sh.rd.wake:
		case <-endWait:
			ob, eb := sh.rd.bytes()
			return s.shellEnded(ctx, sh, sh.rd.state().prog.begun, ob, eb)
		case <-ctx.Done():
			// The session is closed after this (never reused); the
			// signal (best effort, as for an exec) ends its sh, so that
			// sshd frees the session even while the program's own
			// processes finish.
			_ = sh.sess.Signal(ssh.SIGKILL)
			return lost, false, false, cancelledError(prefix, true, ctx.Err())
		}
	}
}

// shellEnded answers for a session whose stream ended mid-program.
func (s *SSH) shellEnded(ctx context.Context, sh *shellSession, begun bool, ob, eb []byte) (out Output, keep, notRun bool, err error) {
	prefix := s.st.prefix
	lost := Output{Code: -1}
	t := time.NewTimer(shellEndWait)
	defer t.Stop()
	select {
	case <-sh.ended:
	case <-t.C:
	case <-ctx.Done():
		return lost, false, false, cancelledError(prefix, true, ctx.Err())
	}
	orderly := false
	code := -1
	select {
	case <-sh.ended:
		var exit *ssh.ExitError
		switch {
		case sh.waitErr == nil:
			orderly, code = true, 0
		case errors.As(sh.waitErr, &exit):
			orderly, code = true, exit.ExitStatus()
		}
	default:
	}
	switch {
	case orderly && sh.fresh && !hasHello(ob):
		// The login shell never ran the start command's first printf:
		// it is not a POSIX shell, or cannot start sh.
		return lost, false, false, newExecutorError(ErrUnreachable,
			"%s: the shell session did not start: the login shell of sshConnection.username ran %q and exited %d (%s); "+
				"the host must run POSIX sh there (chsh -s /bin/sh), or set sshConnection.shellSession: false to send each command as its own exec",
			prefix, shellStartCommand(sh.id), code, shortText(eb))
	case orderly && !begun:
		return lost, false, true, newExecutorError(ErrConnectionLost, "%s: the shell session ended before the command was read", prefix)
	default:
		return lost, false, false, newExecutorError(ErrConnectionLost, "%s: the shell session ended before the command's exit status arrived (the command may have run)", prefix)
	}
}

// desyncError: the session's output was not what the framing allows.
func (s *SSH) desyncError(sh *shellSession) error {
	hint := ""
	if sh.fresh {
		hint = "; if the host's sh is not a POSIX shell, set sshConnection.shellSession: false"
	}
	return newExecutorError(ErrConnectionLost, "ssh %s: the shell session's output was out of step with its framing; session discarded (the command may have run)%s", s.st.who, hint)
}

func hasHello(b []byte) bool { return strings.Contains(string(b), shellHello+"\n") }

// shortText is the first line of b, cut short, for an error message.
func shortText(b []byte) string {
	t := strings.TrimSpace(string(b))
	if i := strings.IndexByte(t, '\n'); i >= 0 {
		t = t[:i]
	}
	if len(t) > 200 {
		t = t[:200] + "..."
	}
	if t == "" {
		return "no message"
	}
	return fmt.Sprintf("stderr: %s", t)
}
