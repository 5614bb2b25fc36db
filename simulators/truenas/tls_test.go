package truenas

import (
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"net/http"
	"strings"
	"testing"

	"github.com/switchyard-csi/switchyard/simulators/truenas/middleware"
)

// TestTLS: with Options.TLS, Start serves https/wss with a certificate that
// CertPEM lets clients trust; plain and TLS listeners can coexist; the
// certificate persists in the state directory.
func TestTLS(t *testing.T) {
	dir := t.TempDir()
	v, _ := middleware.ParseVersion("25.10")
	s, err := New(Options{Version: v, StateDir: dir, TLS: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	if err := s.StartTLS("127.0.0.1:0"); err != nil { // a second TLS port
		t.Fatal(err)
	}
	if !strings.HasPrefix(s.URL(), "https://") || s.PlainURL() != "" || s.TLSURL() != s.URL() {
		t.Errorf("URL %q PlainURL %q TLSURL %q", s.URL(), s.PlainURL(), s.TLSURL())
	}
	hc := tlsClient(t, s)
	status, body := rest(t, hc, s.URL(), "GET", "/system/version", "", restAuth{})
	if status != http.StatusUnauthorized {
		t.Errorf("https without credentials: %d %s", status, body)
	}
	status, body = rest(t, hc, s.URL(), "GET", "/system/version", "", restAuth{user: "root", password: "secret"})
	if status != 200 || string(body) != `"TrueNAS-25.10.1"` {
		t.Errorf("https basic: %d %s", status, body)
	}
	c := dialRPC(t, s, hc)
	c.login()
	// An untrusting client fails the handshake.
	if _, err := http.Get(s.URL() + "/api/versions"); err == nil {
		t.Error("a client without the certificate connected")
	}
	block, _ := pem.Decode(s.CertPEM())
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range []string{"127.0.0.1", "localhost", "::1"} {
		if err := cert.VerifyHostname(h); err != nil {
			t.Errorf("certificate does not name %s: %v", h, err)
		}
	}
	if cert.PublicKeyAlgorithm != x509.ECDSA {
		t.Errorf("certificate key %v, want ECDSA", cert.PublicKeyAlgorithm)
	}
	first := s.CertPEM()
	s.Close()
	s2, err := New(Options{Version: v, StateDir: dir, TLS: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if !bytes.Equal(first, s2.CertPEM()) {
		t.Error("the certificate changed across a restart on the same state directory")
	}
}
