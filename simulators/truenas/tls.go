package truenas

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

// certStore is the server's self-signed certificate, kept in StateDir/tls
// so that a client that trusted it still does after a restart.
type certStore struct {
	dir   string
	hosts []string

	mu      sync.Mutex
	cert    *tls.Certificate
	certPEM []byte
}

// get loads or creates the certificate.
func (c *certStore) get() (tls.Certificate, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cert != nil {
		return *c.cert, nil
	}
	certFile, keyFile := filepath.Join(c.dir, "cert.pem"), filepath.Join(c.dir, "key.pem")
	certPEM, err1 := os.ReadFile(certFile)
	keyPEM, err2 := os.ReadFile(keyFile)
	if err1 == nil && err2 == nil {
		if cert, err := tls.X509KeyPair(certPEM, keyPEM); err == nil && c.stillValid(cert) {
			c.cert, c.certPEM = &cert, certPEM
			return cert, nil
		}
	}
	certPEM, keyPEM, err := selfSigned(c.hosts)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("truenas: generating the TLS certificate: %w", err)
	}
	if err := os.MkdirAll(c.dir, 0o700); err != nil {
		return tls.Certificate{}, fmt.Errorf("truenas: %w", err)
	}
	if err := os.WriteFile(keyFile, keyPEM, 0o600); err != nil {
		return tls.Certificate{}, fmt.Errorf("truenas: %w", err)
	}
	if err := os.WriteFile(certFile, certPEM, 0o644); err != nil {
		return tls.Certificate{}, fmt.Errorf("truenas: %w", err)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("truenas: %w", err)
	}
	c.cert, c.certPEM = &cert, certPEM
	return cert, nil
}

// stillValid: not expiring within a day, and naming every host.
func (c *certStore) stillValid(cert tls.Certificate) bool {
	leaf, err := x509.ParseCertificate(cert.Certificate[0])
	if err != nil || time.Until(leaf.NotAfter) < 24*time.Hour {
		return false
	}
	for _, h := range c.hosts {
		if leaf.VerifyHostname(h) != nil {
			return false
		}
	}
	return true
}

func (c *certStore) pem() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]byte(nil), c.certPEM...)
}

// CertFile is where the certificate's PEM is kept (StateDir/tls/cert.pem).
func (s *Server) CertFile() string { return filepath.Join(s.certs.dir, "cert.pem") }

// selfSigned makes an ECDSA P-256 certificate for hosts, valid for a year.
func selfSigned(hosts []string) (certPEM, keyPEM []byte, err error) {
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
		Subject:               pkix.Name{CommonName: "localhost", Organization: []string{"switchyard TrueNAS simulator"}},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(365 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true, // self-signed: the certificate is its own root
	}
	for _, h := range hosts {
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
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), nil
}
