package truenas

import (
	"net/http"
	"testing"

	"github.com/switchyard-csi/switchyard/simulators/truenas/middleware"
)

// TestWebSocketLogins: every login method, right and wrong credentials.
func TestWebSocketLogins(t *testing.T) {
	s := startServer(t, "25.10", func(o *Options) { o.TLS = true })
	hc := tlsClient(t, s)
	cases := []struct {
		name   string
		method string
		params []any
		ok     bool
	}{
		{"password", "auth.login", []any{"root", "secret"}, true},
		{"wrong password", "auth.login", []any{"root", "nope"}, false},
		{"api key", "auth.login_with_api_key", []any{testKey}, true},
		{"wrong api key", "auth.login_with_api_key", []any{testKey[:len(testKey)-1] + "Z"}, false},
		{"login_ex password", "auth.login_ex", []any{map[string]any{"mechanism": "PASSWORD_PLAIN", "username": "root", "password": "secret"}}, true},
		{"login_ex wrong password", "auth.login_ex", []any{map[string]any{"mechanism": "PASSWORD_PLAIN", "username": "root", "password": "x"}}, false},
		{"login_ex api key", "auth.login_ex", []any{map[string]any{"mechanism": "API_KEY_PLAIN", "username": "root", "api_key": testKey}}, true},
		{"login_ex api key of another user", "auth.login_ex", []any{map[string]any{"mechanism": "API_KEY_PLAIN", "username": "admin", "api_key": testKey}}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := dialRPC(t, s, hc)
			a := c.call(tc.method, tc.params...)
			if a.Error != nil {
				t.Fatalf("%s: %+v", tc.method, a.Error)
			}
			var ok bool
			if tc.method == "auth.login_ex" {
				var resp map[string]any
				c.result(tc.method, &resp, tc.params...) // a second login on the same connection is fine
				ok = resp["response_type"] == "SUCCESS"
				if !ok && resp["response_type"] != "AUTH_ERR" {
					t.Errorf("response_type %v", resp["response_type"])
				}
				if ok && resp["user_info"].(map[string]any)["pw_name"] != "root" {
					t.Errorf("user_info %v", resp["user_info"])
				}
			} else {
				ok = string(a.Result) == "true"
			}
			if ok != tc.ok {
				t.Fatalf("login %v, want %v", ok, tc.ok)
			}
			me := c.call("auth.me")
			if tc.ok != (me.Error == nil) {
				t.Errorf("auth.me after login %v: %+v", tc.ok, me.Error)
			}
		})
	}
	c := dialRPC(t, s, hc)
	if a := c.call("auth.login_ex", map[string]any{"mechanism": "MAGIC"}); a.Error == nil || a.Error.Code != rpcInvalidParams {
		t.Errorf("unknown mechanism: %+v", a.Error)
	}
}

// TestAPIKeyRevocation: from 25.04.2 a key sent over plain text is revoked
// (the login fails, and the key fails everywhere afterwards) until it is
// reissued; 24.10 accepts keys over plain text.
func TestAPIKeyRevocation(t *testing.T) {
	cases := []struct {
		name      string
		version   string
		transport string // "ws" or "rest"
		revoked   bool
	}{
		{"24.10 REST over http", "24.10", "rest", false},
		{"25.04.2 REST over http", "25.04", "rest", true},
		{"25.04.2 JSON-RPC over ws", "25.04", "ws", true},
		{"25.10 JSON-RPC over ws", "25.10", "ws", true},
		{"26.04 JSON-RPC over ws", "26.04", "ws", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := startServer(t, tc.version)
			if err := s.StartTLS("127.0.0.1:0"); err != nil {
				t.Fatal(err)
			}
			hc := tlsClient(t, s)
			// Over plain text.
			var plainOK bool
			if tc.transport == "rest" {
				status, _ := rest(t, nil, s.PlainURL(), "GET", "/system/version", "", restAuth{key: testKey})
				plainOK = status == http.StatusOK
			} else {
				c := dialRPC(t, s)
				c.result("auth.login_with_api_key", &plainOK, testKey)
			}
			if plainOK == tc.revoked {
				t.Fatalf("key over plain text accepted=%v, want %v", plainOK, !tc.revoked)
			}
			// Then over TLS.
			tlsOK := keyWorksOverTLS(t, s, hc, testKey)
			if tlsOK == tc.revoked {
				t.Fatalf("key over TLS afterwards accepted=%v, want %v", tlsOK, !tc.revoked)
			}
			if st := s.Stats(); (st.RevokedAPIKeys == 1) != tc.revoked {
				t.Errorf("RevokedAPIKeys = %d", st.RevokedAPIKeys)
			}
			if !tc.revoked {
				return
			}
			fresh := s.ReissueAPIKey("ci")
			if fresh == testKey || fresh == "" {
				t.Fatalf("ReissueAPIKey = %q", fresh)
			}
			if !keyWorksOverTLS(t, s, hc, fresh) {
				t.Error("the reissued key does not work over TLS")
			}
			if keyWorksOverTLS(t, s, hc, testKey) {
				t.Error("the old key still works after reissue")
			}
		})
	}
}

