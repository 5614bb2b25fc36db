package infinia

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestFacts holds the simulator against the published facts about the
// Infinia REST API (shared/reference/infinia.md, "REST API"): each row is
// one documented route or shape, sent over real HTTPS, in order (later
// rows use what earlier rows made). The rows the facts leave open are
// listed in docs/backends/infinia.md, not here.
func TestFacts(t *testing.T) {
	s := startServer(t)
	c := loggedIn(t, s)
	anon := newClient(t, s)
	vol := pathD + "/volumes/pvc-red-facts"
	sub := pathP + "/subsystems/pvc-red-facts"
	var volUUID string

	rows := []struct {
		fact   string
		cl     *client
		method string
		path   string
		body   any
		hdr    []string
		status int
		check  func(t *testing.T, a answer) // the data's documented shape
	}{
		{"login: GET auth_user with user_id/password/level gives data.token, a JWT", anon, "GET", "/redapi/v1/auth_user", nil,
			[]string{"user_id", DefaultUser, "password", DefaultPassword, "level", "clu1/red"}, 200, func(t *testing.T, a answer) {
				var d struct{ Token string }
				a.decode(t, &d)
				if strings.Count(d.Token, ".") != 2 {
					t.Errorf("token %q is not a JWT", d.Token)
				}
			}},
		{"login: a wrong password is 401 with an error envelope", anon, "GET", "/redapi/v1/auth_user", nil,
			[]string{"user_id", DefaultUser, "password", "wrong", "level", "clu1/red"}, 401, nullData},
		{"auth: no bearer token is 401", anon, "GET", pathC + "/instances", nil, nil, 401, nullData},
		{"auth: a malformed bearer token is 401", anon, "GET", pathC + "/instances", nil,
			[]string{"Authorization", "Bearer not.a.jwt"}, 401, nullData},
		{"instances: GET /clusters/{c}/instances lists instance_id, hostname", c, "GET", pathC + "/instances", nil, nil, 200,
			func(t *testing.T, a answer) {
				var d []map[string]any
				a.decode(t, &d)
				if len(d) == 0 || d[0]["instance_id"] == nil || d[0]["hostname"] == nil {
					t.Errorf("instances %s lack instance_id/hostname", a.Data)
				}
			}},
		{"capacity: GET /clusters/{c}/capacity_percent answers", c, "GET", pathC + "/capacity_percent", nil, nil, 200, nil},
		{"tenant: bulk_quota and usage", c, "GET", pathT, nil, nil, 200, hasKeys("bulk_quota", "usage")},
		{"subtenant: bulk_quota and usage", c, "GET", pathP, nil, nil, 200, hasKeys("bulk_quota", "usage")},
		{"service: GET …/services/{name}", c, "GET", pathP + "/services/csiService", nil, nil, 200, nil},
		{"dataset: type volume, bulk_quota, usage", c, "GET", pathD, nil, nil, 200, func(t *testing.T, a answer) {
			hasKeys("bulk_quota", "usage")(t, a)
			var d struct{ Type string }
			a.decode(t, &d)
			if d.Type != "volume" {
				t.Errorf("dataset type %q, want volume", d.Type)
			}
		}},
		{"subsystem: POST {transport: TCP, reqInstances} creates", c, "POST", sub,
			map[string]any{"transport": "TCP", "reqInstances": []int{1, 2, 3}}, nil, 201, nil},
		{"subsystem: GET answers", c, "GET", sub, nil, nil, 200, hasKeys("nqn", "name")},
		{"volume: POST {volumeName, nblocks, block_size, nvmfTarget, nvmfProp, xattrs} is 201", c, "POST", pathD + "/volumes",
			volBody("pvc-red-facts", 256, "pvc-red-facts"), nil, 201, nil},
		{"errors: an existing volume is 409", c, "POST", pathD + "/volumes",
			volBody("pvc-red-facts", 256, "pvc-red-facts"), nil, 409, nullData},
		{"errors: a bad body is 400", c, "POST", pathD + "/volumes", "{not json", nil, 400, nullData},
		{"volume: GET list gives uuid, name, volumeid, wwn, sn, block_size, nblocks, lcore, xattrs", c, "GET", pathD + "/volumes", nil, nil, 200,
			func(t *testing.T, a answer) {
				var d []map[string]json.RawMessage
				a.decode(t, &d)
				if len(d) != 1 {
					t.Fatalf("%d volumes, want 1", len(d))
				}
				for _, k := range []string{"uuid", "name", "volumeid", "wwn", "sn", "block_size", "nblocks", "lcore", "xattrs"} {
					if _, ok := d[0][k]; !ok {
						t.Errorf("volume %s lacks %s", a.Data, k)
					}
				}
				_ = json.Unmarshal(d[0]["uuid"], &volUUID)
			}},
		{"list headers: limit travels as a header", c, "GET", pathD + "/volumes", nil, []string{"limit", "0"}, 200, nil},
		{"list headers: from travels as a header (after the only volume: none)", c, "GET", pathD + "/volumes", nil,
			[]string{"from", "pvc-red-facts"}, 200, func(t *testing.T, a answer) {
				if string(a.Data) != "[]" {
					t.Errorf("from past the last volume gave %s", a.Data)
				}
			}},
		{"volume: GET …/{v} is {volume: {...}}", c, "GET", vol, nil, nil, 200, func(t *testing.T, a answer) {
			var d struct{ Volume map[string]any }
			a.decode(t, &d)
			if d.Volume["name"] != "pvc-red-facts" {
				t.Errorf("GET volume gave %s", a.Data)
			}
		}},
		{"errors: an unknown volume is 404", c, "GET", pathD + "/volumes/nope", nil, nil, 404, nullData},
		{"expose: PUT …/expose {nvmf: {transport: TCP, instanceId}}", c, "PUT", vol + "/expose",
			map[string]any{"nvmf": map[string]any{"transport": "TCP", "instanceId": 1}}, nil, 200, nil},
		{"hosts: add a host to a subsystem", c, "POST", sub + "/hosts",
			map[string]any{"host_nqn": "nqn.2014-08.org.nvmexpress:uuid:facts"}, nil, 201, nil},
		{"subsystems: GET …/list is targets[].subsystems[] with the documented fields", c, "GET", pathP + "/list", nil, nil, 200,
			func(t *testing.T, a answer) { checkList(t, a, volUUID) }},
		{"hosts: remove a host", c, "DELETE", sub + "/hosts/nqn.2014-08.org.nvmexpress:uuid:facts", nil, nil, 200, nil},
		{"resize: PUT …/resize with the new size in blocks", c, "PUT", vol + "/resize",
			map[string]any{"nblocks": 512}, nil, 200, hasKeys("nblocks")},
		{"clone: POST …/clone {srcVol, sizeInBytes}", c, "POST", pathD + "/volumes/pvc-red-facts-clone/clone",
			map[string]any{"srcVol": "pvc-red-facts", "sizeInBytes": 512 * 4096}, nil, 201, nil},
		{"unexpose: DELETE …/unexpose", c, "DELETE", vol + "/unexpose", nil, nil, 200, nil},
		{"volume: DELETE …/{v}?force=true", c, "DELETE", vol + "?force=true", nil, nil, 200, nil},
		{"volume: DELETE the clone", c, "DELETE", pathD + "/volumes/pvc-red-facts-clone?force=true", nil, nil, 200, nil},
		{"subsystem: DELETE ?force", c, "DELETE", sub + "?force=true", nil, nil, 200, nil},
		{"errors: the deleted subsystem is 404", c, "GET", sub, nil, nil, 404, nullData},
	}
	for _, r := range rows {
		a := r.cl.call(r.method, r.path, r.body, r.hdr...)
		if a.Status != r.status {
			t.Errorf("%s: %s %s: status %d (%s), want %d", r.fact, r.method, r.path, a.Status, a.Title, r.status)
			continue
		}
		if r.check != nil {
			t.Run(r.fact, func(t *testing.T) { r.check(t, a) })
		}
	}
}

