package api

import (
	"context"
	"encoding/pem"
	"errors"
	"net/http/httptest"
	"testing"
)

func TestTLSVerification(t *testing.T) {
	f := newFakeAPI(t)
	f.route(servicePath, okService)
	srv := httptest.NewTLSServer(f)
	t.Cleanup(srv.Close)
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})

	cases := []struct {
		name     string
		insecure bool
		ca       []byte
		wantTLS  bool
	}{
		{"verify without the CA fails", false, nil, true},
		{"verify with caCert", false, caPEM, false},
		{"insecureSkipVerify", true, nil, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := f.config(srv.URL)
			cfg.InsecureSkipVerify, cfg.CACert = tc.insecure, tc.ca
			c := newClient(t, cfg)
			_, err := c.GetService(context.Background(), "red", "csiService")
			if tc.wantTLS {
				if !errors.Is(err, ErrTLS) || !errors.Is(err, ErrUnreachable) {
					t.Fatalf("want ErrTLS, got %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}
