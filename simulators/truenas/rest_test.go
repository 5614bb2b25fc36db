package truenas

import (
	"encoding/json"
	"net/http"
	"sync"
	"testing"

	"github.com/switchyard-csi/switchyard/simulators/truenas/middleware"
)

// recorderMethods registers a CRUD namespace "test.things" and a config
// namespace "test.cfg" whose handlers return their parameters, so tests
// see exactly what the REST mapping passed.
func recorderMethods(r *middleware.Registry) {
	echo := func(name string, params ...string) {
		r.Add(middleware.Method{Name: name, Params: params, Handler: func(_ *middleware.Call, p []json.RawMessage) (any, error) {
			return map[string]any{"method": name, "params": p}, nil
		}})
	}
	echo("test.things.query", "filters", "options")
	echo("test.things.create", "data")
	echo("test.things.update", "id", "data")
	echo("test.things.delete", "id", "force", "delete_extents")
	echo("test.things.rename", "id", "new_name")
	echo("test.things.bulk", "first", "second")
	echo("test.things.summary")
	echo("test.things.search", "filters", "options")
	echo("test.cfg.config")
	echo("test.cfg.update", "data")
}

type echoed struct {
	Method string            `json:"method"`
	Params []json.RawMessage `json:"params"`
}

// TestRESTMapping: verbs, paths, query strings and bodies become the
// method and positional parameters restful.py would pass.
func TestRESTMapping(t *testing.T) {
	s := startServer(t, "24.10")
	recorderMethods(s.Registry())
	cases := []struct {
		name, verb, path, body string
		method                 string
		params                 string // JSON array
	}{
		{"query without filters", "GET", "/test/things", "", "test.things.query", `[]`},
		{"query filters and options", "GET", "/test/things?name=tank%2Fa&id__gt=3&size__lte=10&comment__regex=%5Ex&flag=true&gone=null&limit=2&offset=1&sort=-id,name&count=false&extra.retrieve_children=false",
			"", "test.things.query",
			`[[["comment","~","^x"],["flag","=",true],["gone","=",null],["id",">",3],["name","=","tank/a"],["size","<=",10]],
			  {"count":false,"limit":2,"offset":1,"order_by":["-id","name"],"extra":{"retrieve_children":false}}]`},
		{"query operator passed through", "GET", "/test/things?name__%5E=tank", "", "test.things.query", `[[["name","^","tank"]],{}]`},
		{"get by url-encoded id", "GET", "/test/things/id/tank%2Fa%2Fb", "", "test.things.query",
			`[[["id","=","tank/a/b"]],{"get":true,"force_sql_filters":true,"extra":{}}]`},
		{"get by numeric id, extra", "GET", "/test/things/id/7?extra.flat=true", "", "test.things.query",
			`[[["id","=",7]],{"get":true,"force_sql_filters":true,"extra":{"flat":true}}]`},
		{"create", "POST", "/test/things", `{"name":"a"}`, "test.things.create", `[{"name":"a"}]`},
		{"update", "PUT", "/test/things/id/tank%2Fa", `{"x":1}`, "test.things.update", `["tank/a",{"x":1}]`},
		{"update, trailing slash", "PUT", "/test/things/id/5/", `{"x":1}`, "test.things.update", `[5,{"x":1}]`},
		{"delete without body", "DELETE", "/test/things/id/5", "", "test.things.delete", `[5]`},
		{"delete with named params", "DELETE", "/test/things/id/5", `{"force":true,"delete_extents":false}`, "test.things.delete", `[5,true,false]`},
		{"delete, missing optional param moves the next up", "DELETE", "/test/things/id/5", `{"delete_extents":true}`, "test.things.delete", `[5,true]`},
		{"item method", "POST", "/test/things/id/9/rename", `"b"`, "test.things.rename", `[9,"b"]`},
		{"method with several params", "POST", "/test/things/bulk", `{"second":2,"first":1}`, "test.things.bulk", `[1,2]`},
		{"method without params is GET", "GET", "/test/things/summary", "", "test.things.summary", `[]`},
		{"config", "GET", "/test/cfg", "", "test.cfg.config", `[]`},
		{"config update", "PUT", "/test/cfg", `{"basename":"iqn.x"}`, "test.cfg.update", `[{"basename":"iqn.x"}]`},
		{"query params in a body, old names", "GET", "/test/things/search", `{"query-filters":[["a","=",1]],"query-options":{"limit":1}}`,
			"test.things.search", `[[["a","=",1]],{"limit":1}]`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, body := rest(t, nil, s.URL(), tc.verb, tc.path, tc.body, rootAuth)
			if status != http.StatusOK {
				t.Fatalf("status %d: %s", status, body)
			}
			var e echoed
			if err := json.Unmarshal(body, &e); err != nil {
				t.Fatalf("body %s: %v", body, err)
			}
			params, _ := json.Marshal(e.Params)
			if e.Method != tc.method || !jsonEqual(t, params, tc.params) {
				t.Errorf("got %s %s, want %s %s", e.Method, params, tc.method, tc.params)
			}
		})
	}
}

