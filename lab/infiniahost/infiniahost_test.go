package infiniahost

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"net"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	yaml "sigs.k8s.io/yaml/goyaml.v3"
)

// login logs in as the host's account with a client that verifies the
// server against CertPEM (or plain HTTP) and returns the status.
func login(t *testing.T, h *Host) int {
	t.Helper()
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	if h.CertPEM != nil {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(h.CertPEM) {
			t.Fatal("CertPEM holds no certificate")
		}
		tr.TLSClientConfig = &tls.Config{RootCAs: pool}
	}
	parts := strings.Split(h.Account, "/")
	req, _ := http.NewRequest(http.MethodGet, h.URL+"/redapi/v1/auth_user", nil)
	req.Header.Set("user_id", parts[2])
	req.Header.Set("password", h.Password)
	req.Header.Set("level", parts[0]+"/"+parts[1])
	resp, err := (&http.Client{Transport: tr, Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var env struct{ Data struct{ Token string } }
	if err := json.NewDecoder(resp.Body).Decode(&env); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode == http.StatusOK && env.Data.Token == "" {
		t.Error("200 without a token")
	}
	return resp.StatusCode
}

// TestStart: the host serves TLS (or http with Plain) and its account
// logs in; Close, or the end of Start's context, stops it.
func TestStart(t *testing.T) {
	for _, plain := range []bool{false, true} {
		t.Run(map[bool]string{false: "tls", true: "plain"}[plain], func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			h, err := Start(ctx, Options{Dir: t.TempDir(), Plain: plain, Latency: time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close()
			wantScheme := map[bool]string{false: "https://127.0.0.1:", true: "http://127.0.0.1:"}[plain]
			if !strings.HasPrefix(h.URL, wantScheme) || (h.CertPEM == nil) != plain ||
				h.Account != "clu1/red/csiAccount" || h.Password != "switchyard-lab" || h.Service != "red/csiService" {
				t.Fatalf("host %+v", h)
			}
			if st := login(t, h); st != 200 {
				t.Fatalf("login: %d", st)
			}
			if st := h.Server.Stats(); st.Logins != 1 {
				t.Errorf("logins %d", st.Logins)
			}
			cancel()
			deadline := time.Now().Add(10 * time.Second)
			addr := strings.TrimPrefix(strings.TrimPrefix(h.URL, "https://"), "http://")
			for {
				conn, err := net.DialTimeout("tcp", addr, time.Second)
				if err != nil {
					break // the listener is closed
				}
				conn.Close()
				if time.Now().After(deadline) {
					t.Fatal("the host still serves after its context ended")
				}
				time.Sleep(20 * time.Millisecond)
			}
		})
	}
	if _, err := Start(context.Background(), Options{}); err == nil || !strings.Contains(err.Error(), "Dir is required") {
		t.Errorf("no Dir: %v", err)
	}
}

// TestConfigs: DDNConfig is DDN's file; DriverConfig adds the driver
// line and deep-merges extra (nil removes a key) without touching extra.
func TestConfigs(t *testing.T) {
	h, err := Start(t.Context(), Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	account := map[string]any{
		"apis": []any{h.URL}, "password": "switchyard-lab", "insecureSkipVerify": true,
		"default_instance_ids": []any{1, 2, 3}, "default_data_port": 4420,
	}
	var ddn map[string]any
	if err := yaml.Unmarshal(h.DDNConfig(), &ddn); err != nil {
		t.Fatal(err)
	}
	if want := map[string]any{"accounts": map[string]any{"clu1/red/csiAccount": account}}; !reflect.DeepEqual(ddn, want) {
		t.Errorf("DDNConfig:\n%v\nwant %v", ddn, want)
	}
	extra := map[string]any{
		"accounts": map[string]any{"clu1/red/csiAccount": map[string]any{"zone": "zone-a", "insecureSkipVerify": nil}},
		"node":     map[string]any{"format": map[string]any{"ext4": map[string]any{}}},
	}
	raw := h.DriverConfig("infinia-a", extra)
	if !strings.HasPrefix(string(raw), "# infinia-a: ") || !strings.Contains(string(raw), "\ndriver: infinia-nvmeof\n") {
		t.Errorf("DriverConfig:\n%s", raw)
	}
	var cfg map[string]any
	if err := yaml.Unmarshal(raw, &cfg); err != nil {
		t.Fatal(err)
	}
	merged := map[string]any{}
	for k, v := range account {
		merged[k] = v
	}
	delete(merged, "insecureSkipVerify")
	merged["zone"] = "zone-a"
	want := map[string]any{
		"driver":   "infinia-nvmeof",
		"accounts": map[string]any{"clu1/red/csiAccount": merged},
		"node":     map[string]any{"format": map[string]any{"ext4": map[string]any{}}},
	}
	if !reflect.DeepEqual(cfg, want) {
		t.Errorf("DriverConfig:\n%v\nwant %v", cfg, want)
	}
	if _, ok := extra["accounts"].(map[string]any)["clu1/red/csiAccount"].(map[string]any)["insecureSkipVerify"]; !ok {
		t.Error("DriverConfig changed its extra argument")
	}
	// A second call starts from the defaults again.
	if err := yaml.Unmarshal(h.DriverConfig("", nil), &cfg); err != nil {
		t.Fatal(err)
	}
	if got := cfg["accounts"].(map[string]any)["clu1/red/csiAccount"]; !reflect.DeepEqual(got, account) {
		t.Errorf("second DriverConfig: %v", got)
	}
}
