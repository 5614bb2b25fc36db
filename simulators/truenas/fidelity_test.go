package truenas

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// The tests named TestFidelity* each pin one row of issue 15: a request
// exactly as a TrueNAS client other than switchyard's sends it (democratic-
// csi over REST, the Go drivers over JSON-RPC), and the answer the real
// middleware gives it (its plugins and API models are the reference).

// restClient is how a test talks REST to s (TLS or not) as root.
func restClient(t *testing.T, s *Server) (*http.Client, string) {
	t.Helper()
	if s.TLSURL() != "" {
		return tlsClient(t, s), s.TLSURL()
	}
	return nil, s.URL()
}

// restJSON sends a REST request and decodes a 200 answer into v.
func restJSON(t *testing.T, s *Server, verb, path, body string, v any) {
	t.Helper()
	hc, base := restClient(t, s)
	code, data := rest(t, hc, base, verb, path, body, rootAuth)
	if code != http.StatusOK {
		t.Fatalf("%s %s: %d %s", verb, path, code, data)
	}
	if v != nil {
		if err := json.Unmarshal(data, v); err != nil {
			t.Fatalf("%s %s: %s: %v", verb, path, data, err)
		}
	}
}

// Row 12: a fresh TrueNAS has no iSCSI portal and no initiator group; an
// admin (or a client's set-up) creates them, and the first ones get id 1.
func TestFidelityFreshSystemHasNoPortalOrInitiatorGroup(t *testing.T) {
	for _, v := range []string{"24.10", "25.04", "25.10"} {
		t.Run(v, func(t *testing.T) {
			s := startServer(t, v)
			// democratic-csi lists portals and groups over REST.
			for _, path := range []string{"/iscsi/portal", "/iscsi/initiator"} {
				var rows []map[string]any
				restJSON(t, s, "GET", path, "", &rows)
				if len(rows) != 0 {
					t.Errorf("GET %s on a fresh system = %v, want []", path, rows)
				}
			}
			hc, base := restClient(t, s)
			if code, body := rest(t, hc, base, "GET", "/iscsi/portal/id/1", "", rootAuth); code != http.StatusNotFound {
				t.Errorf("GET /iscsi/portal/id/1 on a fresh system: %d %s, want 404", code, body)
			}
			// A target naming portal 1 before anyone made it is refused.
			code, body := rest(t, hc, base, "POST", "/iscsi/target", `{"name":"pvc-1","groups":[{"portal":1}]}`, rootAuth)
			if code != 422 || !jsonHas(body, "iscsi_target_create.groups.0.portal", "1 Portal not found in database") {
				t.Errorf("target on a missing portal: %d %s", code, body)
			}
			var portal map[string]any
			restJSON(t, s, "POST", "/iscsi/portal", `{"listen":[{"ip":"0.0.0.0"}]}`, &portal)
			if portal["id"] != 1.0 || portal["tag"] != 1.0 {
				t.Errorf("the admin's first portal: %v", portal)
			}
		})
	}
}

// jsonHas reports whether a REST validation error body has attr with a
// message containing msg.
func jsonHas(body []byte, attr, msg string) bool {
	var m map[string][]struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(body, &m) != nil {
		return false
	}
	for _, e := range m[attr] {
		if strings.Contains(e.Message, msg) {
			return true
		}
	}
	return false
}

// Row 1: the legacy schema's Str (pool.dataset up to 25.04) stringifies an
// integer, so democratic-csi's PUT with a numeric user property value is
// stored as "1"; the pydantic models of 25.10 refuse it.
func TestFidelityLegacyStrStringifiesIntegerUserProperty(t *testing.T) {
	for _, v := range []string{"24.10", "25.04", "25.10"} {
		t.Run(v, func(t *testing.T) {
			s := startServer(t, v)
			restJSON(t, s, "POST", "/pool/dataset", `{"name":"tank/pvc-1","type":"FILESYSTEM"}`, nil)
			hc, base := restClient(t, s)
			body := `{"user_properties_update":[{"key":"democratic-csi:volume_context_provisioner_driver_instance_id","value":1}]}`
			code, data := rest(t, hc, base, "PUT", "/pool/dataset/id/tank%2Fpvc-1", body, rootAuth)
			attr := "pool_dataset_update.user_properties_update.0.value"
			if v == "25.10" {
				if code != 422 || !jsonHas(data, attr, "Input should be a valid string") {
					t.Fatalf("25.10 (pydantic): %d %s, want 422 %s: Input should be a valid string", code, data, attr)
				}
				return
			}
			if code != http.StatusOK {
				t.Fatalf("PUT with an integer value: %d %s, want 200 (the legacy Str stringifies it)", code, data)
			}
			var ds map[string]any
			restJSON(t, s, "GET", "/pool/dataset/id/tank%2Fpvc-1", "", &ds)
			up, _ := ds["user_properties"].(map[string]any)
			p, _ := up["democratic-csi:volume_context_provisioner_driver_instance_id"].(map[string]any)
			if p["value"] != "1" || p["rawvalue"] != "1" {
				t.Errorf("stored user property = %v, want value \"1\"", p)
			}
			// A float or a bool is still not a string to the legacy Str.
			code, data = rest(t, hc, base, "PUT", "/pool/dataset/id/tank%2Fpvc-1",
				`{"user_properties_update":[{"key":"a:b","value":1.5}]}`, rootAuth)
			if code != 422 || !jsonHas(data, attr, "Not a string") {
				t.Errorf("PUT with a float value: %d %s, want 422 Not a string", code, data)
			}
		})
	}
}
