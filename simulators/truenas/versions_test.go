package truenas

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// TestVersionMatrix: which endpoints each release serves, and what it
// reports.
func TestVersionMatrix(t *testing.T) {
	cases := []struct {
		version      string
		product      string
		rest         bool
		jsonrpc      bool
		versions     string // GET /api/versions, "" = 404
		short        bool   // system.version_short exists
		setOptions   bool   // core.set_options exists
		olderVersion string // a versioned endpoint of an older release that still works
	}{
		{"24.10", "TrueNAS-SCALE-24.10.2", true, false, "", false, false, ""},
		{"25.04", "TrueNAS-25.04.2", true, true, `["v25.04.0","v25.04.1","v25.04.2"]`, true, false, "v25.04.0"},
		{"25.10", "TrueNAS-25.10.1", true, true, `["v25.04.0","v25.04.1","v25.04.2","v25.10.0","v25.10.1"]`, true, true, "v25.04.2"},
		{"26.04", "TrueNAS-26.04.0", false, true, `["v25.04.0","v25.04.1","v25.04.2","v25.10.0","v25.10.1","v26.04.0"]`, true, true, "v25.10.1"},
		{"25.04.5", "TrueNAS-25.04.5", true, true, `["v25.04.0","v25.04.1","v25.04.2","v25.04.3","v25.04.4","v25.04.5"]`, true, false, "v25.04.4"},
	}
	for _, tc := range cases {
		t.Run(tc.version, func(t *testing.T) {
			s := startServer(t, tc.version)
			// REST
			status, body := rest(t, nil, s.URL(), "GET", "/system/version", "", rootAuth)
			if tc.rest && (status != 200 || string(body) != `"`+tc.product+`"`) || !tc.rest && status != 404 {
				t.Errorf("REST system/version: %d %s", status, body)
			}
			if status, _ := rest(t, nil, s.URL(), "GET", "", "", rootAuth); (status == 200) != tc.rest {
				t.Errorf("GET /api/v2.0: %d", status)
			}
			// /api/versions
			resp, err := http.Get(s.URL() + "/api/versions")
			if err != nil {
				t.Fatal(err)
			}
			var got json.RawMessage
			json.NewDecoder(resp.Body).Decode(&got)
			resp.Body.Close()
			if tc.versions == "" && resp.StatusCode != http.StatusNotFound || tc.versions != "" && (resp.StatusCode != http.StatusOK || !jsonEqual(t, got, tc.versions)) {
				t.Errorf("/api/versions: %d %s", resp.StatusCode, got)
			}
			// JSON-RPC endpoints
			for _, path := range []string{"/api/current", "/api/" + tc.olderVersion} {
				if path == "/api/" {
					path = "/api/v25.04.2"
				}
				ws, resp, err := dialWS(t, wsURL(s.URL(), path), nil)
				if tc.jsonrpc != (err == nil) {
					t.Errorf("dial %s: %v", path, err)
				}
				if err == nil {
					ws.CloseNow()
				} else if resp == nil || resp.StatusCode != http.StatusNotFound {
					t.Errorf("dial %s: want a 404 handshake answer, got %v", path, resp)
				}
			}
			if _, _, err := dialWS(t, wsURL(s.URL(), "/api/v99.01.0"), nil); err == nil {
				t.Error("an unknown API version was accepted")
			}
			// The legacy protocol is everywhere, and reports the product.
			l := dialLegacy(t, s)
			l.login("root", "secret")
			var product string
			l.result("system.version", &product)
			if product != tc.product {
				t.Errorf("system.version = %q", product)
			}
			if e := l.call("system.version_short").Error; (e == nil) != tc.short {
				t.Errorf("system.version_short: %v", e)
			}
			if e := l.call("core.set_options", map[string]any{}).Error; (e == nil) != tc.setOptions {
				t.Errorf("core.set_options: %v", e)
			}
			var methods map[string]map[string]any
			l.result("core.get_methods", &methods)
			if _, ok := methods["core.set_options"]; ok != tc.setOptions {
				t.Errorf("core.get_methods lists core.set_options: %v", ok)
			}
			if m := methods["core.job_wait"]; m == nil || m["job"] != true {
				t.Errorf("core.get_methods core.job_wait = %v", m)
			}
			if tc.jsonrpc {
				c := dialRPC(t, s)
				c.login()
				var short string
				if a := c.call("system.version_short"); a.Error == nil {
					json.Unmarshal(a.Result, &short)
				}
				if !strings.HasPrefix(tc.product, "TrueNAS-"+short) {
					t.Errorf("version_short %q vs product %q", short, tc.product)
				}
			}
		})
	}
}
