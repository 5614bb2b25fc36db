package api

import (
	"context"
	"net/http"
	"strings"
	"testing"
)

// A server that quotes the password and the token back (in a title) must
// not get them into an error.
func TestSecretsNeverInErrors(t *testing.T) {
	f := newFakeAPI(t)
	f.route(servicePath, func(r *http.Request) (int, string, any) {
		return 400, "bad request from " + r.Header.Get("Authorization") + " with password " + f.password, nil
	})
	c := newClient(t, f.config(f.start()))
	_, err := c.GetService(context.Background(), "red", "csiService")
	if err == nil {
		t.Fatal("want an error")
	}
	msg := err.Error()
	if strings.Contains(msg, f.password) || strings.Contains(msg, "eyJ") {
		t.Fatalf("error leaks a secret: %s", msg)
	}
	if !strings.Contains(msg, redactedText) || !strings.Contains(msg, "bad request from") {
		t.Fatalf("error lost the rest of the title: %s", msg)
	}
}

func TestRefusedLoginDoesNotEchoPassword(t *testing.T) {
	f := newFakeAPI(t)
	f.user = "s3cret-pass" // the server quotes user_id; here it equals the password
	cfg := f.config(f.start())
	cfg.User = "s3cret-pass"
	cfg.Password = "s3cret-pass"
	f.password = "other"
	c := newClient(t, cfg)
	_, err := c.GetService(context.Background(), "red", "csiService")
	if err == nil || strings.Contains(err.Error(), "s3cret-pass") {
		t.Fatalf("want a redacted refusal, got %v", err)
	}
}

func TestRedactor(t *testing.T) {
	r := redactor{password: "hunter22"}
	in := "pw hunter22 tok eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln end"
	got := r.redact(in)
	if got != "pw <redacted> tok <redacted> end" {
		t.Fatalf("redact(%q) = %q", in, got)
	}
	if short := (redactor{password: "a"}).redact("a banana"); short != "a banana" {
		t.Fatalf("a one-letter password must not blank out text: %q", short)
	}
}
