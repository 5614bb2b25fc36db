package api

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// newHTTPClient builds the one keep-alive pool a Client uses for REST and
// for WebSocket handshakes. It stays on HTTP/1.1: a WebSocket cannot ride
// an HTTP/2 connection.
func newHTTPClient(st *settings) *http.Client {
	host, _, _ := net.SplitHostPort(st.hostPort)
	tr := &http.Transport{
		Proxy: http.ProxyFromEnvironment,
		DialContext: (&net.Dialer{
			Timeout:   min(st.cfg.Timeout, 30*time.Second),
			KeepAlive: 30 * time.Second,
		}).DialContext,
		TLSClientConfig: &tls.Config{
			ServerName:         host,
			RootCAs:            st.roots,             // nil = the system roots
			InsecureSkipVerify: st.cfg.AllowInsecure, //nolint:gosec // G402: an explicit, logged opt-out in the config (contract 7)
			MinVersion:         tls.VersionTLS12,
		},
		TLSHandshakeTimeout:   min(st.cfg.Timeout, 30*time.Second),
		MaxIdleConns:          st.cfg.MaxConcurrentCalls,
		MaxIdleConnsPerHost:   st.cfg.MaxConcurrentCalls,
		IdleConnTimeout:       90 * time.Second,
		ExpectContinueTimeout: time.Second,
		ForceAttemptHTTP2:     false,
	}
	return &http.Client{
		Transport: tr,
		// A redirect (say http -> https) would resend the Authorization
		// header to wherever it points: fail instead and say why.
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			return fmt.Errorf("redirected to %s://%s (set %s and %s to match)", req.URL.Scheme, req.URL.Host, keyProtocol, keyPort)
		},
	}
}

// tlsProblem explains a TLS failure in config terms, or returns "" when
// err is not one.
func tlsProblem(err error) string {
	var (
		unknown   x509.UnknownAuthorityError
		hostname  x509.HostnameError
		invalid   x509.CertificateInvalidError
		verify    *tls.CertificateVerificationError
		recordHdr tls.RecordHeaderError
	)
	fix := fmt.Sprintf("add its CA certificate to %s, or set %s: true to skip verification", keyCACert, keyAllowInsecure)
	switch {
	case errors.As(err, &unknown):
		return "the server's certificate is signed by an unknown authority; " + fix
	case errors.As(err, &hostname):
		return fmt.Sprintf("the server's certificate is not valid for this host (%v); use the name it was issued for in %s, %s", hostname.Error(), keyHost, fix)
	case errors.As(err, &invalid):
		return fmt.Sprintf("the server's certificate is invalid (%v); %s", invalid.Error(), fix)
	case errors.As(err, &verify):
		return fmt.Sprintf("the server's certificate could not be verified (%v); %s", verify.Err, fix)
	case errors.As(err, &recordHdr):
		return fmt.Sprintf("the server did not answer TLS (is %s right? a TrueNAS serves http on 80 and https on 443)", keyProtocol)
	case strings.Contains(err.Error(), "tls: "):
		return fmt.Sprintf("TLS handshake failed (%v)", err)
	}
	return ""
}

// dialFailed reports whether err happened before a request could reach
// the server (so the call certainly did not run).
func dialFailed(err error) bool {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return true
	}
	var dns *net.DNSError
	return errors.As(err, &dns)
}

// unwrapDialError drops the layers of wrapping (websocket, url.Error) a
// connection failure arrives in, keeping the part a user can act on
// ("dial tcp 10.0.0.5:443: connect: connection refused").
func unwrapDialError(err error) error {
	var op *net.OpError
	if errors.As(err, &op) {
		return op
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return dns
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
