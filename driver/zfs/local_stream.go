package zfs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"time"
)

// RunStream runs line with the shell, stdin fed from stdin (nil: none)
// and stdout written to stdout (nil: discarded), keeping only the first
// maxStreamStderr bytes of stderr. Output.Stdout stays empty. Cancelling
// ctx kills the command's process group. See SSH.RunStream.
func (l *Local) RunStream(ctx context.Context, line string, stdin io.Reader, stdout io.Writer) (Output, error) {
	start := time.Now()
	out, err := l.runStream(ctx, line, stdin, stdout)
	logCommandRun(l.log, line, RunOptions{}, time.Since(start), out, err)
	return out, err
}

func (l *Local) runStream(ctx context.Context, line string, stdin io.Reader, stdout io.Writer) (Output, error) {
	prefix := "local " + l.shell
	if err := ctx.Err(); err != nil {
		return Output{Code: -1}, cancelledError(prefix, false, err)
	}
	if stdout == nil {
		stdout = io.Discard
	}
	stderr := &boundedBuffer{max: maxStreamStderr}
	cmd := exec.CommandContext(ctx, l.shell, "-c", line)
	cmd.Stdin = stdin // nil: /dev/null
	// A writer that fails makes exec's copy stop; the command then dies of
	// SIGPIPE on its next write and Wait reports that exit, not the
	// write's error: keep it.
	sw := &errWriter{w: stdout}
	cmd.Stdout, cmd.Stderr = sw, stderr
	cmd.WaitDelay = localWaitDelay
	localKillGroup(cmd)
	if err := cmd.Start(); err != nil {
		return Output{Code: -1}, newExecutorError(ErrUnreachable, "%s: cannot start the shell: %v", prefix, err)
	}
	err := cmd.Wait()
	out := Output{Stderr: stderr.String(), Code: localExitCode(cmd)}
	if ctxErr := ctx.Err(); err != nil && ctxErr != nil {
		out.Code = -1
		return out, cancelledError(prefix, true, ctxErr)
	}
	var exitErr *exec.ExitError
	switch {
	case sw.err != nil:
		out.Code = -1
		return out, fmt.Errorf("%s: writing the command's output: %w", prefix, sw.err)
	case err == nil, errors.As(err, &exitErr):
		return out, nil
	case errors.Is(err, exec.ErrWaitDelay):
		return out, nil
	default:
		// exec copies stdin and stdout itself: a failed copy lands here.
		out.Code = -1
		return out, fmt.Errorf("%s: streaming the command's input or output: %w", prefix, err)
	}
}

// errWriter remembers the first failed write (exec reads it only after
// Wait, when its copy has ended).
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	n, err := e.w.Write(p)
	if err != nil && e.err == nil {
		e.err = err
	}
	return n, err
}