// TestRESTRoutingAndBodyErrors: unknown routes, wrong verbs and bodies that
// do not fit the parameters.
func TestRESTRoutingAndBodyErrors(t *testing.T) {
	s := startServer(t, "25.10")
	recorderMethods(s.Registry())
	cases := []struct {
		name, verb, path, body string
		status                 int
		want                   string // JSON body, or "" to skip
	}{
		{"unknown namespace", "GET", "/nothing/here", "", 404, ""},
		{"CRUD verbs are not method routes", "POST", "/test/things/create", `{}`, 404, ""},
		{"wrong verb on a resource", "DELETE", "/test/things", "", 405, ""},
		{"wrong verb on a method", "POST", "/test/things/summary", `{}`, 405, ""},
		{"method with params is POST only", "GET", "/test/things/bulk", "", 405, ""},
		{"item route of a non-CRUD namespace", "GET", "/system/id/1", "", 404, ""},
		{"bad JSON", "POST", "/test/things", `{"a":`, 400, ""},
		{"several params need an object", "POST", "/test/things/bulk", `[1,2]`, 400,
			`{"message":"Endpoint accepts multiple params, object/dict expected."}`},
		{"unexpected attribute", "POST", "/test/things/bulk", `{"first":1,"third":3,"fourth":4}`, 400,
			`{"message":"The following attributes are not expected: fourth, third"}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, body := rest(t, nil, s.URL(), tc.verb, tc.path, tc.body, rootAuth)
			if status != tc.status {
				t.Fatalf("status %d (%s), want %d", status, body, tc.status)
			}
			if tc.want != "" && !jsonEqual(t, body, tc.want) {
				t.Errorf("body %s, want %s", body, tc.want)
			}
		})
	}
}

// TestRESTErrorRendering: error kinds become restful.py's statuses and
// bodies.
func TestRESTErrorRendering(t *testing.T) {
	s := startServer(t, "25.04")
	r := s.Registry()
	r.Add(middleware.Method{Name: "test.items.query", Params: []string{"filters", "options"}, Handler: func(_ *middleware.Call, p []json.RawMessage) (any, error) {
		f, o, err := middleware.ParseQuery(p, "test_items_query")
		if err != nil {
			return nil, err
		}
		return middleware.Query([]middleware.Row{{"id": 1, "name": "one"}}, f, o)
	}})
	r.Add(middleware.Method{Name: "test.items.update", Params: []string{"id", "data"}, Handler: func(_ *middleware.Call, p []json.RawMessage) (any, error) {
		return nil, middleware.NotFound("Item", string(p[0]))
	}})
	cases := []struct {
		name, verb, path, body string
		status                 int
		want                   string
	}{
		{"method without params refuses POST", "POST", "/test/callerror", `{}`, 405, ""},
		{"CallError via GET", "GET", "/test/callerror", "", 422, `{"message":"gone","errno":2}`},
		{"validation", "GET", "/test/invalid", "", 422, `{"test.x":[{"message":"bad","errno":22}],"test.y":[{"message":"worse","errno":17}]}`},
		{"instance not found on update", "PUT", "/test/items/id/5", `{}`, 422, `{"null":[{"message":"Item 5 does not exist","errno":2}]}`},
		{"found by id", "GET", "/test/items/id/1", "", 200, `{"id":1,"name":"one"}`},
		{"missing id on GET", "GET", "/test/items/id/2", "", 404, `{"message":""}`},
		{"panic", "GET", "/test/panic", "", 500, ""},
		{"plain error", "GET", "/test/plainerr", "", 500, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, body := rest(t, nil, s.URL(), tc.verb, tc.path, tc.body, rootAuth)
			if status != tc.status {
				t.Fatalf("status %d (%s), want %d", status, body, tc.status)
			}
			if tc.want != "" && !jsonEqual(t, body, tc.want) {
				t.Errorf("body %s, want %s", body, tc.want)
			}
			if status == 500 {
				var m map[string]any
				json.Unmarshal(body, &m)
				if m["message"] == "" || m["traceback"] == nil {
					t.Errorf("500 body %s lacks message/traceback", body)
				}
			}
		})
	}
}

// TestRESTAuth: basic and bearer authentication, 401 otherwise; core.ping
// needs none.
func TestRESTAuth(t *testing.T) {
	s := startServer(t, "24.10")
	cases := []struct {
		name   string
		path   string
		auth   restAuth
		status int
		body   string
	}{
		{"basic", "/system/version", rootAuth, 200, `"TrueNAS-SCALE-24.10.2"`},
		{"bearer", "/system/version", restAuth{key: testKey}, 200, `"TrueNAS-SCALE-24.10.2"`},
		{"wrong password", "/system/version", restAuth{user: "root", password: "nope"}, 401, ""},
		{"unknown user", "/system/version", restAuth{user: "admin", password: "secret"}, 401, ""},
		{"wrong key", "/system/version", restAuth{key: testKey[:len(testKey)-1] + "Z"}, 401, ""},
		{"no credentials", "/system/version", restAuth{}, 401, ""},
		{"no credentials, no-auth method", "/core/ping", restAuth{}, 200, `"pong"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, body := rest(t, nil, s.URL(), "GET", tc.path, "", tc.auth)
			if status != tc.status {
				t.Fatalf("status %d (%s), want %d", status, body, tc.status)
			}
			if tc.body != "" && !jsonEqual(t, body, tc.body) {
				t.Errorf("body %s, want %s", body, tc.body)
			}
		})
	}
}

