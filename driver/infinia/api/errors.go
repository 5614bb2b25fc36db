package api

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
)

// Sentinels for failures that are not a server's answer.
var (
	// ErrUnreachable: no endpoint could be reached (connection refused,
	// DNS, timeout, or a gateway answering 502/503/504).
	ErrUnreachable = errors.New("infinia unreachable")
	// ErrTLS: an endpoint's certificate was not trusted, or it spoke no TLS.
	ErrTLS = errors.New("infinia TLS failure")
)

// StatusError is a request the server answered with an error status. Title
// is the server's reason ({"title": ...}), with any credential removed.
type StatusError struct {
	Code     int    // HTTP status
	Title    string // the server's reason text
	Method   string // GET, POST, ...
	Path     string // the request path, /redapi/v1/...
	Endpoint string // scheme://host:port that answered, or "secret apis entry N" (Config.SecretAPIs)
}

func (e *StatusError) Error() string {
	title := e.Title
	if title == "" {
		title = http.StatusText(e.Code)
	}
	return fmt.Sprintf("infinia %s: %s %s: %s (HTTP %d)", e.Endpoint, e.Method, e.Path, title, e.Code)
}

// StatusCode returns the HTTP status of a *StatusError in err's chain, or 0.
func StatusCode(err error) int {
	var e *StatusError
	if errors.As(err, &e) {
		return e.Code
	}
	return 0
}

// IsNotFound reports a 404 answer.
func IsNotFound(err error) bool { return StatusCode(err) == http.StatusNotFound }

// IsConflict reports a 409 answer (already exists, still in use).
func IsConflict(err error) bool { return StatusCode(err) == http.StatusConflict }

// UnreachableError lists why each endpoint failed. It matches
// ErrUnreachable, and ErrTLS when every failure was a TLS one.
type UnreachableError struct {
	// Endpoints are the URLs tried, or "secret apis entry N" for endpoints
	// that came from a secret (Config.SecretAPIs).
	Endpoints []string
	Reasons   []string // one per endpoint, same order
	tls       bool
}

func (e *UnreachableError) Error() string {
	parts := make([]string, len(e.Endpoints))
	for i, ep := range e.Endpoints {
		parts[i] = ep + ": " + e.Reasons[i]
	}
	what := "no Infinia API endpoint could be reached"
	if e.tls {
		what = "no Infinia API endpoint passed the TLS check"
	}
	return what + " (" + strings.Join(parts, "; ") + ")"
}

func (e *UnreachableError) Is(target error) bool {
	return target == ErrUnreachable || (target == ErrTLS && e.tls)
}

// tlsProblem explains a TLS failure in config terms, or returns "".
func tlsProblem(err error) string {
	var (
		unknown   x509.UnknownAuthorityError
		hostname  x509.HostnameError
		invalid   x509.CertificateInvalidError
		verify    *tls.CertificateVerificationError
		recordHdr tls.RecordHeaderError
	)
	const fix = "set caCert to its CA certificate, or insecureSkipVerify: true"
	switch {
	case errors.As(err, &unknown):
		return "certificate signed by an unknown authority; " + fix
	case errors.As(err, &hostname):
		return fmt.Sprintf("certificate not valid for this host (%v); %s", hostname.Error(), fix)
	case errors.As(err, &invalid):
		return fmt.Sprintf("certificate invalid (%v); %s", invalid.Error(), fix)
	case errors.As(err, &verify):
		return fmt.Sprintf("certificate could not be verified (%v); %s", verify.Err, fix)
	case errors.As(err, &recordHdr):
		return "the server did not answer TLS (use http:// for a plain HTTP endpoint)"
	}
	return ""
}

// connectProblem describes a failure that happened before the server could
// act on the request (so another endpoint may be tried), or returns "".
func connectProblem(err error) string {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return op.Error()
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return dns.Error()
	}
	return ""
}
