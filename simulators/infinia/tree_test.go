package infinia

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// TestTreeRoutes: instances, capacity, tenant, subtenants, services and
// datasets answer the seed, and 404 names what is missing.
func TestTreeRoutes(t *testing.T) {
	s := startServer(t)
	if err := s.AddService("clu1", "red", "red", ServiceSeed{Name: "aSvc", Quota: 1 << 30, Instances: []int{2}}); err != nil {
		t.Fatal(err)
	}
	c := loggedIn(t, s)
	c.mkVolume("v", 256) // 1 MiB
	const mib = 1 << 20
	cases := []struct {
		name, path string
		want       string // the data, as JSON
	}{
		{"instances", pathC + "/instances", `[{"instance_id":1,"hostname":"red-1","data_ip":"127.0.0.1"},{"instance_id":2,"hostname":"red-2","data_ip":"127.0.0.2"},{"instance_id":3,"hostname":"red-3","data_ip":"127.0.0.3"}]`},
		{"capacity", pathC + "/capacity_percent", `{"percent":0.0000953674316406,"total":1099511627776,"used":1048576}`},
		{"tenant", pathT, `{"bulk_quota":0,"name":"red","usage":1048576}`},
		{"subtenants", pathT + "/subtenants", `[{"bulk_quota":107374182400,"name":"red","usage":1048576}]`},
		{"subtenant", pathP, `{"bulk_quota":107374182400,"name":"red","usage":1048576}`},
		{"services", pathP + "/services", `[{"dataset":"aSvc","instances":[2],"name":"aSvc","type":"block"},{"dataset":"csiService","instances":[1,2,3],"name":"csiService","type":"block"}]`},
		{"service", pathP + "/services/csiService", `{"dataset":"csiService","instances":[1,2,3],"name":"csiService","type":"block"}`},
		{"dataset", pathD, `{"bulk_quota":0,"name":"csiService","type":"volume","usage":1048576}`},
		{"other dataset", pathP + "/datasets/aSvc", `{"bulk_quota":1073741824,"name":"aSvc","type":"volume","usage":0}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got, want any
			c.call("GET", tc.path, nil).must(t, 200).decode(t, &got)
			if err := json.Unmarshal([]byte(tc.want), &want); err != nil {
				t.Fatal(err)
			}
			if tc.name == "capacity" { // a float: compare with a tolerance
				p := got.(map[string]any)["percent"].(float64)
				if d := p - float64(mib)*100/(1<<40); d > 1e-12 || d < -1e-12 {
					t.Errorf("percent %v", p)
				}
				got.(map[string]any)["percent"] = want.(map[string]any)["percent"]
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("got %v\nwant %v", got, want)
			}
		})
	}
	runSteps(t, c, []step{
		{"unknown cluster", "GET", "/redapi/v1/clusters/nope/instances", nil, 403, "may not access"},
		{"unknown service", "GET", pathP + "/services/nope", nil, 404, "service red/nope not found"},
		{"unknown dataset", "GET", pathP + "/datasets/nope", nil, 404, "dataset red/nope not found"},
		{"unknown subtenant", "GET", pathT + "/subtenants/nope", nil, 404, "subtenant red/nope not found"},
		{"unknown route", "GET", pathP + "/nothing", nil, 404, "no such route"},
		{"outside the API", "GET", "/api/v2.0/system", nil, 404, "no such route"},
		{"wrong verb", "PATCH", pathD + "/volumes", nil, 405, "method not allowed"},
		{"wrong verb on login", "POST", "/redapi/v1/auth_user", nil, 405, "method not allowed"},
	})
	if st := s.Stats(); st.Unrouted != 4 {
		t.Errorf("unrouted %d, want 4", st.Unrouted)
	}
}

// TestUnknownClusterAsAdmin: a cluster-level account sees 404 for what
// does not exist in its cluster, and 403 elsewhere.
func TestUnknownClusterAsAdmin(t *testing.T) {
	s := startServer(t)
	if err := s.AddAccount(Account{Level: "", User: "admin", Password: "pw"}); err != nil {
		t.Fatal(err)
	}
	c := newClient(t, s)
	c.login("admin", "pw", "").must(t, 200)
	runSteps(t, c, []step{
		{"unknown cluster", "GET", "/redapi/v1/clusters/nope/instances", nil, 404, "cluster nope not found"},
		{"unknown tenant", "GET", pathC + "/tenants/nope", nil, 404, "tenant clu1/nope not found"},
		{"any tenant", "GET", pathP, nil, 200, "OK"},
	})
}

// TestQuotas: a change that exceeds a dataset, subtenant, tenant or
// cluster quota is 507 and changes nothing.
func TestQuotas(t *testing.T) {
	cases := []struct {
		name, path string
		quota      int64
	}{
		{"dataset", "clu1/red/red/csiService", 3 << 20},
		{"subtenant", "clu1/red/red", 3 << 20},
		{"tenant", "clu1/red", 3 << 20},
		{"cluster", "clu1", 3 << 20},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := startServer(t)
			if err := s.SetQuota(tc.path, tc.quota); err != nil {
				t.Fatal(err)
			}
			c := loggedIn(t, s)
			c.mkVolume("a", 512) // 2 MiB
			c.call("POST", pathP+"/subsystems/b", nil).must(t, 201)
			a := c.call("POST", pathD+"/volumes", volBody("b", 512, "b")).must(t, 507)
			if !strings.HasPrefix(a.Title, "insufficient space") || !strings.Contains(a.Title, tc.name) {
				t.Errorf("title %q", a.Title)
			}
			c.call("GET", pathD+"/volumes/b", nil).must(t, 404)
			c.call("PUT", pathD+"/volumes/a/resize", map[string]any{"nblocks": 1024}).must(t, 507)
			c.call("PUT", pathD+"/volumes/a/resize", map[string]any{"nblocks": 768}).must(t, 200) // exactly the quota
			var ds datasetJSON
			c.call("GET", pathD, nil).must(t, 200).decode(t, &ds)
			if ds.Usage != 3<<20 {
				t.Errorf("usage %d", ds.Usage)
			}
			c.call("DELETE", pathD+"/volumes/a", nil).must(t, 200)
			c.call("POST", pathD+"/volumes", volBody("b", 768, "b")).must(t, 201)
		})
	}
}

// TestAdmin: the run-time set-up refuses what does not fit the tree, and
// a second tenant's account works on its own tenant only.
func TestAdmin(t *testing.T) {
	s := startServer(t)
	errs := []struct {
		name string
		err  error
	}{
		{"account at an unknown level", s.AddAccount(Account{Level: "clu1/blue", User: "u", Password: "p"})},
		{"account without password", s.AddAccount(Account{Level: "clu1/red", User: "u"})},
		{"duplicate account", s.AddAccount(Account{Level: "clu1/red", User: DefaultUser, Password: "x"})},
		{"tenant of an unknown cluster", s.AddTenant("nope", TenantSeed{Name: "x"})},
		{"duplicate tenant", s.AddTenant("clu1", TenantSeed{Name: "red"})},
		{"bad tenant name", s.AddTenant("clu1", TenantSeed{Name: "a b"})},
		{"service in an unknown subtenant", s.AddService("clu1", "red", "nope", ServiceSeed{Name: "x"})},
		{"service on an unknown instance", s.AddService("clu1", "red", "red", ServiceSeed{Name: "x", Instances: []int{9}})},
		{"quota of nothing", s.SetQuota("clu1/red/red/nope", 1)},
		{"negative quota", s.SetQuota("clu1", -1)},
		{"instances twice", s.SetInstances("clu1", []Instance{{ID: 1, DataIP: "a"}, {ID: 1, DataIP: "b"}})},
		{"instance without address", s.SetInstances("clu1", []Instance{{ID: 1}})},
	}
	for _, e := range errs {
		if e.err == nil {
			t.Errorf("%s: accepted", e.name)
		}
	}
	if len(s.Accounts()) != 1 {
		t.Errorf("accounts %v", s.Accounts())
	}
	if err := s.AddTenant("clu1", TenantSeed{Name: "blue", Subtenants: []SubtenantSeed{{Name: "blue", Services: []ServiceSeed{{Name: "svc"}}}}}); err != nil {
		t.Fatal(err)
	}
	if err := s.AddAccount(Account{Level: "clu1/blue", User: "csiAccount", Password: "blue-pw"}); err != nil {
		t.Fatal(err)
	}
	if err := s.SetInstances("clu1", []Instance{{ID: 5, Hostname: "vm", DataIP: "10.0.2.15"}}); err != nil {
		t.Fatal(err)
	}
	blue := newClient(t, s)
	blue.login("csiAccount", "blue-pw", "clu1/blue").must(t, 200)
	blue.call("GET", pathC+"/tenants/blue/subtenants/blue/services/svc", nil).must(t, 200)
	blue.call("GET", pathP+"/services/csiService", nil).must(t, 403)
	var in []Instance
	blue.call("GET", pathC+"/instances", nil).must(t, 200).decode(t, &in)
	if len(in) != 1 || in[0].DataIP != "10.0.2.15" {
		t.Errorf("instances %+v", in)
	}
	red := newClient(t, s)
	red.login(DefaultUser, "blue-pw", "clu1/red").must(t, 401)
}
