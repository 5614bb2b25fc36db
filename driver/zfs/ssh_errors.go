package zfs

import "fmt"

// executorError is a failure to run a command. Its message stands on its
// own ("ssh root@nas:22: authentication failed (password)") while it
// still matches its category (ErrAuth, ErrUnreachable, ErrConnectionLost)
// and, for a cancelled call, ctx.Err() with errors.Is.
type executorError struct {
	msg   string
	kinds []error
}

func (e *executorError) Error() string   { return e.msg }
func (e *executorError) Unwrap() []error { return e.kinds }

func newExecutorError(kind error, format string, args ...any) error {
	return &executorError{msg: fmt.Sprintf(format, args...), kinds: []error{kind}}
}

// cancelledError reports ctx's end; sent says whether the command had
// already reached the host (and so may have run).
func cancelledError(prefix string, sent bool, ctxErr error) error {
	what := "cancelled before the command was sent"
	if sent {
		what = "cancelled while the command ran (it may have taken effect)"
	}
	return &executorError{msg: fmt.Sprintf("%s: %s: %v", prefix, what, ctxErr), kinds: []error{ctxErr}}
}

// sshAuthFailed reports refused credentials without echoing them.
func sshAuthFailed(who, methods string) error {
	return newExecutorError(ErrAuth, "ssh %s: authentication failed (%s)", who, methods)
}
