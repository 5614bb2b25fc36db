package api

import (
	"errors"
	"net"
	"strconv"
	"strings"
	"testing"
)

func TestTransportChoice(t *testing.T) {
	tests := []struct {
		version   string
		transport string
		want      string // chosen transport, or "" when an error is expected
		wantErr   error
		errText   string
	}{
		{"25.04", "", TransportWebSocket, nil, ""},
		{"25.10", "auto", TransportWebSocket, nil, ""},
		{"26.04", "", TransportWebSocket, nil, ""},
		{"24.10", "", TransportREST, nil, ""},
		{"25.04", "rest", TransportREST, nil, ""},
		{"24.10", "rest", TransportREST, nil, ""},
		{"26.04", "rest", "", ErrUnsupported, "REST /api/v2.0 is not served (TrueNAS 26 removed it); set httpConnection.transport: websocket"},
		{"24.10", "websocket", "", ErrUnsupported, "no JSON-RPC WebSocket at /api/current"},
	}
	for _, tt := range tests {
		t.Run(tt.version+"/"+tt.transport, func(t *testing.T) {
			f := newFakeNAS(t, tt.version).start()
			cfg := f.config()
			cfg.Transport = tt.transport
			c := newClient(t, cfg)
			got, err := c.Transport(ctxT(t))
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) || !strings.Contains(err.Error(), tt.errText) {
					t.Fatalf("Transport = %q, %v; want %v containing %q", got, err, tt.wantErr, tt.errText)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("Transport = %q, %v; want %q", got, err, tt.want)
			}
			// The choice is made once and calls work over it.
			v, err := c.Version(ctxT(t))
			if err != nil || v.String() != f.version {
				t.Fatalf("Version = %v, %v; want %s", v, err, f.version)
			}
			res, err := c.Call(ctxT(t), "test.echo", "hi")
			if err != nil || string(res) != `"hi"` {
				t.Fatalf("echo = %s, %v", res, err)
			}
			again, _ := c.Transport(ctxT(t))
			if again != got {
				t.Fatalf("transport changed from %s to %s", got, again)
			}
			st := c.Stats()
			if got == TransportWebSocket && (st.Dials != 1 || st.Logins != 1 || st.HTTPRequests != 0) {
				t.Fatalf("websocket stats %+v: want one dial, one login, no REST", st)
			}
			if got == TransportREST && st.HTTPRequests == 0 {
				t.Fatalf("rest stats %+v", st)
			}
		})
	}
}

func TestPlaintextAPIKey(t *testing.T) {
	tests := []struct {
		version   string
		transport string
		allow     bool
		https     bool
		refused   bool
	}{
		{"25.04", "", false, false, true},
		{"25.10", "websocket", false, false, true},
		{"25.04", "rest", false, false, true}, // REST over http to 25.04.2 revokes too
		{"26.04", "", false, false, true},
		{"24.10", "", false, false, false}, // no WebSocket: older than 25.04, REST over http is safe
		{"24.10", "rest", false, false, false},
		{"25.04", "", true, false, false},
		{"25.04", "rest", true, false, false},
		{"25.10", "", false, true, false},
	}
	for _, tt := range tests {
		name := tt.version + "/" + tt.transport + "/allow=" + strconv.FormatBool(tt.allow) + "/https=" + strconv.FormatBool(tt.https)
		t.Run(name, func(t *testing.T) {
			f := newFakeNAS(t, tt.version)
			if tt.https {
				f.startTLS()
			} else {
				f.start()
			}
			cfg := f.keyConfig()
			cfg.Transport = tt.transport
			cfg.AllowPlaintextAPIKey = tt.allow
			cfg.AllowInsecure = true
			c := newClient(t, cfg)
			_, err := c.Call(ctxT(t), "test.echo", 1)
			if !tt.refused {
				if err != nil {
					t.Fatalf("Call: %v", err)
				}
				return
			}
			if !errors.Is(err, ErrPlaintextAPIKey) {
				t.Fatalf("Call error %v, want ErrPlaintextAPIKey", err)
			}
			for _, want := range []string{"revokes", "httpConnection.protocol: https", "httpConnection.allowPlaintextApiKey: true", c.Endpoint()} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("%q does not mention %q", err, want)
				}
			}
			// The key never left: no login, no REST request carried it.
			if n := f.logins.Load(); n != 0 {
				t.Fatalf("server saw %d logins", n)
			}
			for _, r := range f.restRequests() {
				if strings.Contains(r.Auth, f.apiKey) {
					t.Fatalf("REST request %+v carried the key", r)
				}
			}
			// The refusal is remembered, not re-probed.
			dials := c.Stats().Dials
			if _, err := c.Call(ctxT(t), "test.echo", 1); !errors.Is(err, ErrPlaintextAPIKey) || c.Stats().Dials != dials {
				t.Fatalf("second call: %v, dials %d -> %d", err, dials, c.Stats().Dials)
			}
		})
	}
}

func TestPasswordOverPlaintextAllowed(t *testing.T) {
	f := newFakeNAS(t, "25.10").start()
	c := newClient(t, f.config())
	if _, err := c.Call(ctxT(t), "test.echo", 1); err != nil {
		t.Fatalf("password login over ws:// refused: %v", err)
	}
}

func TestUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().(*net.TCPAddr)
	_ = l.Close() // nothing listens there now
	for _, transport := range []string{"", "websocket", "rest"} {
		c := newClient(t, Config{Host: "127.0.0.1", Port: addr.Port, Username: "u", Password: "p", Transport: transport})
		_, err := c.Call(ctxT(t), "system.version")
		if !errors.Is(err, ErrUnreachable) {
			t.Fatalf("%s: error %v, want ErrUnreachable", transport, err)
		}
		if !strings.Contains(err.Error(), c.Endpoint()) || !strings.Contains(err.Error(), "refused") {
			t.Fatalf("%s: %q should name the endpoint and the cause", transport, err)
		}
	}
}
