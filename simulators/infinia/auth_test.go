package infinia

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestLogin: only the exact user, password and level give a token; the
// token is an HS256 JWT with sub, level, iat and exp = iat + TTL.
func TestLogin(t *testing.T) {
	s := startServer(t, func(o *Options) { o.TokenTTL = 90 * time.Second })
	cases := []struct {
		name                  string
		user, password, level string
		want                  int
		title                 string
	}{
		{"ok", DefaultUser, DefaultPassword, "clu1/red", 200, "OK"},
		{"bad password", DefaultUser, "wrong", "clu1/red", 401, "invalid credentials"},
		{"bad user", "nobody", DefaultPassword, "clu1/red", 401, "invalid credentials"},
		{"other level", DefaultUser, DefaultPassword, "clu1/blue", 401, "invalid credentials"},
		{"no level", DefaultUser, DefaultPassword, "", 401, "invalid credentials"},
		{"no password", DefaultUser, "", "clu1/red", 401, "user_id and password headers are required"},
		{"no user", "", DefaultPassword, "clu1/red", 401, "user_id and password headers are required"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newClient(t, s)
			a := c.login(tc.user, tc.password, tc.level)
			if a.Status != tc.want || !strings.Contains(a.Title, tc.title) {
				t.Fatalf("login: %d %q, want %d %q", a.Status, a.Title, tc.want, tc.title)
			}
			if tc.want != 200 {
				if string(a.Data) != "null" {
					t.Errorf("error data %s, want null", a.Data)
				}
				if strings.Contains(a.Title, DefaultPassword) {
					t.Errorf("the error repeats the password: %q", a.Title)
				}
				return
			}
			parts := strings.Split(c.token, ".")
			if len(parts) != 3 {
				t.Fatalf("token %q is not a JWT", c.token)
			}
			hdr, _ := base64.RawURLEncoding.DecodeString(parts[0])
			payload, _ := base64.RawURLEncoding.DecodeString(parts[1])
			var h map[string]string
			var p claims
			if json.Unmarshal(hdr, &h) != nil || json.Unmarshal(payload, &p) != nil {
				t.Fatalf("undecodable token %q", c.token)
			}
			if h["alg"] != "HS256" || h["typ"] != "JWT" {
				t.Errorf("header %v", h)
			}
			if p.Sub != DefaultUser || p.Level != "clu1/red" || p.Exp-p.Iat < 90 || p.Exp-p.Iat > 91 {
				t.Errorf("claims %+v", p)
			}
		})
	}
	if st := s.Stats(); st.Logins != 1 || st.LoginFailures != int64(len(cases)-1) {
		t.Errorf("logins %d, failures %d", st.Logins, st.LoginFailures)
	}
}

// forge makes a token with the given header and payload and a junk
// signature.
func forge(header, payload string) string {
	e := base64.RawURLEncoding.EncodeToString
	return e([]byte(header)) + "." + e([]byte(payload)) + "." + e([]byte("sig"))
}

// TestTokenChecks: calls need a valid token of a level that covers the
// path: 401 without one, 403 for another tenant or cluster.
func TestTokenChecks(t *testing.T) {
	s := startServer(t)
	if err := s.AddTenant("clu1", TenantSeed{Name: "blue", Subtenants: []SubtenantSeed{{Name: "blue", Services: []ServiceSeed{{Name: "svc"}}}}}); err != nil {
		t.Fatal(err)
	}
	if err := s.AddCluster(ClusterSeed{Name: "clu2", Tenants: []TenantSeed{{Name: "red"}}}); err != nil {
		t.Fatal(err)
	}
	good := loggedIn(t, s).token
	payload := `{"sub":"csiAccount","level":"clu1/red","iat":1,"exp":99999999999}`
	cases := []struct {
		name, auth, path string
		want             int
		title            string
	}{
		{"valid", "Bearer " + good, pathP + "/services/csiService", 200, "OK"},
		{"lower-case scheme", "bearer " + good, pathP, 200, "OK"},
		{"no header", "", pathP, 401, "missing bearer token"},
		{"basic auth", "Basic Y3NpOng=", pathP, 401, "missing bearer token"},
		{"garbage", "Bearer abc", pathP, 401, "invalid token"},
		{"tampered", "Bearer " + good[:len(good)-2] + "xx", pathP, 401, "invalid token"},
		{"forged HS256", "Bearer " + forge(`{"alg":"HS256","typ":"JWT"}`, payload), pathP, 401, "invalid token"},
		{"alg none", "Bearer " + strings.TrimSuffix(forge(`{"alg":"none"}`, payload), "c2ln"), pathP, 401, "invalid token"},
		{"other tenant", "Bearer " + good, pathC + "/tenants/blue/subtenants/blue/services/svc", 403, "may not access"},
		{"other tenant's subtenant list", "Bearer " + good, pathC + "/tenants/blue/subtenants", 403, "may not access"},
		{"other cluster", "Bearer " + good, "/redapi/v1/clusters/clu2/instances", 403, "may not access"},
		{"other cluster, same tenant name", "Bearer " + good, "/redapi/v1/clusters/clu2/tenants/red", 403, "may not access"},
		{"cluster instances", "Bearer " + good, pathC + "/instances", 200, "OK"},
		{"cluster capacity", "Bearer " + good, pathC + "/capacity_percent", 200, "OK"},
		{"own tenant", "Bearer " + good, pathT, 200, "OK"},
	}
	c := newClient(t, s)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := map[string]string{}
			if tc.auth != "" {
				h["Authorization"] = tc.auth
			}
			a := c.req("GET", tc.path, nil, h)
			if a.Status != tc.want || !strings.Contains(a.Title, tc.title) {
				t.Fatalf("%d %q, want %d %q", a.Status, a.Title, tc.want, tc.title)
			}
		})
	}
	if st := s.Stats(); st.Forbidden != 4 || st.Unauthorized != 6 {
		t.Errorf("forbidden %d unauthorized %d", st.Forbidden, st.Unauthorized)
	}
}

