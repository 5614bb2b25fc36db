package api

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// TestSecretsNeverShown drives failures whose server messages quote the
// credentials back (as a careless server or proxy might) and checks that
// neither errors nor debug logs carry a password, an API key or an
// Authorization header value.
func TestSecretsNeverShown(t *testing.T) {
	for _, tt := range []struct {
		version string
		useKey  bool
	}{{"25.10", false}, {"25.10", true}, {"24.10", false}, {"24.10", true}} {
		name := tt.version + map[bool]string{false: "/password", true: "/apikey"}[tt.useKey]
		t.Run(name, func(t *testing.T) {
			f := newFakeNAS(t, tt.version)
			// What the server quotes back: the client's own credentials.
			secrets := []string{f.pass, base64.StdEncoding.EncodeToString([]byte(f.user + ":" + f.pass))}
			if tt.useKey {
				secrets = []string{f.apiKey, strings.SplitN(f.apiKey, "-", 2)[1]}
			}
			f.handle("test.leak", func(_ context.Context, p []json.RawMessage) (any, error) {
				return nil, fakeValidation{{"test.leak.password", "value " + secrets[0] + " rejected (Authorization: Basic " + secrets[1] + ")", 22}}
			})
			f.handle("test.leakcall", func(_ context.Context, p []json.RawMessage) (any, error) {
				return nil, fakeCallError{errno: 22, msg: "bad key " + secrets[1] + " / Bearer " + secrets[0]}
			})
			f.start()
			log, buf := debugLogger()
			cfg := f.config()
			if tt.useKey {
				cfg = f.keyConfig()
				cfg.AllowPlaintextAPIKey = true
			}
			c, err := New(cfg, log)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()

			var errs []string
			for _, m := range []string{"test.leak", "test.leakcall"} {
				_, err := c.Call(ctxT(t), m, map[string]any{"password": secrets[0]})
				if err == nil {
					t.Fatalf("%s succeeded", m)
				}
				errs = append(errs, err.Error())
			}
			// Wrong credentials, echoed back by the server's 401/answer.
			bad := cfg
			if tt.useKey {
				bad.APIKey = "9-" + strings.Repeat("Q", 64)
			} else {
				bad.Password = "Wrong-Password-123"
			}
			c2, err := New(bad, log)
			if err != nil {
				t.Fatal(err)
			}
			defer c2.Close()
			_, err = c2.Call(ctxT(t), "test.echo", 1)
			if err == nil {
				t.Fatal("wrong credentials accepted")
			}
			errs = append(errs, err.Error())

			all := strings.Join(errs, "\n") + "\n" + buf.String()
			for _, s := range append(secrets, strings.Repeat("Q", 64), "Wrong-Password-123") {
				if strings.Contains(all, s) {
					t.Errorf("output contains a secret %q:\n%s", s, all)
				}
			}
			if !strings.Contains(all, redactedText) {
				t.Errorf("the echoed secrets were not visibly redacted:\n%s", all)
			}
			if !strings.Contains(buf.String(), "test.leak") {
				t.Errorf("the debug log does not record calls:\n%s", buf.String())
			}
		})
	}
}

// TestRESTAuthorizationOnlyToTheServer: a redirect is not followed, so the
// Authorization header cannot be replayed to another host.
func TestRESTNoRedirect(t *testing.T) {
	f := newFakeNAS(t, "24.10")
	f.handle("test.redirect", nil)
	f.start()
	orig := f.srv.Config.Handler
	f.srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/test/redirect") {
			http.Redirect(w, r, "http://203.0.113.9/steal", http.StatusFound)
			return
		}
		orig.ServeHTTP(w, r)
	})
	c := newClient(t, f.config())
	_, err := c.Call(ctxT(t), "test.redirect", 1)
	if err == nil || !strings.Contains(err.Error(), "redirected to http://203.0.113.9") {
		t.Fatalf("error %v", err)
	}
}
