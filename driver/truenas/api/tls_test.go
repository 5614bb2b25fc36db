package api

import (
	"encoding/pem"
	"errors"
	"strings"
	"testing"
)

func TestTLS(t *testing.T) {
	for _, version := range []string{"25.10", "24.10"} { // WebSocket and REST
		f := newFakeNAS(t, version).startTLS()
		certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: f.srv.Certificate().Raw})
		tests := []struct {
			name     string
			mutate   func(*Config)
			wantErr  error
			mentions []string
		}{
			{"unknown certificate", func(*Config) {}, ErrTLS, []string{"unknown authority", "httpConnection.allowInsecure", "httpConnection.caCert"}},
			{"caCert", func(c *Config) { c.CACert = certPEM }, nil, nil},
			{"allowInsecure", func(c *Config) { c.AllowInsecure = true }, nil, nil},
			{"wrong name", func(c *Config) { c.CACert, c.Host = certPEM, "localhost" }, ErrTLS, []string{"not valid for this host", "httpConnection.host"}},
			{"http to an https port", func(c *Config) { c.Protocol = "http" }, nil, nil},
		}
		for _, tt := range tests {
			t.Run(version+"/"+tt.name, func(t *testing.T) {
				cfg := f.keyConfig()
				tt.mutate(&cfg)
				if tt.name == "http to an https port" {
					// A plain request to a TLS port: the server answers 400 to
					// the handshake. That is no sign of an old server, so the
					// client must not fall back to REST and send the key there.
					c := newClient(t, cfg)
					_, err := c.Call(ctxT(t), "test.echo", 1)
					if !errors.Is(err, ErrUnreachable) || !strings.Contains(err.Error(), "httpConnection.protocol") {
						t.Fatalf("error %v, want ErrUnreachable naming the protocol", err)
					}
					if n := c.Stats().HTTPRequests; n != 0 {
						t.Fatalf("%d REST requests sent over plain http", n)
					}
					return
				}
				c := newClient(t, cfg)
				res, err := c.Call(ctxT(t), "test.echo", 1)
				if tt.wantErr == nil {
					if err != nil || string(res) != "1" {
						t.Fatalf("Call: %s, %v", res, err)
					}
					return
				}
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("error %v, want %v", err, tt.wantErr)
				}
				for _, m := range tt.mentions {
					if !strings.Contains(err.Error(), m) {
						t.Errorf("%q does not mention %q", err, m)
					}
				}
			})
		}
	}
}
