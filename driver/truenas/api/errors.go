package api

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Sentinels for failures that are not the server refusing a call. Every
// error the client returns for them matches one with errors.Is and carries
// its own message naming the endpoint.
var (
	// ErrAuth: the server refused the credentials (or the login mechanism).
	ErrAuth = errors.New("truenas authentication failed")
	// ErrUnreachable: no connection could be made; the call was not sent.
	ErrUnreachable = errors.New("truenas unreachable")
	// ErrConnectionLost: the connection dropped after the call was sent;
	// it may have taken effect. The caller decides whether to retry.
	ErrConnectionLost = errors.New("truenas connection lost")
	// ErrTLS: the server's certificate was not trusted, or it spoke no TLS.
	ErrTLS = errors.New("truenas TLS failure")
	// ErrPlaintextAPIKey: sending the API key would have got it revoked.
	ErrPlaintextAPIKey = errors.New("truenas API key over plain text refused")
	// ErrUnsupported: the server lacks the transport or method asked for.
	ErrUnsupported = errors.New("truenas transport not supported")
)

// Error is a call the server answered with a failure, from either
// transport. Its text names the endpoint and the method and, for
// validation errors, every attribute with its message.
type Error struct {
	Endpoint   string // scheme://host:port
	Method     string // the middleware method called ("pool.dataset.create")
	HTTPStatus int    // REST status, 0 over the WebSocket
	Code       int    // JSON-RPC error code, 0 over REST
	Errno      int    // the middleware's errno (2 ENOENT, 17 EEXIST, 22 EINVAL, ...)
	Errname    string // "ENOENT", ... when the server named it
	Message    string
	Fields     []FieldError // validation errors

	noRoute bool // REST answered a bare 404: the route (method) does not exist
}

// FieldError is one attribute a validation error names.
type FieldError struct {
	Attribute string // e.g. "pool_dataset_create.volsize"; empty for a whole-call error
	Message   string
	Errno     int
}

// JSON-RPC error codes the middleware uses.
const (
	codeMethodNotFound   = -32601
	codeInvalidParams    = -32602
	codeTooManyCalls     = -32000
	codeCallError        = -32001
	errnoENOENT          = 2
	errnoEEXIST          = 17
	errnoEINVAL          = 22
	errnoNotAuthenticate = 207 // the middleware's ENOTAUTHENTICATED
)

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("truenas ")
	if e.Endpoint != "" {
		b.WriteString(e.Endpoint)
		b.WriteString(": ")
	}
	if e.Method != "" {
		b.WriteString(e.Method)
		b.WriteString(": ")
	}
	switch {
	case len(e.Fields) > 0:
		for i, f := range e.Fields {
			if i > 0 {
				b.WriteString("; ")
			}
			if f.Attribute != "" {
				b.WriteString(f.Attribute)
				b.WriteString(": ")
			}
			b.WriteString(f.Message)
		}
	case e.Message != "":
		if e.Errname != "" && e.Code != codeMethodNotFound {
			b.WriteString("[" + e.Errname + "] ")
		}
		b.WriteString(e.Message)
	default:
		b.WriteString("failed without a message")
	}
	switch {
	case e.HTTPStatus != 0 && e.HTTPStatus != 422:
		b.WriteString(" (HTTP " + strconv.Itoa(e.HTTPStatus) + ")")
	case e.Code != 0 && e.Code != codeCallError && e.Code != codeInvalidParams:
		b.WriteString(" (JSON-RPC " + strconv.Itoa(e.Code) + ")")
	}
	return b.String()
}

// IsNotFound: the object the call named does not exist (HTTP 404, ENOENT,
// "does not exist", the middleware's InstanceNotFound).
func IsNotFound(err error) bool {
	var e *Error
	if !errors.As(err, &e) {
		return false
	}
	if e.noRoute {
		return false // a missing method is not a missing object
	}
	if e.HTTPStatus == 404 || e.Errno == errnoENOENT || e.Errname == "ENOENT" || notFoundText(e.Message) {
		return true
	}
	for _, f := range e.Fields {
		if f.Errno == errnoENOENT || notFoundText(f.Message) {
			return true
		}
	}
	return false
}

func notFoundText(s string) bool {
	return strings.Contains(s, "does not exist") || strings.Contains(s, "InstanceNotFound")
}

// IsExists: the object the call would create is already there.
func IsExists(err error) bool {
	var e *Error
	if !errors.As(err, &e) {
		return false
	}
	if e.Errno == errnoEEXIST || e.Errname == "EEXIST" || strings.Contains(e.Message, "already exists") {
		return true
	}
	for _, f := range e.Fields {
		if f.Errno == errnoEEXIST || strings.Contains(f.Message, "already exists") {
			return true
		}
	}
	return false
}

// IsValidation: the server rejected the parameters (JSON-RPC -32602, or a
// REST 422 naming attributes).
func IsValidation(err error) bool {
	var e *Error
	return errors.As(err, &e) && (e.Code == codeInvalidParams || len(e.Fields) > 0)
}

// isNotAuthenticated: the session is gone (expired, or the server
// restarted its session table): log in again.
func isNotAuthenticated(err error) bool {
	var e *Error
	return errors.As(err, &e) && (e.Errname == "ENOTAUTHENTICATED" || e.Errno == errnoNotAuthenticate)
}

func isTooManyCalls(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == codeTooManyCalls
}

func isMethodNotFound(err error) bool {
	var e *Error
	return errors.As(err, &e) && (e.Code == codeMethodNotFound || e.noRoute)
}

// clientError is a failure of the client or the connection. Its message
// stands on its own while it matches its kinds (a sentinel and, for a
// cancelled call, ctx.Err()) with errors.Is.
type clientError struct {
	msg   string
	kinds []error
}

func (e *clientError) Error() string   { return e.msg }
func (e *clientError) Unwrap() []error { return e.kinds }

// errnoNames names the errnos REST answers carry as numbers only.
var errnoNames = map[int]string{
	1: "EPERM", 2: "ENOENT", 5: "EIO", 13: "EACCES", 14: "EFAULT", 16: "EBUSY", 17: "EEXIST",
	22: "EINVAL", 28: "ENOSPC", 39: "ENOTEMPTY", 95: "EOPNOTSUPP", 110: "ETIMEDOUT",
	201: "ENOMETHOD", 207: "ENOTAUTHENTICATED",
}

// splitErrnamePrefix removes the "[ENOENT] " a CallError's text starts with
// over the WebSocket (REST sends the bare message).
func splitErrnamePrefix(s string) (name, rest string) {
	s = strings.TrimSpace(s)
	if !strings.HasPrefix(s, "[") {
		return "", s
	}
	end := strings.Index(s, "]")
	if end < 2 || strings.ContainsAny(s[1:end], " \n") {
		return "", s
	}
	return s[1:end], strings.TrimSpace(s[end+1:])
}

func errorf(format string, args ...any) string { return fmt.Sprintf(format, args...) }

func sortFields(fs []FieldError) {
	sort.SliceStable(fs, func(i, j int) bool { return fs[i].Attribute < fs[j].Attribute })
}
