package selfsigned

import (
	"bytes"
	"crypto/x509"
	"os"
	"testing"
)

func TestStoreKeepsAndRenews(t *testing.T) {
	dir := t.TempDir()
	s := &Store{Dir: dir, Hosts: []string{"127.0.0.1", "localhost"}, Name: "sim"}
	first := s.PEM()
	if first == nil {
		t.Fatal("no certificate")
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(first) {
		t.Fatal("PEM does not parse")
	}
	cert, _ := s.Get()
	leaf, err := x509.ParseCertificate(cert.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range s.Hosts {
		if _, err := leaf.Verify(x509.VerifyOptions{Roots: pool, DNSName: h}); err != nil {
			t.Errorf("not valid for %s: %v", h, err)
		}
	}
	tests := []struct {
		name  string
		hosts []string
		same  bool
	}{
		{"restart with the same hosts keeps it", s.Hosts, true},
		{"a new host name renews it", []string{"127.0.0.1", "localhost", "nas.lab"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before, _ := os.ReadFile(s.CertFile())
			again := (&Store{Dir: dir, Hosts: tt.hosts, Name: "sim"}).PEM()
			if bytes.Equal(again, before) != tt.same {
				t.Fatalf("same certificate = %v; want %v", !tt.same, tt.same)
			}
		})
	}
	if err := os.WriteFile(s.CertFile(), []byte("garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := (&Store{Dir: dir, Hosts: s.Hosts, Name: "sim"}).PEM(); got == nil || bytes.Equal(got, []byte("garbage")) {
		t.Fatal("a broken stored certificate was not replaced")
	}
}
