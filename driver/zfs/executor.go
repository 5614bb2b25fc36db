package zfs

import (
	"context"
	"errors"
)

// Output is what a command printed and its exit status.
type Output struct {
	Stdout string
	Stderr string
	Code   int
}

// RunOptions tune one command.
type RunOptions struct {
	// PTY asks for a pseudo-terminal: targetcli and nvmetcli behave
	// differently without one, so democratic-csi runs them that way.
	PTY bool
	// Stdin is fed to the command, then closed.
	Stdin []byte
	// Sensitive values (CHAP secrets) are redacted from logs and errors.
	Sensitive []string
}

// Executor runs one shell command line on the storage host. The line is
// interpreted by the host's shell, so callers build it with Quote/Line.
//
// A command that ran and exited non-zero is not an error: it comes back in
// Output.Code. An error means the command could not be run or its outcome
// is unknown; it wraps one of ErrAuth, ErrUnreachable or ErrConnectionLost.
type Executor interface {
	Run(ctx context.Context, line string, opts RunOptions) (Output, error)
	// Close releases connections; later Runs reconnect.
	Close() error
}

var (
	// ErrAuth: the host refused the credentials. Retrying will not help.
	ErrAuth = errors.New("authentication failed")
	// ErrUnreachable: no connection could be made; the command did not run.
	ErrUnreachable = errors.New("host unreachable")
	// ErrConnectionLost: the connection dropped while the command ran; it
	// may or may not have taken effect. Idempotent callers retry.
	ErrConnectionLost = errors.New("connection lost during command")
)