// nullData is the simulator's error envelope (the facts leave error
// bodies undocumented): a reason in title, data null.
func nullData(t *testing.T, a answer) {
	t.Helper()
	if a.Title == "" || string(a.Data) != "null" {
		t.Errorf("error envelope title %q data %s, want a reason and null", a.Title, a.Data)
	}
}

func hasKeys(keys ...string) func(*testing.T, answer) {
	return func(t *testing.T, a answer) {
		t.Helper()
		var d map[string]any
		a.decode(t, &d)
		for _, k := range keys {
			if _, ok := d[k]; !ok {
				t.Errorf("%s lacks %s", a.Data, k)
			}
		}
	}
}

// checkList holds GET …/list against the documented subsystem shape; the
// namespace uuid is the volume's, nguid the uuid upper-case without dashes.
func checkList(t *testing.T, a answer, volUUID string) {
	var d struct {
		Targets []struct {
			Subsystems []struct {
				NQN          string `json:"nqn"`
				Name         string `json:"name"`
				Serial       string `json:"serial_number"`
				Model        string `json:"model_number"`
				AllowAnyHost *bool  `json:"allow_any_host"`
				Hosts        []string
				Namespaces   []struct {
					NSID   int
					Volume string
					UUID   string
					NGUID  string
				}
				Listeners []struct {
					TrType  string
					AdrFam  string
					TrSvcID string
					TrAddrs []string
				}
			}
		}
	}
	a.decode(t, &d)
	if len(d.Targets) != 1 || len(d.Targets[0].Subsystems) != 1 {
		t.Fatalf("list %s: want one target with one subsystem", a.Data)
	}
	ss := d.Targets[0].Subsystems[0]
	if ss.NQN == "" || ss.Name != "pvc-red-facts" || ss.Serial == "" || ss.Model != "RED Controller" || ss.AllowAnyHost == nil {
		t.Errorf("subsystem fields %s", a.Data)
	}
	if len(ss.Hosts) != 1 {
		t.Errorf("hosts %v, want the added one", ss.Hosts)
	}
	if len(ss.Namespaces) != 1 || ss.Namespaces[0].NSID == 0 || ss.Namespaces[0].Volume != "pvc-red-facts" {
		t.Fatalf("namespaces %s", a.Data)
	}
	ns := ss.Namespaces[0]
	if volUUID == "" || ns.UUID != volUUID || ns.NGUID != strings.ToUpper(strings.ReplaceAll(volUUID, "-", "")) {
		t.Errorf("namespace uuid %q nguid %q, volume uuid %q", ns.UUID, ns.NGUID, volUUID)
	}
	if len(ss.Listeners) == 0 {
		t.Fatalf("no listeners in %s", a.Data)
	}
	for _, l := range ss.Listeners {
		if l.TrType != "TCP" || l.AdrFam != "IPv4" || l.TrSvcID != "4420" || len(l.TrAddrs) == 0 {
			t.Errorf("listener %+v", l)
		}
	}
}
