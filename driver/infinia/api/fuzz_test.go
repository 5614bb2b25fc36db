package api

import (
	"context"
	"encoding/base64"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// FuzzTokenLifetime: a token's lifetime is never negative, whatever its
// claims say.
func FuzzTokenLifetime(f *testing.F) {
	jwt := func(payload string) string {
		return "eyJhbGciOiJIUzI1NiJ9." + base64.RawURLEncoding.EncodeToString([]byte(payload)) + ".sig"
	}
	for _, p := range []string{`{"iat": 1700000000, "exp": 1700003600}`, `{"iat": 1, "exp": 1e300}`, `{"iat": 5, "exp": 4}`, `{"exp": 9}`, `[]`, `{"iat":1e-300,"exp":1e-299}`} {
		f.Add(jwt(p))
	}
	f.Add("not.a.jwt")
	f.Fuzz(func(t *testing.T, tok string) {
		if d := tokenLifetime(tok); d < 0 {
			t.Fatalf("tokenLifetime(%q) = %v: negative", tok, d)
		}
	})
}

type answerFn func(*http.Request) *http.Response

func (a answerFn) RoundTrip(r *http.Request) (*http.Response, error) { return a(r), nil }

const fuzzPassword = "s3cret-pass-word"

// FuzzAnswer feeds arbitrary status codes and bodies to the client's
// decoding (envelope, error title, data): no panic, an error for every
// non-2xx answer, the password never in an error, and a non-JSON body
// quoted at most 200 bytes.
func FuzzAnswer(f *testing.F) {
	for _, b := range []string{
		`{"title":"ok","data":{"name":"v","nblocks":3,"block_size":4096}}`, `{"title":"volume exists"}`, `{"data":null}`,
		"<html>bad gateway</html>", `{"title":["x"]}`, `"just a string"`, "password " + fuzzPassword, `{"title":"eyJa.b.c"}`, "",
	} {
		f.Add(200, []byte(b))
		f.Add(409, []byte(b))
	}
	f.Add(503, []byte("down"))
	f.Fuzz(func(t *testing.T, code int, body []byte) {
		if code < 100 || code > 999 {
			code = 200 + (code%800+800)%800
		}
		c, err := New(Config{APIs: []string{"https://infinia.test"}, User: "u", Level: "c/t", Password: fuzzPassword, Timeout: time.Second}, nil)
		if err != nil {
			t.Fatal(err)
		}
		c.http.Transport = answerFn(func(r *http.Request) *http.Response {
			st, b := code, string(body)
			if strings.HasSuffix(r.URL.Path, "/auth_user") {
				st, b = 200, `{"data":{"token":"tok"}}`
			}
			return &http.Response{StatusCode: st, Body: io.NopCloser(strings.NewReader(b)), Header: http.Header{}, Request: r}
		})
		var out Volume
		err = c.Do(context.Background(), http.MethodGet, basePath+"/x", nil, nil, &out)
		if (code < 200 || code > 299) && err == nil {
			t.Fatalf("HTTP %d answered without an error", code)
		}
		if err == nil {
			return
		}
		msg := err.Error()
		if strings.Contains(msg, fuzzPassword) {
			t.Fatalf("error holds the password: %s", msg)
		}
		if se, ok := err.(*StatusError); ok && !strings.HasPrefix(strings.TrimSpace(string(body)), "{") && len(se.Title) > 200+len("…")+len(redactedText)*2 {
			t.Fatalf("a non-JSON body is quoted at %d bytes", len(se.Title))
		}
	})
}
