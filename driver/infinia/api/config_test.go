package api

import (
	"strings"
	"testing"
	"time"
)

func TestParseEndpoint(t *testing.T) {
	cases := []struct{ in, want, err string }{
		{"https://infinia.example.com:443", "https://infinia.example.com:443", ""},
		{"https://10.0.0.1/", "https://10.0.0.1", ""},
		{"https://h/redapi/v1", "https://h", ""},
		{"https://h/prefix/redapi/v1/", "https://h/prefix", ""},
		{"http://[::1]:8080", "http://[::1]:8080", ""},
		{"infinia.example.com", "", "https://"},
		{"ftp://h", "", "scheme"},
		{"https://", "", "no host"},
		{"https://u:p@h", "", "credentials"},
		{"https://h?x=1", "", "query"},
		{"", "", "not a URL"},
	}
	for _, tc := range cases {
		got, err := ParseEndpoint(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseEndpoint(%q) error %v, want one containing %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseEndpoint(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

func TestConfigDefaultsAndErrors(t *testing.T) {
	ok := Config{APIs: []string{"https://h"}, User: "u", Level: "c/t", Password: "p"}
	st, err := ok.validate()
	if err != nil {
		t.Fatal(err)
	}
	if st.cfg.Timeout != 30*time.Second || st.cfg.MaxConnsPerHost != 16 {
		t.Fatalf("defaults not applied: %+v", st.cfg)
	}
	bad := []struct {
		mut  func(*Config)
		want string
	}{
		{func(c *Config) { c.APIs = nil }, "apis"},
		{func(c *Config) { c.APIs = []string{"https://h", "nope"} }, "apis[1]"},
		{func(c *Config) { c.Password = "" }, "password"},
		{func(c *Config) { c.CACert = []byte("junk") }, "caCert"},
		{func(c *Config) { c.Timeout = -time.Second }, "timeout"},
		{func(c *Config) { c.MaxConnsPerHost = -1 }, "maxConnsPerHost"},
	}
	for _, b := range bad {
		c := ok
		b.mut(&c)
		if _, err := c.validate(); err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("want an error naming %s, got %v", b.want, err)
		}
	}
}

func TestTokenLifetime(t *testing.T) {
	cases := []struct {
		tok  string
		want time.Duration
	}{
		// {"iat":1000,"exp":4600}
		{"eyJhbGciOiJIUzI1NiJ9.eyJpYXQiOjEwMDAsImV4cCI6NDYwMH0.c2ln", time.Hour},
		// {"exp":4600}: no iat, lifetime unknown
		{"eyJhbGciOiJIUzI1NiJ9.eyJleHAiOjQ2MDB9.c2ln", 0},
		{"opaque-token", 0},
		{"a.!!!.c", 0},
	}
	for _, tc := range cases {
		if got := tokenLifetime(tc.tok); got != tc.want {
			t.Errorf("tokenLifetime(%q) = %s, want %s", tc.tok, got, tc.want)
		}
	}
}
