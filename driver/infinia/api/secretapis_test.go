package api

import (
	"bytes"
	"context"
	"encoding/pem"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// hostsOf lists the texts that give away an endpoint: its URL, host:port,
// host, and its port wherever it shows (after an address it was resolved to).
func hostsOf(t *testing.T, endpoint string) []string {
	t.Helper()
	u, err := url.Parse(endpoint)
	if err != nil {
		t.Fatal(err)
	}
	return []string{endpoint, u.Host, u.Hostname(), ":" + u.Port()}
}

// debugClient is a client logging at debug level into the returned buffer.
func debugClient(t *testing.T, cfg Config) (*Client, *bytes.Buffer) {
	t.Helper()
	var buf bytes.Buffer
	c, err := New(cfg, slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c, &buf
}

func wantHidden(t *testing.T, what, text string, hidden []string) {
	t.Helper()
	for _, h := range hidden {
		if strings.Contains(text, h) {
			t.Errorf("%s shows %q: %s", what, h, text)
		}
	}
}

func TestSecretEndpointsNeverShown(t *testing.T) {
	f := newFakeAPI(t)
	f.route(servicePath, okService)
	live := f.start()
	tlsSrv := httptest.NewTLSServer(f)
	t.Cleanup(tlsSrv.Close)
	// The test certificate is for 127.0.0.1 and example.com: reached as
	// localhost, the hostname check fails and x509 quotes the name.
	tlsURL := strings.Replace(tlsSrv.URL, "127.0.0.1", "localhost", 1)
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: tlsSrv.Certificate().Raw})
	dead := deadEndpoint(t)
	deadByName := strings.Replace(deadEndpoint(t), "127.0.0.1", "localhost", 1)

	cases := []struct {
		name   string
		apis   []string
		edit   func(*Config)
		answer func(*http.Request) (int, string, any)
		want   []string // in the error
		logs   bool     // something is logged at debug level
	}{
		{name: "unreachable", apis: []string{dead, deadByName},
			want: []string{"secret apis entry 1", "secret apis entry 2", "no Infinia API endpoint could be reached"}, logs: true},
		{name: "TLS name mismatch", apis: []string{tlsURL}, edit: func(c *Config) { c.CACert = caPEM },
			want: []string{"secret apis entry 1", "not valid for this host"}, logs: true},
		{name: "401", apis: []string{live}, edit: func(c *Config) { c.Password = "wrong-pass" },
			want: []string{"secret apis entry 1", "HTTP 401"}},
		{name: "500 quoting the host", apis: []string{live}, answer: func(r *http.Request) (int, string, any) {
			return 500, "internal error at " + r.Host + " (" + live + ")", nil
		}, want: []string{"secret apis entry 1", "HTTP 500", "internal error at secret apis entry 1"}},
		{name: "failover", apis: []string{dead, live}, logs: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.answer != nil {
				f.route(servicePath, tc.answer)
				t.Cleanup(func() { f.route(servicePath, okService) })
			}
			var hidden []string
			for _, a := range tc.apis {
				hidden = append(hidden, hostsOf(t, a)...)
			}
			for _, secret := range []bool{true, false} {
				cfg := f.config(tc.apis...)
				if tc.edit != nil {
					tc.edit(&cfg)
				}
				cfg.SecretAPIs = secret
				c, logs := debugClient(t, cfg)
				_, err := c.GetService(context.Background(), "red", "csiService")
				if (err == nil) != (tc.want == nil) {
					t.Fatalf("secret=%v: err = %v", secret, err)
				}
				if !secret {
					// From the config file the endpoints are no secret.
					if err != nil && !strings.Contains(err.Error(), strings.TrimSuffix(tc.apis[0], "/")) {
						t.Errorf("config-file endpoint %s not named: %v", tc.apis[0], err)
					}
					continue
				}
				if err != nil {
					wantHidden(t, "error", err.Error(), hidden)
					for _, w := range tc.want {
						if !strings.Contains(err.Error(), w) {
							t.Errorf("error %q lacks %q", err, w)
						}
					}
				}
				if tc.logs && logs.Len() == 0 {
					t.Error("nothing logged at debug level")
				}
				wantHidden(t, "log", logs.String(), hidden)
			}
		})
	}
}

func TestRedactorSecretEndpoints(t *testing.T) {
	st, err := Config{APIs: []string{"https://Infinia-A.example:8443/redapi/v1", "http://[fd00::5]"}, User: "u", Level: "c/t",
		Password: "pw-long", SecretAPIs: true}.validate()
	if err != nil {
		t.Fatal(err)
	}
	r := newRedactor(st)
	for in, want := range map[string]string{
		`Get "https://infinia-a.example:8443/redapi/v1/auth_user": EOF`: `Get "secret apis entry 1/auth_user": EOF`,
		"dial tcp: lookup INFINIA-A.example: no such host":              "dial tcp: lookup secret apis entry 1: no such host",
		"dial tcp infinia-a.example:8443: refused":                      "dial tcp secret apis entry 1: refused",
		"dial tcp [fd00::5]:80: connect: network is unreachable":        "dial tcp secret apis entry 2: connect: network is unreachable",
		"x509: certificate is valid for fd00::5, not other; pw pw-long": "x509: certificate is valid for secret apis entry 2, not other; pw <redacted>",
	} {
		if got := r.redact(in); got != want {
			t.Errorf("redact(%q) = %q; want %q", in, got, want)
		}
	}
	// Config-file endpoints stay.
	st.cfg.SecretAPIs = false
	if got := newRedactor(st).redact("infinia-a.example:8443"); got != "infinia-a.example:8443" {
		t.Errorf("config-file endpoint redacted: %q", got)
	}
}

func TestSecretEndpointValidationDoesNotQuote(t *testing.T) {
	_, err := New(Config{APIs: []string{"ftp://secret-host.example"}, User: "u", Level: "c/t", Password: "pw", SecretAPIs: true}, nil)
	if err == nil || strings.Contains(err.Error(), "secret-host") || strings.Contains(err.Error(), "ftp") ||
		!strings.Contains(err.Error(), "secret apis entry 1") {
		t.Fatalf("err = %v; want one naming the entry, not its value", err)
	}
}
