package truenas

import (
	"errors"
	"fmt"
	"strings"

	"github.com/switchyard-csi/switchyard/simulators/truenas/middleware"
)

// The errors the server itself raises, besides mw's.
var (
	errNotAuthenticated = &middleware.CallError{Errno: errnoENOTAUTHENTICATED, Message: "Not authenticated"}
	errInjected         = &middleware.CallError{Errno: middleware.EFAULT, Message: "injected fault"}
)

// noMethodError is a call of a method the simulated release does not have
// (or the simulator does not serve). Its text is the middleware's method
// lookup's (utils/service/call.py), which the legacy protocol and REST
// show: "Invalid method name" (EBADMSG) without a dot, "Service 'x' not
// found" for a service the release lacks, "Method 'm' not found in 'x'"
// otherwise. JSON-RPC answers -32601 "Method does not exist" before that.
type noMethodError struct {
	method       string
	knownService bool
}

func (e *noMethodError) Error() string {
	svc, name, ok := cutLast(e.method, ".")
	switch {
	case !ok:
		return "Invalid method name"
	case !e.knownService:
		return "Service " + pyQuote(svc) + " not found"
	}
	return "Method " + pyQuote(name) + " not found in " + pyQuote(svc)
}

func (e *noMethodError) errno() int {
	if !strings.Contains(e.method, ".") {
		return middleware.EBADMSG
	}
	return errnoENOMETHOD
}

func cutLast(s, sep string) (before, after string, found bool) {
	if i := strings.LastIndex(s, sep); i >= 0 {
		return s[:i], s[i+len(sep):], true
	}
	return s, "", false
}

// pyQuote is Python's repr() of a plain str.
func pyQuote(s string) string {
	if strings.Contains(s, "'") && !strings.Contains(s, `"`) {
		return `"` + s + `"`
	}
	return "'" + strings.ReplaceAll(s, "'", `\'`) + "'"
}

// panicError is a handler that panicked: a simulator bug, reported to the
// client as an internal error with the Go stack.
type panicError struct {
	value any
	stack string
}

func (e *panicError) Error() string { return fmt.Sprintf("panic in method handler: %v", e.value) }

// errKind is how the middleware would have classified an error.
type errKind int

const (
	kindCall       errKind = iota // CallError
	kindValidation                // ValidationErrors
	kindNotFound                  // InstanceNotFound (a ValidationError with errno ENOENT)
	kindNoMethod                  // unknown method
	kindInternal                  // anything else: a simulator failure
)

// classified is an error with what each transport needs to render it.
type classified struct {
	kind     errKind
	call     *middleware.CallError
	invalid  middleware.ValidationErrors
	notFound *middleware.InstanceNotFound
	err      error
}

func classify(err error) classified {
	var ce *middleware.CallError
	var ve middleware.ValidationErrors
	var nf *middleware.InstanceNotFound
	var nm *noMethodError
	switch {
	case errors.As(err, &nf):
		return classified{kind: kindNotFound, notFound: nf, err: err}
	case errors.As(err, &ve):
		return classified{kind: kindValidation, invalid: ve, err: err}
	case errors.As(err, &ce):
		return classified{kind: kindCall, call: ce, err: err}
	case errors.As(err, &nm):
		return classified{kind: kindNoMethod, call: &middleware.CallError{Errno: nm.errno(), Message: nm.Error()}, err: err}
	}
	return classified{kind: kindInternal, err: err}
}

// errnoOf is a ValidationError's errno (EINVAL when unset).
func errnoOf(v middleware.ValidationError) int {
	if v.Errno == 0 {
		return middleware.EINVAL
	}
	return v.Errno
}

// callReason is str(CallError): "[ENOENT] message".
func callReason(e *middleware.CallError) string { return "[" + errname(e.Errno) + "] " + e.Message }

// validationReason is str(ValidationErrors): one "[EINVAL] attr: message"
// line per error, each ending in a newline.
func validationReason(v middleware.ValidationErrors) string {
	var b strings.Builder
	for _, e := range v {
		fmt.Fprintf(&b, "[%s] %s: %s\n", errname(errnoOf(e)), e.Attribute, e.Message)
	}
	return b.String()
}

// notFoundReason is str(InstanceNotFound): its attribute is None.
func notFoundReason(e *middleware.InstanceNotFound) string { return "[ENOENT] None: " + e.Message }

// validationExtra is data.extra of a validation error: [[attr, msg, errno]].
func validationExtra(v middleware.ValidationErrors) [][]any {
	out := make([][]any, len(v))
	for i, e := range v {
		out[i] = []any{e.Attribute, e.Message, errnoOf(e)}
	}
	return out
}

// traceOf is the data.trace object middlewared attaches to an error (a
// Python traceback there; the class and message here, the Go stack for
// panics).
func traceOf(class, msg, formatted string) map[string]any {
	if formatted == "" {
		formatted = class + ": " + msg + "\n"
	}
	return map[string]any{"class": class, "frames": []any{}, "formatted": formatted, "repr": class + "(" + fmt.Sprintf("%q", msg) + ")"}
}

// internalTrace is the trace of a kindInternal error.
func internalTrace(err error) map[string]any {
	var pe *panicError
	if errors.As(err, &pe) {
		return traceOf("GoPanic", err.Error(), pe.stack)
	}
	return traceOf("Exception", err.Error(), "")
}