func keyWorksOverTLS(t *testing.T, s *Server, hc *http.Client, key string) bool {
	t.Helper()
	if !s.version.AtLeast(25, 4, 0) { // no JSON-RPC endpoint: REST
		status, _ := rest(t, hc, s.TLSURL(), "GET", "/system/version", "", restAuth{key: key})
		return status == http.StatusOK
	}
	ws, _, err := dialWS(t, wsURL(s.TLSURL(), "/api/current"), hc)
	if err != nil {
		t.Fatal(err)
	}
	c := newRPCClient(t, ws)
	var ok bool
	c.result("auth.login_with_api_key", &ok, key)
	return ok
}

// TestRevocationPersists: a revoked key stays revoked in a new server on
// the same state directory; a reissued key keeps working there.
func TestRevocationPersists(t *testing.T) {
	dir := t.TempDir()
	v, _ := middleware.ParseVersion("25.04")
	open := func() *Server {
		s, err := New(Options{Version: v, StateDir: dir, APIKeys: map[string]string{"ci": testKey}})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Start("127.0.0.1:0"); err != nil {
			t.Fatal(err)
		}
		return s
	}
	s := open()
	c := dialRPC(t, s)
	var ok bool
	c.result("auth.login_with_api_key", &ok, testKey)
	s.Close()
	s = open()
	defer s.Close()
	hc := tlsClient(t, s)
	if err := s.StartTLS("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	if keyWorksOverTLS(t, s, hc, testKey) {
		t.Fatal("the revoked key works again after a restart")
	}
	fresh := s.ReissueAPIKey("ci")
	s.Close()
	s = open()
	defer s.Close()
	if err := s.StartTLS("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	if !keyWorksOverTLS(t, s, tlsClient(t, s), fresh) {
		t.Fatal("the reissued key does not survive a restart")
	}
}

// TestExpireSessions: logged-in sessions get ENOTAUTHENTICATED until they
// log in again.
func TestExpireSessions(t *testing.T) {
	s := startServer(t, "25.04")
	c := dialRPC(t, s)
	c.login()
	var pong string
	c.result("core.ping", &pong)
	s.ExpireSessions()
	a := c.call("system.info")
	if a.Error == nil || a.Error.Data["errname"] != "ENOTAUTHENTICATED" {
		t.Fatalf("after ExpireSessions: %+v", a.Error)
	}
	c.login()
	var info map[string]any
	c.result("system.info", &info)
	if info["hostname"] != "truenas" {
		t.Errorf("system.info %v", info)
	}
}

// TestOptionsValidation: the version and state directory are required and
// checked; keys must be well-formed.
func TestOptionsValidation(t *testing.T) {
	cases := []struct {
		name string
		o    Options
		ok   bool
	}{
		{"no version", Options{StateDir: "x"}, false},
		{"no state dir", Options{Version: middleware.Version{Year: 25, Month: 4, Patch: 2}}, false},
		{"earlier patch", Options{Version: middleware.Version{Year: 25, Month: 4, Patch: 1}}, false},
		{"unknown release", Options{Version: middleware.Version{Year: 23, Month: 10, Patch: 2}}, false},
		{"later patch", Options{Version: middleware.Version{Year: 25, Month: 4, Patch: 3}}, true},
		{"bad key", Options{Version: middleware.Version{Year: 24, Month: 10, Patch: 2}, APIKeys: map[string]string{"k": "abc"}}, false},
		{"short key", Options{Version: middleware.Version{Year: 24, Month: 10, Patch: 2}, APIKeys: map[string]string{"k": "1-abc"}}, false},
		{"duplicate key ids", Options{Version: middleware.Version{Year: 24, Month: 10, Patch: 2},
			APIKeys: map[string]string{"a": testKey, "b": testKey[:len(testKey)-1] + "Q"}}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.o.StateDir == "x" || tc.o.StateDir == "" && tc.name != "no state dir" {
				tc.o.StateDir = t.TempDir()
			}
			s, err := New(tc.o)
			if err == nil {
				s.Close()
			}
			if (err == nil) != tc.ok {
				t.Fatalf("New: %v, want ok=%v", err, tc.ok)
			}
		})
	}
}