// TestRESTJobReturnsID: a job method answers its job id; the job's outcome
// is in core.get_jobs.
func TestRESTJobReturnsID(t *testing.T) {
	s := startServer(t, "25.04")
	var wg sync.WaitGroup
	wg.Add(1)
	s.Registry().Add(middleware.Method{Name: "test.work.run", Job: true, Params: []string{"n"}, Handler: func(c *middleware.Call, p []json.RawMessage) (any, error) {
		defer wg.Done()
		c.Progress(50, "half")
		return map[string]any{"done": string(p[0])}, nil
	}})
	status, body := rest(t, nil, s.URL(), "POST", "/test/work/run", `3`, rootAuth)
	if status != 200 || string(body) != "1" {
		t.Fatalf("POST job: %d %s, want 200 1", status, body)
	}
	wg.Wait()
	waitJob(t, s, 1, jobSuccess)
	status, body = rest(t, nil, s.URL(), "GET", "/core/get_jobs?id=1", "", rootAuth)
	var jobs []map[string]any
	json.Unmarshal(body, &jobs)
	if status != 200 || len(jobs) != 1 || jobs[0]["state"] != "SUCCESS" || jobs[0]["method"] != "test.work.run" {
		t.Fatalf("core.get_jobs: %d %s", status, body)
	}
	if res, _ := json.Marshal(jobs[0]["result"]); !jsonEqual(t, res, `{"done":"3"}`) {
		t.Errorf("job result %s", res)
	}
}