// TestSubtenantAccount: an account at a subtenant level reaches only that
// subtenant (and the cluster-wide routes), not its tenant's.
func TestSubtenantAccount(t *testing.T) {
	s := startServer(t)
	if err := s.AddSubtenant("clu1", "red", SubtenantSeed{Name: "green", Services: []ServiceSeed{{Name: "svc"}}}); err != nil {
		t.Fatal(err)
	}
	if err := s.AddAccount(Account{Level: "clu1/red/green", User: "greenAccount", Password: "pw"}); err != nil {
		t.Fatal(err)
	}
	c := newClient(t, s)
	c.login("greenAccount", "pw", "clu1/red/green").must(t, 200)
	c.call("GET", pathT+"/subtenants/green/services/svc", nil).must(t, 200)
	c.call("GET", pathC+"/instances", nil).must(t, 200)
	c.call("GET", pathP, nil).must(t, 403)
	c.call("GET", pathT+"/subtenants", nil).must(t, 403)
	c.call("GET", pathT, nil).must(t, 403)
}

// TestTokenExpiry: a token works until exp, then 401 "token expired";
// ExpireTokens and Restart invalidate every token at once.
func TestTokenExpiry(t *testing.T) {
	s := startServer(t, func(o *Options) { o.TokenTTL = time.Second })
	var mu sync.Mutex
	now := time.Unix(1_700_000_000, 0)
	s.now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }

	c := loggedIn(t, s)
	c.call("GET", pathP, nil).must(t, 200)
	advance(999 * time.Millisecond)
	c.call("GET", pathP, nil).must(t, 200)
	advance(time.Millisecond)
	if a := c.call("GET", pathP, nil); a.Status != 401 || !strings.Contains(a.Title, "token expired") {
		t.Fatalf("after the TTL: %d %q", a.Status, a.Title)
	}
	c.login(DefaultUser, DefaultPassword, "clu1/red").must(t, 200)
	c.call("GET", pathP, nil).must(t, 200)

	s.ExpireTokens()
	if a := c.call("GET", pathP, nil); a.Status != 401 {
		t.Fatalf("after ExpireTokens: %d %q", a.Status, a.Title)
	}
	c.login(DefaultUser, DefaultPassword, "clu1/red").must(t, 200)
	c.call("GET", pathP, nil).must(t, 200)

	s.Restart()
	if a := c.call("GET", pathP, nil); a.Status != 401 {
		t.Fatalf("after Restart: %d %q", a.Status, a.Title)
	}
}

// TestJWTRoundTrip: verifyJWT accepts what signJWT made with the same key
// only, and honours exp to the second.
func TestJWTRoundTrip(t *testing.T) {
	key, other := []byte("k1"), []byte("k2")
	now := time.Unix(1000, 500_000_000)
	c := claims{Sub: "u", Level: "c/t", Iat: now.Unix(), Exp: expiry(now, time.Second)}
	if c.Exp != 1002 {
		t.Fatalf("expiry rounds up to a whole second: got %d", c.Exp)
	}
	tok := signJWT(key, c)
	cases := []struct {
		name string
		key  []byte
		at   time.Time
		err  error
	}{
		{"valid", key, now, nil},
		{"last moment", key, time.Unix(1001, 999_999_999), nil},
		{"expired", key, time.Unix(1002, 0), errExpiredToken},
		{"other key", other, now, errBadToken},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := verifyJWT(tc.key, tok, tc.at)
			if err != tc.err {
				t.Fatalf("err %v, want %v", err, tc.err)
			}
			if err == nil && got != c {
				t.Errorf("claims %+v, want %+v", got, c)
			}
		})
	}
}

// TestTokenCacheIsVerifyJWT: the cache answers what verifyJWT answers,
// for the token it remembers, other tokens, a new key and past the
// expiry.
func TestTokenCacheIsVerifyJWT(t *testing.T) {
	k1, k2 := []byte("key-one"), []byte("key-two")
	t0 := time.Unix(1_800_000_000, 0)
	good := signJWT(k1, claims{Sub: "u", Level: "clu1/red", Iat: t0.Unix(), Exp: t0.Unix() + 60, JTI: "a"})
	other := signJWT(k1, claims{Sub: "v", Level: "clu1", Iat: t0.Unix(), Exp: t0.Unix() + 60, JTI: "b"})
	forged := good[:len(good)-2] + "xx"
	var tc tokenCache
	for i, step := range []struct {
		key *[]byte
		tok string
		at  time.Time
	}{
		{&k1, good, t0}, {&k1, good, t0.Add(30 * time.Second)}, {&k1, forged, t0}, {&k1, good, t0},
		{&k1, other, t0}, {&k1, good, t0.Add(60 * time.Second)}, {&k2, good, t0}, {&k1, good, t0.Add(61 * time.Second)},
		{&k1, "a.b", t0}, {&k1, good, t0},
	} {
		wantC, wantErr := verifyJWT(*step.key, step.tok, step.at)
		gotC, gotErr := tc.verify(step.key, step.tok, step.at)
		if gotC != wantC || gotErr != wantErr {
			t.Errorf("step %d: cache %+v %v, verifyJWT %+v %v", i, gotC, gotErr, wantC, wantErr)
		}
	}
}
