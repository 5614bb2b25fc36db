package node

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	utilexec "k8s.io/utils/exec"
)

// DefaultCommandTimeout bounds a host command that was given no deadline:
// a hung iscsiadm or mount must not hold a volume's lock forever.
const DefaultCommandTimeout = 2 * time.Minute

// redacted replaces sensitive values in logs and errors.
const redacted = "<redacted>"

// Exec is the single seam through which this package runs host commands.
// It adds a timeout to every command, logs each at debug level with
// sensitive values redacted, and (through Run) puts the command's output in
// the returned error so a failed attach says why.
//
// Exec also implements utilexec.Interface, so mount-utils
// (SafeFormatAndMount, ResizeFs) runs blkid, mkfs and resize2fs through it
// too. On that path errors are returned unchanged, because mount-utils
// type-asserts utilexec.ExitError to read exit codes.
type Exec struct {
	inner   utilexec.Interface
	timeout time.Duration
	log     *slog.Logger
}

var _ utilexec.Interface = (*Exec)(nil)

// NewExec wraps inner (nil: the real exec). timeout <= 0 means
// DefaultCommandTimeout; a nil log means slog.Default().
func NewExec(inner utilexec.Interface, timeout time.Duration, log *slog.Logger) *Exec {
	if inner == nil {
		inner = utilexec.New()
	}
	if timeout <= 0 {
		timeout = DefaultCommandTimeout
	}
	if log == nil {
		log = slog.Default()
	}
	return &Exec{inner: inner, timeout: timeout, log: log}
}

// Command describes one host command for Run.
type Command struct {
	Name string
	Args []string
	// Sensitive values (CHAP secrets, passwords) never reach logs or
	// errors: any argument or output containing one is redacted.
	Sensitive []string
	// Stdin, when set, is fed to the command.
	Stdin []byte
	// Timeout overrides the Exec's default for this command.
	Timeout time.Duration
}

// Run runs c and returns its combined output. A failure's error names the
// command (redacted), the exit status or timeout, and the trimmed output;
// it wraps the underlying error, so ExitCode and errors.Is still work.
func (e *Exec) Run(ctx context.Context, c Command) ([]byte, error) {
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = e.timeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	cmd := e.inner.CommandContext(ctx, c.Name, c.Args...)
	if c.Stdin != nil {
		cmd.SetStdin(bytes.NewReader(c.Stdin))
	}
	start := time.Now()
	out, err := cmd.CombinedOutput()
	e.logDone(c.Name, c.Args, c.Sensitive, start, err)
	if err == nil {
		return out, nil
	}
	line := redact(strings.Join(append([]string{c.Name}, c.Args...), " "), c.Sensitive)
	msg := strings.TrimSpace(redact(string(out), c.Sensitive))
	if ctx.Err() != nil {
		// The process was killed; its exit error ("signal: killed") would
		// hide the reason.
		err = fmt.Errorf("%w (%v)", ctx.Err(), err)
	}
	if msg == "" {
		return out, fmt.Errorf("%s: %w", line, err)
	}
	return out, fmt.Errorf("%s: %w: %s", line, err, msg)
}

// ExitCode returns the exit status of a command that ran and failed.
func ExitCode(err error) (int, bool) {
	var ee utilexec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitStatus(), true
	}
	return 0, false
}

// Command implements utilexec.Interface with the default timeout.
func (e *Exec) Command(name string, args ...string) utilexec.Cmd {
	return e.CommandContext(context.Background(), name, args...)
}

// CommandContext implements utilexec.Interface: the command gets the
// default timeout (on top of ctx) and is logged when it finishes.
func (e *Exec) CommandContext(ctx context.Context, name string, args ...string) utilexec.Cmd {
	ctx, cancel := context.WithTimeout(ctx, e.timeout)
	return &loggedCmd{Cmd: e.inner.CommandContext(ctx, name, args...), e: e, cancel: cancel, name: name, args: args}
}

// LookPath implements utilexec.Interface.
func (e *Exec) LookPath(file string) (string, error) { return e.inner.LookPath(file) }

func (e *Exec) logDone(name string, args, sensitive []string, start time.Time, err error) {
	attrs := []any{
		slog.String("cmd", name),
		slog.Any("args", redactAll(args, sensitive)),
		slog.Duration("took", time.Since(start)),
	}
	if err != nil {
		if code, ok := ExitCode(err); ok {
			attrs = append(attrs, slog.Int("exit", code))
		} else {
			attrs = append(attrs, slog.String("error", redact(err.Error(), sensitive)))
		}
	}
	e.log.Debug("exec", attrs...)
}

// loggedCmd logs the command when it finishes and releases its timeout.
// Callers on this path (mount-utils) pass no secrets on the command line.
type loggedCmd struct {
	utilexec.Cmd
	e      *Exec
	cancel context.CancelFunc
	name   string
	args   []string
	start  time.Time
}

func (c *loggedCmd) begin() { c.start = time.Now() }

func (c *loggedCmd) end(err error) {
	c.e.logDone(c.name, c.args, nil, c.start, err)
	c.cancel()
}

func (c *loggedCmd) Run() error {
	c.begin()
	err := c.Cmd.Run()
	c.end(err)
	return err
}

func (c *loggedCmd) CombinedOutput() ([]byte, error) {
	c.begin()
	out, err := c.Cmd.CombinedOutput()
	c.end(err)
	return out, err
}

func (c *loggedCmd) Output() ([]byte, error) {
	c.begin()
	out, err := c.Cmd.Output()
	c.end(err)
	return out, err
}

func (c *loggedCmd) Start() error {
	c.begin()
	err := c.Cmd.Start()
	if err != nil {
		c.end(err)
	}
	return err
}

func (c *loggedCmd) Wait() error {
	err := c.Cmd.Wait()
	c.end(err)
	return err
}

// redact replaces every non-empty sensitive value in s.
func redact(s string, sensitive []string) string {
	for _, v := range sensitive {
		if v != "" {
			s = strings.ReplaceAll(s, v, redacted)
		}
	}
	return s
}

func redactAll(args, sensitive []string) []string {
	if len(sensitive) == 0 {
		return args
	}
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = redact(a, sensitive)
	}
	return out
}
