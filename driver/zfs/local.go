package zfs

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os/exec"
	"time"
)

// DefaultLocalShell runs command lines for Local when no shell is given.
const DefaultLocalShell = "/bin/sh"

// localWaitDelay bounds how long Run waits for output pipes after the
// shell exits or is killed: a background child that keeps stdout open
// must not hang the caller.
const localWaitDelay = 2 * time.Second

// Local is an Executor that runs command lines on this machine with
// `<shell> -c <line>` (the zfs-local drivers, and tests).
type Local struct {
	shell string
	log   *slog.Logger
}

var _ Executor = (*Local)(nil)

// NewLocal returns a local executor; shell defaults to /bin/sh and log may be nil.
func NewLocal(shell string, log *slog.Logger) *Local {
	if shell == "" {
		shell = DefaultLocalShell
	}
	return &Local{shell: shell, log: orDiscard(log).With("executor", "local", "shell", shell)}
}

// Run runs line with the shell and waits for it. See Executor. A pty is
// not available locally: RunOptions.PTY is ignored.
func (l *Local) Run(ctx context.Context, line string, opts RunOptions) (Output, error) {
	start := time.Now()
	out, err := l.run(ctx, line, opts)
	logCommandRun(l.log, line, opts, time.Since(start), out, err)
	return out, err
}

func (l *Local) run(ctx context.Context, line string, opts RunOptions) (Output, error) {
	notRun := Output{Code: -1}
	prefix := "local " + l.shell
	if opts.PTY {
		l.log.Debug("pty requested but not supported by the local executor; running without one")
	}
	if err := ctx.Err(); err != nil {
		return notRun, cancelledError(prefix, false, err)
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, l.shell, "-c", line)
	// Without opts.Stdin the command reads /dev/null (exec's nil Stdin),
	// never the driver's own stdin.
	if len(opts.Stdin) > 0 {
		cmd.Stdin = bytes.NewReader(opts.Stdin)
	}
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = localWaitDelay
	localKillGroup(cmd)
	if err := cmd.Start(); err != nil {
		return notRun, newExecutorError(ErrUnreachable, "%s: cannot start the shell: %v", prefix, err)
	}
	err := cmd.Wait()
	out := Output{Stdout: stdout.String(), Stderr: stderr.String(), Code: localExitCode(cmd)}
	if ctxErr := ctx.Err(); err != nil && ctxErr != nil {
		// Killed (or about to be) by the cancellation; a command that
		// finished cleanly first has err == nil and keeps its result.
		out.Code = -1
		return out, cancelledError(prefix, true, ctxErr)
	}
	var exitErr *exec.ExitError
	switch {
	case err == nil, errors.As(err, &exitErr):
		return out, nil
	case errors.Is(err, exec.ErrWaitDelay):
		// The shell exited; only a lingering child held the pipes open.
		return out, nil
	default:
		return out, newExecutorError(ErrConnectionLost, "%s: waiting for the command: %v", prefix, err)
	}
}

// Close is a no-op: Local holds no connection.
func (l *Local) Close() error { return nil }
