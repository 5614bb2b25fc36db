package truenas

import (
	"testing"
)

// TestCallRecords: every call is recorded with its transport, user and
// error, with credentials masked; ResetCalls forgets them; MaxRecords
// bounds them; Stats count per transport.
func TestCallRecords(t *testing.T) {
	s := startServer(t, "25.04", func(o *Options) { o.MaxRecords = 5 })
	c := dialRPC(t, s)
	c.login()
	c.call("test.callerror")
	rest(t, nil, s.URL(), "GET", "/system/version", "", rootAuth)
	l := dialLegacy(t, s)
	// An API key over the plain legacy socket of 25.04.2: refused and revoked.
	l.call("auth.login_ex", map[string]any{"mechanism": "API_KEY_PLAIN", "username": "root", "api_key": testKey})

	recs := s.Calls()
	want := []Record{
		{Transport: "websocket", Method: "auth.login", Params: []byte(`["root","********"]`)},
		{Transport: "websocket", Method: "test.callerror", User: "root", Error: "gone", Params: []byte(`[]`)},
		{Transport: "rest", Method: "system.version", User: "root", Params: []byte(`[]`)},
		{Transport: "legacy", Method: "auth.login_ex", Params: []byte(`[{"api_key":"********","mechanism":"API_KEY_PLAIN","username":"root"}]`)},
	}
	if len(recs) != len(want) {
		t.Fatalf("records %+v", recs)
	}
	for i, w := range want {
		r := recs[i]
		if r.Transport != w.Transport || r.Method != w.Method || r.User != w.User || r.Error != w.Error || !jsonEqual(t, r.Params, string(w.Params)) {
			t.Errorf("record %d = %+v %s, want %+v %s", i, r, r.Params, w, w.Params)
		}
	}
	st := s.Stats()
	if st.WebSocketCalls != 2 || st.RESTCalls != 1 || st.LegacyCalls != 1 || st.Logins != 2 || st.LoginFailures != 1 || st.RevokedAPIKeys != 1 || st.WebSocketSessions != 1 || st.LegacySessions != 1 {
		t.Errorf("stats %+v", st)
	}
	for range 10 {
		c.call("core.ping")
	}
	if n := len(s.Calls()); n != 5 {
		t.Errorf("%d records kept, want MaxRecords=5", n)
	}
	s.ResetCalls()
	if n := len(s.Calls()); n != 0 {
		t.Errorf("%d records after ResetCalls", n)
	}
}
