package api

import (
	"strings"
	"testing"
	"time"
)

func TestNewValidates(t *testing.T) {
	ok := Config{Host: "nas", Username: "root", Password: "pw"}
	tests := []struct {
		name    string
		mutate  func(*Config)
		wantErr string // substring; "" = valid
	}{
		{"minimal", func(*Config) {}, ""},
		{"api key only", func(c *Config) { c.Username, c.Password, c.APIKey = "", "", "1-abc" }, ""},
		{"no host", func(c *Config) { c.Host = " " }, "httpConnection.host is required"},
		{"url as host", func(c *Config) { c.Host = "https://nas" }, "httpConnection.host"},
		{"port in host", func(c *Config) { c.Host = "nas:8443" }, "give it in httpConnection.port"},
		{"port range", func(c *Config) { c.Port = 70000 }, "httpConnection.port"},
		{"bad protocol", func(c *Config) { c.Protocol = "ftp" }, "httpConnection.protocol: must be http or https"},
		{"api v1", func(c *Config) { c.APIVersion = 1 }, "httpConnection.apiVersion: 1"},
		{"api v3", func(c *Config) { c.APIVersion = 3 }, "httpConnection.apiVersion"},
		{"api v2", func(c *Config) { c.APIVersion = 2 }, ""},
		{"bad transport", func(c *Config) { c.Transport = "grpc" }, "httpConnection.transport"},
		{"transport rest", func(c *Config) { c.Transport = "REST" }, ""},
		{"no credentials", func(c *Config) { c.Username, c.Password = "", "" }, "httpConnection.apiKey"},
		{"password without user", func(c *Config) { c.Username = "" }, "httpConnection.username is required"},
		{"user without password", func(c *Config) { c.Password = "" }, "httpConnection.password is required"},
		{"bad CA", func(c *Config) { c.CACert = []byte("not pem") }, "httpConnection.caCert"},
		{"negative timeout", func(c *Config) { c.Timeout = -time.Second }, "httpConnection.timeout"},
		{"negative calls", func(c *Config) { c.MaxConcurrentCalls = -1 }, "httpConnection.maxConcurrentCalls"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := ok
			tt.mutate(&cfg)
			_, err := New(cfg, nil)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("New: %v", err)
			case tt.wantErr != "" && err == nil:
				t.Fatalf("New accepted %+v", cfg)
			case tt.wantErr != "" && !strings.Contains(err.Error(), tt.wantErr):
				t.Fatalf("error %q does not contain %q", err, tt.wantErr)
			}
			if err != nil && strings.Contains(err.Error(), "pw") {
				t.Fatalf("error leaks the password: %v", err)
			}
		})
	}
}

func TestEndpointAndDefaults(t *testing.T) {
	tests := []struct {
		host, proto string
		port        int
		want        string
		wantWS      string
	}{
		{"nas", "", 0, "http://nas:80", "ws://nas:80/api/current"},
		{"nas", "https", 0, "https://nas:443", "wss://nas:443/api/current"},
		// democratic-csi derives the protocol from the port when it is unset.
		{"nas", "", 443, "https://nas:443", "wss://nas:443/api/current"},
		{"nas", "", 8443, "https://nas:8443", "wss://nas:8443/api/current"},
		{"nas", "", 8080, "http://nas:8080", "ws://nas:8080/api/current"},
		{"nas", "HTTP", 443, "http://nas:443", "ws://nas:443/api/current"},
		{"fd00::5", "https", 0, "https://[fd00::5]:443", "wss://[fd00::5]:443/api/current"},
		{"[fd00::5]", "", 80, "http://[fd00::5]:80", "ws://[fd00::5]:80/api/current"},
	}
	for _, tt := range tests {
		c, err := New(Config{Host: tt.host, Port: tt.port, Protocol: tt.proto, APIKey: "k"}, nil)
		if err != nil {
			t.Fatalf("%+v: %v", tt, err)
		}
		if got := c.Endpoint(); got != tt.want {
			t.Errorf("%+v: Endpoint = %q, want %q", tt, got, tt.want)
		}
		if got := c.st.wsURL(); got != tt.wantWS {
			t.Errorf("%+v: ws URL = %q, want %q", tt, got, tt.wantWS)
		}
		if c.st.cfg.Timeout != defaultTimeout || c.st.cfg.MaxConcurrentCalls != defaultMaxConcurrentCalls || c.st.transport != TransportAuto {
			t.Errorf("defaults not applied: %+v %s", c.st.cfg, c.st.transport)
		}
	}
}
