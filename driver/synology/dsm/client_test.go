package dsm

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// fakeDSM records requests and answers from a function (a unit-test fake;
// the behaviour against DSM's semantics is tested with
// simulators/synology in package synology).
type fakeDSM struct {
	mu     sync.Mutex
	reqs   []*http.Request
	forms  []url.Values
	answer func(form url.Values) any
}

func (f *fakeDSM) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_ = r.ParseForm()
	f.mu.Lock()
	f.reqs = append(f.reqs, r)
	f.forms = append(f.forms, r.PostForm)
	f.mu.Unlock()
	_ = json.NewEncoder(w).Encode(f.answer(r.PostForm))
}

func newFake(t *testing.T, answer func(url.Values) any) (*fakeDSM, *Client) {
	f := &fakeDSM{answer: answer}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL)
	port, _ := strconv.Atoi(u.Port())
	return f, New(Config{Protocol: "http", Host: u.Hostname(), Port: port, Username: "csi", Password: "pw-secret", Session: "s"})
}

func ok(data any) any { return map[string]any{"success": true, "data": data} }
func bad(code int) any {
	return map[string]any{"success": false, "error": map[string]any{"code": code}}
}

// TestSecretsInBodies: login and calls are POSTs; the password and the
// sid are in the form body, never in a URL.
func TestSecretsInBodies(t *testing.T) {
	f, c := newFake(t, func(form url.Values) any {
		if form.Get("method") == "login" {
			return ok(map[string]any{"sid": "sid-secret"})
		}
		return ok(map[string]any{"luns": []any{}})
	})
	if _, err := c.ListLUNs(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(f.reqs) != 2 {
		t.Fatalf("%d requests", len(f.reqs))
	}
	for i, r := range f.reqs {
		if r.Method != http.MethodPost || strings.Contains(r.URL.String(), "secret") {
			t.Errorf("request %d: %s %s", i, r.Method, r.URL)
		}
	}
	if f.forms[0].Get("passwd") != "pw-secret" || f.forms[0].Get("session") != "s" || f.forms[1].Get("_sid") != "sid-secret" {
		t.Fatalf("forms %v", f.forms)
	}
}

// TestReloginOnce: a lost session is renewed once; a second loss is the
// caller's error, not a loop.
func TestReloginOnce(t *testing.T) {
	logins := 0
	_, c := newFake(t, func(form url.Values) any {
		if form.Get("method") == "login" {
			logins++
			return ok(map[string]any{"sid": "s" + strconv.Itoa(logins)})
		}
		return bad(119)
	})
	err := c.Call(context.Background(), "SYNO.Core.ISCSI.LUN", "list", 1, nil, nil)
	var e *Error
	if !errors.As(err, &e) || e.Code != 119 || !strings.Contains(err.Error(), "SID not found") {
		t.Fatalf("err %v", err)
	}
	if logins != 2 {
		t.Fatalf("logins %d, want 2", logins)
	}
}

// TestMeanings: codes are read per API (402 is a share or a login code).
func TestMeanings(t *testing.T) {
	for _, tc := range []struct {
		e    Error
		want string
	}{
		{Error{API: "SYNO.API.Auth", Code: 402}, "permission denied"},
		{Error{API: "SYNO.Core.Share", Code: 402}, "no such shared folder"},
		{Error{API: "SYNO.Core.ISCSI.LUN", Code: 18990538}, "already exists"},
		{Error{API: "SYNO.Core.ISCSI.LUN", Code: 99}, ""},
	} {
		if got := tc.e.Meaning(); !strings.Contains(got, tc.want) || (tc.want == "" && got != "") {
			t.Errorf("%+v: %q", tc.e, got)
		}
	}
}
