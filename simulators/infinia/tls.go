package infinia

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

// certHosts are the names the certificate is valid for: the simulator
// listens on loopback.
var certHosts = []string{"127.0.0.1", "::1", "localhost"}

// certStore keeps the self-signed certificate in StateDir/tls so that a
// client that trusts it keeps trusting it across restarts.
type certStore struct {
	dir string

	mu      sync.Mutex
	cert    *tls.Certificate
	certPEM []byte
}

func (c *certStore) get() (tls.Certificate, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cert != nil {
		return *c.cert, nil
	}
	certFile, keyFile := filepath.Join(c.dir, "cert.pem"), filepath.Join(c.dir, "key.pem")
	certPEM, err1 := os.ReadFile(certFile)
	keyPEM, err2 := os.ReadFile(keyFile)
	if err1 != nil || err2 != nil || !usable(certPEM, keyPEM) {
		var err error
		if certPEM, keyPEM, err = makeCert(); err != nil {
			return tls.Certificate{}, fmt.Errorf("infinia: generating the TLS certificate: %w", err)
		}
		if err := os.MkdirAll(c.dir, 0o700); err != nil {
			return tls.Certificate{}, fmt.Errorf("infinia: %w", err)
		}
		if err := os.WriteFile(keyFile, keyPEM, 0o600); err != nil {
			return tls.Certificate{}, fmt.Errorf("infinia: %w", err)
		}
		if err := os.WriteFile(certFile, certPEM, 0o644); err != nil {
			return tls.Certificate{}, fmt.Errorf("infinia: %w", err)
		}
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("infinia: TLS certificate: %w", err)
	}
	c.cert, c.certPEM = &cert, certPEM
	return cert, nil
}

// usable: the pair loads, names every host and is good for another day.
func usable(certPEM, keyPEM []byte) bool {
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return false
	}
	leaf, err := x509.ParseCertificate(cert.Certificate[0])
	if err != nil || time.Until(leaf.NotAfter) < 24*time.Hour {
		return false
	}
	for _, h := range certHosts {
		if leaf.VerifyHostname(h) != nil {
			return false
		}
	}
	return true
}

func (c *certStore) pem() []byte {
	if _, err := c.get(); err != nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]byte(nil), c.certPEM...)
}

// makeCert makes a self-signed ECDSA P-256 certificate for certHosts,
// valid for two years; it is its own CA.
func makeCert() (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "infinia-simulator", Organization: []string{"switchyard lab"}},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(2 * 365 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	for _, h := range certHosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
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
