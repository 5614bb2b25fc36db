package zfs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/switchyard-csi/switchyard/driver/metrics/roundtrip"
)

// Streaming commands (zfs send, zfs receive) for clones across
// connections: the stream goes straight between the caller's reader or
// writer and the SSH channel, whose flow-control window bounds what is in
// flight, so memory stays constant however large the stream. Only stderr
// is kept, and only its first maxStreamStderr bytes (zfs's error is at the
// start; a runaway -v must not fill the controller's memory).

// maxStreamStderr bounds the stderr a streaming command keeps.
const maxStreamStderr = 64 << 10

// streamCloseWait bounds the wait for a cancelled stream's output copy.
const streamCloseWait = 2 * time.Second

// RunStream runs line with stdin fed from stdin (nil: none) and stdout
// written to stdout (nil: discarded); Output.Stdout stays empty. It takes a
// session slot like Run, and reconnects only before the command starts: a
// stream half-sent is never replayed (the caller resumes it, as
// driver/transfer does with zfs receive tokens). Cancelling ctx closes the
// session. A failed write to stdout ends the command and is returned.
// Errors are as for Executor.Run.
func (s *SSH) RunStream(ctx context.Context, line string, stdin io.Reader, stdout io.Writer) (Output, error) {
	start := time.Now()
	out, err := s.withSession(ctx, RunOptions{}, func(c *sshConn, sess *ssh.Session) (Output, error) {
		return s.streamSession(ctx, c, sess, line, stdin, stdout)
	})
	logCommandRun(s.log, line, RunOptions{}, time.Since(start), out, err)
	return out, err
}

func (s *SSH) streamSession(ctx context.Context, c *sshConn, sess *ssh.Session, line string, stdin io.Reader, stdout io.Writer) (Output, error) {
	prefix := s.st.prefix
	lost := Output{Code: -1}
	s.sessions.Add(1)
	roundtrip.Count(ctx, roundtrip.SSH)
	c.open.Add(1)
	defer c.open.Add(-1)
	defer sess.Close()

	stderr := &boundedBuffer{max: maxStreamStderr}
	sess.Stderr = stderr
	// Pipes rather than sess.Stdin/Stdout: a failed output write must end
	// the command at once (not leave it blocked on a full window), and an
	// unread input must not make Wait fail.
	in, err := sess.StdinPipe()
	if err != nil {
		return lost, newExecutorError(ErrUnreachable, "%s: %v", prefix, err)
	}
	outPipe, err := sess.StdoutPipe()
	if err != nil {
		return lost, newExecutorError(ErrUnreachable, "%s: %v", prefix, err)
	}
	if err := sess.Start(line); err != nil {
		return lost, startError(prefix, err)
	}

	// Input: copied until the reader ends; a reader that fails ends the
	// input too (the command sees a short stream, as behind a broken
	// pipe). The goroutine may outlive the call while the caller's reader
	// blocks; its writes then fail on the closed session.
	go func() {
		if stdin != nil {
			_, _ = io.Copy(in, stdin)
		}
		_ = in.Close()
	}()

	// Output: copied until EOF; a failed write closes the session so the
	// command stops rather than blocking on a full window.
	if stdout == nil {
		stdout = io.Discard
	}
	// Reading the channel can fail too (it answers with window
	// adjustments on the connection): that is the connection's loss, not
	// the writer's.
	ew := &errWriter{w: stdout}
	var writeErr, readErr error
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		_, err := io.Copy(ew, outPipe)
		switch {
		case ew.err != nil:
			writeErr = ew.err
			_ = sess.Close()
		case err != nil:
			readErr = err
		}
	}()

	done := make(chan error, 1)
	go func() { done <- sess.Wait() }()
	select {
	case err := <-done:
		<-copied // the output that arrived before the exit status
		out := Output{Stderr: stderr.String()}
		var exit *ssh.ExitError
		switch {
		case writeErr != nil:
			out.Code = -1
			return out, fmt.Errorf("%s: writing the command's output: %w", prefix, writeErr)
		case err == nil && readErr != nil:
			out.Code = -1
			return out, newExecutorError(ErrConnectionLost, "%s: connection lost while reading the output: %v", prefix, readErr)
		case err == nil:
			return out, nil
		case errors.As(err, &exit):
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
		_ = sess.Signal(ssh.SIGKILL)
		_ = sess.Close()
		// The output copy ends when the close reaches the server; a dead
		// connection may never answer, so wait only a little.
		t := time.NewTimer(streamCloseWait)
		defer t.Stop()
		select {
		case <-copied:
		case <-t.C:
		}
		return lost, cancelledError(prefix, true, ctx.Err())
	}
}

// boundedBuffer keeps the first max bytes written and counts the rest.
type boundedBuffer struct {
	mu      sync.Mutex
	max     int
	buf     []byte
	dropped int64
}

func (b *boundedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	keep := min(len(p), b.max-len(b.buf))
	b.buf = append(b.buf, p[:keep]...)
	b.dropped += int64(len(p) - keep)
	return len(p), nil
}

func (b *boundedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.dropped > 0 {
		return fmt.Sprintf("%s\n[%d more bytes of stderr not kept]\n", b.buf, b.dropped)
	}
	return string(b.buf)
}

// RunStream runs line on the shared connection. See SSH.RunStream.
func (e *SharedSSHExecutor) RunStream(ctx context.Context, line string, stdin io.Reader, stdout io.Writer) (Output, error) {
	s, err := e.acquire()
	if err != nil {
		return Output{}, err
	}
	return s.RunStream(ctx, line, stdin, stdout)
}
