package dsm

import (
	"errors"
	"fmt"
	"strings"
)

// Error is a call DSM refused, with its numeric code (-1: the answer
// could not be read).
type Error struct {
	API, Method string
	Code        int
	Detail      string
}

func (e *Error) Error() string {
	msg := fmt.Sprintf("DSM %s %s: error %d", e.API, e.Method, e.Code)
	if m := e.Meaning(); m != "" {
		msg += " (" + m + ")"
	}
	if e.Detail != "" {
		msg += ": " + e.Detail
	}
	return msg
}

// SessionLost is true for the codes after which a new login helps: 106
// session timeout, 107 session interrupted by a duplicate login, 119 SID
// not found.
func (e *Error) SessionLost() bool { return e.Code == 106 || e.Code == 107 || e.Code == 119 }

// Meaning is what DSM's documentation says a code means.
func (e *Error) Meaning() string {
	if e.API == "SYNO.API.Auth" {
		if m, ok := authCodes[e.Code]; ok {
			return m
		}
	}
	if strings.HasPrefix(e.API, "SYNO.Core.Share") {
		if m, ok := shareCodes[e.Code]; ok {
			return m
		}
	}
	if m, ok := codes[e.Code]; ok {
		return m
	}
	return ""
}

var codes = map[int]string{
	100: "unknown error", 101: "no parameter of API, method or version", 102: "the requested API does not exist",
	103: "the requested method does not exist", 104: "the requested version does not support the functionality",
	105: "the logged in session does not have permission", 106: "session timeout",
	107: "session interrupted by duplicated login", 119: "SID not found", 120: "invalid parameter",
	18990002: "the volume is out of disk space", 18990318: "the LUN type does not suit the volume's file system",
	18990500: "bad LUN type", 18990531: "no such LUN", 18990532: "no such snapshot", 18990538: "a LUN with this name already exists",
	18990541: "the maximum number of LUNs has been reached", 18990542: "the maximum number of iSCSI targets has been reached",
	18990543: "the maximum number of snapshots has been reached", 18990635: "invalid ioPolicy",
	18990708: "bad target authentication info", 18990710: "no such iSCSI target", 18990744: "an iSCSI target with this name or IQN already exists",
}

var authCodes = map[int]string{
	400: "no such account or incorrect password", 401: "disabled account", 402: "permission denied",
	403: "2-step verification code required", 404: "failed to authenticate 2-step verification code",
	406: "2-step verification is enforced for this account", 407: "the IP address is blocked after too many failed logins",
	408: "expired password cannot change", 409: "expired password", 410: "password must be changed",
}

var shareCodes = map[int]string{
	402: "no such shared folder", 403: "invalid input value", 3300: "shared folder operation failed (for a clone: no such source or snapshot)",
	3301: "a shared folder with this name already exists", 3309: "the maximum number of shared folders has been reached",
	3328: "the shared folder system is busy",
}

// Is reports whether err is a DSM error with one of the codes.
func Is(err error, codes ...int) bool {
	var e *Error
	if !errors.As(err, &e) {
		return false
	}
	for _, c := range codes {
		if e.Code == c {
			return true
		}
	}
	return false
}

// TransportError is a call that got no DSM answer (connection refused,
// TLS failure, HTTP error status, timeout).
type TransportError struct {
	Endpoint string
	Err      error
}

func (e *TransportError) Error() string { return "DSM at " + e.Endpoint + ": " + e.Err.Error() }
func (e *TransportError) Unwrap() error { return e.Err }
