package middleware

import (
	"fmt"
	"strings"
)

// Errno values the middleware reports (Linux errno numbers, plus the
// middleware's own above 200; see middlewared/service_exception.py).
const (
	ENOENT    = 2
	EBUSY     = 16
	EEXIST    = 17
	EINVAL    = 22
	ENOSPC    = 28
	ENOTEMPTY = 39
	EFAULT    = 14
	EPERM     = 1
	EACCES    = 13
	EBADMSG   = 74
)

// CallError is the middleware's CallError: a method refused or failed.
// REST renders it as 422 {"message","errno"}; JSON-RPC as code -32001 with
// data {error: Errno, errname, reason: Message, extra}.
type CallError struct {
	Errno   int
	Message string
	Extra   any
}

func (e *CallError) Error() string { return e.Message }

// Errorf returns a *CallError.
func Errorf(errno int, format string, args ...any) error {
	return &CallError{Errno: errno, Message: fmt.Sprintf(format, args...)}
}

// ValidationError is one invalid attribute. Attribute is the schema path,
// e.g. "pool_dataset_create.volsize" or "sharing_nfs_create.paths".
type ValidationError struct {
	Attribute string
	Message   string
	Errno     int // EINVAL when zero
}

// ValidationErrors is the middleware's ValidationErrors. REST renders it as
// 422 {"<attribute>": [{"message","errno"}]}; JSON-RPC as code -32602 with
// data.extra = [[attribute, message, errno], ...].
type ValidationErrors []ValidationError

func (v ValidationErrors) Error() string {
	parts := make([]string, len(v))
	for i, e := range v {
		parts[i] = "[" + errnoName(e.errno()) + "] " + e.Attribute + ": " + e.Message
	}
	return strings.Join(parts, "\n")
}

func (e ValidationError) errno() int {
	if e.Errno == 0 {
		return EINVAL
	}
	return e.Errno
}

// Invalid returns ValidationErrors with one attribute.
func Invalid(attribute, format string, args ...any) error {
	return ValidationErrors{{Attribute: attribute, Message: fmt.Sprintf(format, args...)}}
}

// InstanceNotFound is what get_instance (and update/delete of an id that
// does not exist) raises. REST answers a GET of a missing id with 404
// {"message"} and other verbs with 422; JSON-RPC with -32602 (it is a
// validation error with errno ENOENT in the middleware).
type InstanceNotFound struct {
	Message string // e.g. "NFS Share 7 does not exist"
}

func (e *InstanceNotFound) Error() string { return e.Message }

// NotFound returns an *InstanceNotFound for "<what> <id> does not exist".
func NotFound(what string, id any) error {
	return &InstanceNotFound{Message: fmt.Sprintf("%s %v does not exist", what, id)}
}

// errnoName names the errnos above, as Python's errno.errorcode does.
func errnoName(n int) string {
	switch n {
	case ENOENT:
		return "ENOENT"
	case EBUSY:
		return "EBUSY"
	case EEXIST:
		return "EEXIST"
	case EINVAL:
		return "EINVAL"
	case ENOSPC:
		return "ENOSPC"
	case ENOTEMPTY:
		return "ENOTEMPTY"
	case EFAULT:
		return "EFAULT"
	case EPERM:
		return "EPERM"
	case EACCES:
		return "EACCES"
	case EBADMSG:
		return "EBADMSG"
	}
	return fmt.Sprintf("E%d", n)
}

// ErrnoName is errnoName for the transports (JSON-RPC data.errname).
func ErrnoName(n int) string { return errnoName(n) }
