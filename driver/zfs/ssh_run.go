package zfs

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/switchyard-csi/switchyard/driver/metrics/roundtrip"
)

// The terminal requested for RunOptions.PTY.
const (
	sshPTYTerm = "xterm"
	sshPTYCols = 80
	sshPTYRows = 40
)

// Session refusals: wait a little for one of our sessions to end. A server
// that refuses while none of ours is open is refusing outright; give up
// after a few tries rather than spin until ctx ends.
const (
	refusalBackoffMin = 10 * time.Millisecond
	refusalBackoffMax = 200 * time.Millisecond
	maxIdleRefusals   = 5
)

// Run runs line through the host's shell and waits for it. See Executor.
func (s *SSH) Run(ctx context.Context, line string, opts RunOptions) (Output, error) {
	start := time.Now()
	out, err := s.run(ctx, line, opts)
	logCommandRun(s.log, line, opts, time.Since(start), out, err)
	return out, err
}

func (s *SSH) run(ctx context.Context, line string, opts RunOptions) (Output, error) {
	if err := s.fenceOrphans(ctx); err != nil {
		return Output{Code: -1}, err
	}
	return s.dispatch(ctx, line, opts)
}

// dispatch sends line on a shell session or as an exec of its own.
func (s *SSH) dispatch(ctx context.Context, line string, opts RunOptions) (Output, error) {
	if s.useShell(line, opts) {
		return s.runOnShell(ctx, line)
	}
	return s.withSession(ctx, opts, func(c *sshConn, sess *ssh.Session) (Output, error) {
		return s.runSession(ctx, c, sess, line, opts)
	})
}

// withSession runs an exec on a channel of its own (see withChannel).
func (s *SSH) withSession(ctx context.Context, opts RunOptions, run func(*sshConn, *ssh.Session) (Output, error)) (Output, error) {
	var sess *ssh.Session
	return s.withChannel(ctx, func(c *sshConn) error {
		// Idle shell sessions hold channels too: close enough of them
		// that this one stays within the limit.
		s.shells.makeRoom(s.limit)
		var err error
		sess, err = s.openSession(c, opts)
		return err
	}, func(c *sshConn) (Output, error) { return run(c, sess) })
}

// withChannel takes a session slot, connects and opens a channel with open
// (one fresh connection if the cached one is dead, backing off while the
// server refuses sessions), then calls run, which sends the command:
// nothing is retried once run is called.
func (s *SSH) withChannel(ctx context.Context, open func(*sshConn) error, run func(*sshConn) (Output, error)) (Output, error) {
	notRun := Output{Code: -1}
	prefix := s.st.prefix
	freshRetry := true
	idleRefusals := 0
	backoff := refusalBackoffMin
	for {
		if err := s.limit.acquire(ctx); err != nil {
			return notRun, cancelledError(prefix+": waiting for a free session", false, err)
		}
		c, err := s.connect(ctx)
		if err != nil {
			s.limit.release()
			return notRun, err
		}
		err = open(c)
		if err == nil {
			out, err := run(c)
			s.limit.release()
			return out, err
		}
		s.limit.release()

		var refused *ssh.OpenChannelError
		switch {
		case errors.As(err, &refused) && c.alive():
			// The server said no but the connection is fine: it allows
			// fewer sessions than we assumed.
			s.refused.Add(1)
			if open := int(c.open.Load()); open > 0 {
				if limit, changed := s.limit.lower(open); changed {
					s.log.Info("ssh server allows fewer sessions than sshConnection.maxSessions; lowering the limit",
						"maxSessions", s.st.cfg.MaxSessions, "limit", limit)
				}
			} else if idleRefusals++; idleRefusals >= maxIdleRefusals {
				return notRun, newExecutorError(ErrUnreachable, "%s: the server refuses to open a session: %v", prefix, refused)
			}
			if err := sshSleep(ctx, backoff); err != nil {
				return notRun, cancelledError(prefix+": waiting for the server to accept a session", false, err)
			}
			backoff = min(2*backoff, refusalBackoffMax)
		case errors.Is(err, errSSHPTYRefused):
			return notRun, newExecutorError(ErrUnreachable, "%s: the server refused a pseudo-terminal", prefix)
		default:
			// The connection was dead before the command was sent, so
			// the command did not run: one more try on a new connection.
			c.kill()
			if !freshRetry {
				return notRun, newExecutorError(ErrUnreachable, "%s: cannot open a session: %v", prefix, err)
			}
			freshRetry = false
			s.log.Debug("ssh session open failed on a dead connection; reconnecting", "error", err.Error())
		}
	}
}

