package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestSynologyCmdFlags: bad flags are usage errors that say what is wrong.
func TestSynologyCmdFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"synology"}, "--state is required"},
		{[]string{"synology", "--state", t.TempDir(), "--volume-size", "0"}, "--volume-size must be positive"},
		{[]string{"synology", "--state", t.TempDir(), "--session-ttl", "-1s"}, "--session-ttl must not be negative"},
		{[]string{"synology", "--state", t.TempDir(), "--listen", "127.0.0.1:nope"}, "listen"},
	} {
		var stderr bytes.Buffer
		if rc := run(tc.args, io.Discard, &stderr); rc != 2 {
			t.Fatalf("%v: exit %d, want 2 (%s)", tc.args, rc, stderr.String())
		}
		if !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%v: stderr %q does not say %q", tc.args, stderr.String(), tc.want)
		}
	}
}

// TestSynologyCmdServes: the command serves DSM's login on the address
// it prints, and stops with its context.
func TestSynologyCmdServes(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	out := &syncBuffer{}
	done := make(chan int)
	go func() {
		done <- synologyCmd(ctx, []string{"--state", t.TempDir(), "--listen", "127.0.0.1:0", "--password", "pw"}, out, io.Discard)
	}()
	re := regexp.MustCompile(`(https://\S+)/webapi/entry.cgi`)
	var url string
	for i := 0; i < 100 && url == ""; i++ {
		if m := re.FindStringSubmatch(out.String()); m != nil {
			url = m[1]
		}
		time.Sleep(20 * time.Millisecond)
	}
	if url == "" {
		t.Fatalf("no address printed: %q", out.String())
	}
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	resp, err := hc.Get(url + "/webapi/auth.cgi?api=SYNO.API.Auth&version=6&method=login&account=admin&passwd=pw&format=sid")
	if err != nil {
		t.Fatal(err)
	}
	var a struct {
		Success bool
		Data    struct{ Sid string }
	}
	_ = json.NewDecoder(resp.Body).Decode(&a)
	resp.Body.Close()
	if !a.Success || a.Data.Sid == "" {
		t.Fatalf("login: %+v", a)
	}
	cancel()
	if rc := <-done; rc != 0 {
		t.Fatalf("exit %d", rc)
	}
}
