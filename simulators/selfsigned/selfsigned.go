// Package selfsigned is the simulators' TLS certificate: a self-signed
// ECDSA P-256 certificate for the hosts a simulator listens as, kept in a
// state directory so that a client that trusted it still does after a
// restart. Simulators share it; the clients under test never do.
package selfsigned

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Store loads or makes the certificate in Dir (cert.pem, key.pem).
type Store struct {
	Dir   string
	Hosts []string // IPs and DNS names the certificate must name
	Name  string   // the subject's common name, and the prefix of errors

	mu      sync.Mutex
	cert    *tls.Certificate
	certPEM []byte
}

// CertFile is where the certificate's PEM is kept.
func (s *Store) CertFile() string { return filepath.Join(s.Dir, "cert.pem") }

// Get returns the certificate, making a new one when the stored pair is
// missing, broken, expiring within a day or not naming every host.
func (s *Store) Get() (tls.Certificate, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cert != nil {
		return *s.cert, nil
	}
	certFile, keyFile := s.CertFile(), filepath.Join(s.Dir, "key.pem")
	certPEM, err1 := os.ReadFile(certFile)
	keyPEM, err2 := os.ReadFile(keyFile)
	if err1 != nil || err2 != nil || !s.usable(certPEM, keyPEM) {
		var err error
		if certPEM, keyPEM, err = s.make(); err != nil {
			return tls.Certificate{}, fmt.Errorf("%s: generating the TLS certificate: %w", s.Name, err)
		}
		if err := os.MkdirAll(s.Dir, 0o700); err != nil {
			return tls.Certificate{}, fmt.Errorf("%s: %w", s.Name, err)
		}
		if err := os.WriteFile(keyFile, keyPEM, 0o600); err != nil {
			return tls.Certificate{}, fmt.Errorf("%s: %w", s.Name, err)
		}
		if err := os.WriteFile(certFile, certPEM, 0o644); err != nil {
			return tls.Certificate{}, fmt.Errorf("%s: %w", s.Name, err)
		}
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("%s: TLS certificate: %w", s.Name, err)
	}
	s.cert, s.certPEM = &cert, certPEM
	return cert, nil
}

// PEM is the certificate for clients to trust (nil when it cannot be made).
func (s *Store) PEM() []byte {
	if _, err := s.Get(); err != nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]byte(nil), s.certPEM...)
}

func (s *Store) usable(certPEM, keyPEM []byte) bool {
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return false
	}
	leaf, err := x509.ParseCertificate(cert.Certificate[0])
	if err != nil || time.Until(leaf.NotAfter) < 24*time.Hour {
		return false
	}
	for _, h := range s.Hosts {
		if h != "" && leaf.VerifyHostname(h) != nil {
			return false
		}
	}
	return true
}

// make creates the certificate, valid for a year; it is its own CA.
func (s *Store) make() (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: s.Name, Organization: []string{"switchyard lab"}},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(365 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	for _, h := range s.Hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else if h != "" {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, err
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), nil
}