// errSSHPTYRefused: the server answered the pty request with a no.
var errSSHPTYRefused = errors.New("pty refused")

// openSession opens a session and asks for a pty if wanted: everything up
// to (not including) sending the command.
func (s *SSH) openSession(c *sshConn, opts RunOptions) (*ssh.Session, error) {
	sess, err := c.newSession()
	if err != nil {
		return nil, err
	}
	if opts.PTY {
		if err := sess.RequestPty(sshPTYTerm, sshPTYRows, sshPTYCols, ssh.TerminalModes{}); err != nil {
			_ = sess.Close()
			if err.Error() == "ssh: pty-req failed" { // the server answered no
				return nil, errSSHPTYRefused
			}
			return nil, err
		}
	}
	return sess, nil
}

// runSession sends the command, feeds stdin and waits for the exit
// status, ctx's end, or the connection's loss.
func (s *SSH) runSession(ctx context.Context, c *sshConn, sess *ssh.Session, line string, opts RunOptions) (Output, error) {
	prefix := s.st.prefix
	lost := Output{Code: -1}
	s.sessions.Add(1)
	roundtrip.Count(ctx, roundtrip.SSH)
	c.open.Add(1)
	defer c.open.Add(-1)
	defer sess.Close()

	var stdout, stderr bytes.Buffer
	sess.Stdout, sess.Stderr = &stdout, &stderr
	// A pipe rather than sess.Stdin: Wait would report a failed stdin copy
	// (the command exited without reading it) as an error.
	stdin, err := sess.StdinPipe()
	if err != nil {
		return lost, newExecutorError(ErrUnreachable, "%s: %v", prefix, err)
	}
	if err := sess.Start(line); err != nil {
		return lost, startError(prefix, err)
	}
	if len(opts.Stdin) == 0 {
		// The usual case: only EOF to send, no goroutine to start and
		// wake (the driver's CPU per exec is mostly such wake-ups).
		_ = stdin.Close()
	} else {
		go func() {
			_, _ = stdin.Write(opts.Stdin)
			_ = stdin.Close()
		}()
	}

	done := make(chan error, 1)
	go func() { done <- sess.Wait() }()
	select {
	case err := <-done:
		out := Output{Stdout: stdout.String(), Stderr: stderr.String()}
		var exit *ssh.ExitError
		switch {
		case err == nil:
			return out, nil
		case errors.As(err, &exit):
			// A command killed by a signal reads 128+n, as in a shell.
			out.Code = exit.ExitStatus()
			return out, nil
		case errors.As(err, new(*ssh.ExitMissingError)):
			out.Code = -1
			return out, newExecutorError(ErrConnectionLost, "%s: the session ended without an exit status (the command may have run)", prefix)
		default:
			out.Code = -1
			return out, newExecutorError(ErrConnectionLost, "%s: connection lost before the exit status arrived (the command may have run): %v", prefix, err)
		}
	case <-ctx.Done():
		// Best effort: a server may ignore "signal"; the session is
		// closed (and its slot freed) either way.
		_ = sess.Signal(ssh.SIGKILL)
		return lost, cancelledError(prefix, true, ctx.Err())
	}
}

func sshSleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// startError classifies a failed session Start: the server refusing the
// exec request, or the connection lost while sending it (the command may
// have run). x/crypto's refusal message quotes the command: never repeat it.
func startError(prefix string, err error) error {
	if strings.HasPrefix(err.Error(), "ssh: command ") && strings.HasSuffix(err.Error(), " failed") {
		return newExecutorError(ErrUnreachable, "%s: the server refused to run the command", prefix)
	}
	return newExecutorError(ErrConnectionLost, "%s: connection lost while sending the command (it may have run): %v", prefix, err)
}
