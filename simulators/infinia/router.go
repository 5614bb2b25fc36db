package infinia

import (
	"log/slog"
	"net/http"
	"net/url"
	"strings"
)

// basePath is where the API lives.
const basePath = "/redapi/v1"

// request is a routed call.
type request struct {
	r      *http.Request
	params map[string]string // the path's {wildcards}
	claims claims            // the token's (zero for login)
}

func (rq *request) p(name string) string { return rq.params[name] }

type handler func(*Server, *request) (status int, data any, err *apiError)

// route is one REST route. Its pattern is prefix+suffix; key, the name in
// Stats.Requests, is the verb and the suffix: the path relative to the
// innermost parent object.
type route struct {
	method string
	segs   []string
	key    string
	op     string // the Faults operation
	h      handler
}

// Pattern prefixes (relative to basePath).
const (
	pC = "/clusters/{c}"
	pT = pC + "/tenants/{t}"
	pP = pT + "/subtenants/{s}"
	pD = pP + "/datasets/{d}"
)

var routes = []route{
	mk("GET", "", "/auth_user", "login", (*Server).login),
	mk("GET", pC, "/instances", "instance.list", (*Server).listInstances),
	mk("GET", pC, "/capacity_percent", "capacity.get", (*Server).capacity),
	mk("GET", pC, "/tenants/{t}", "tenant.get", (*Server).getTenant),
	mk("GET", pT, "/subtenants", "subtenant.list", (*Server).listSubtenants),
	mk("GET", pT, "/subtenants/{s}", "subtenant.get", (*Server).getSubtenant),
	mk("GET", pP, "/services", "service.list", (*Server).listServices),
	mk("GET", pP, "/services/{svc}", "service.get", (*Server).getService),
	mk("GET", pP, "/datasets/{d}", "dataset.get", (*Server).getDataset),
	mk("GET", pD, "/volumes", "volume.list", (*Server).listVolumes),
	mk("POST", pD, "/volumes", "volume.create", (*Server).createVolume),
	mk("GET", pD, "/volumes/{v}", "volume.get", (*Server).getVolume),
	mk("DELETE", pD, "/volumes/{v}", "volume.delete", (*Server).deleteVolume),
	mk("PUT", pD, "/volumes/{v}/resize", "volume.resize", (*Server).resizeVolume),
	mk("PUT", pD, "/volumes/{v}/expose", "volume.expose", (*Server).exposeVolume),
	mk("DELETE", pD, "/volumes/{v}/unexpose", "volume.unexpose", (*Server).unexposeVolume),
	mk("POST", pD, "/volumes/{v}/clone", "volume.clone", (*Server).cloneVolume),
	mk("GET", pP, "/list", "subsystem.list", (*Server).listSubsystems),
	mk("POST", pP, "/subsystems/{name}", "subsystem.create", (*Server).createSubsystem),
	mk("GET", pP, "/subsystems/{name}", "subsystem.get", (*Server).getSubsystem),
	mk("DELETE", pP, "/subsystems/{name}", "subsystem.delete", (*Server).deleteSubsystem),
	mk("GET", pP, "/subsystems/{name}/hosts", "host.list", (*Server).listHosts),
	mk("POST", pP, "/subsystems/{name}/hosts", "host.add", (*Server).addHost),
	mk("DELETE", pP, "/subsystems/{name}/hosts/{nqn}", "host.remove", (*Server).removeHost),
}

func mk(method, prefix, suffix, op string, h handler) route {
	return route{method: method, segs: strings.Split(strings.Trim(prefix+suffix, "/"), "/"),
		key: method + " " + suffix, op: op, h: h}
}

// match finds the route of a verb and path; status is 404 (no route) or
// 405 (a route, not for this verb) when there is none.
func match(method, escapedPath string) (*route, map[string]string, int) {
	rest, ok := strings.CutPrefix(escapedPath, basePath+"/")
	if !ok {
		return nil, nil, http.StatusNotFound
	}
	raw := strings.Split(strings.TrimSuffix(rest, "/"), "/")
	segs := make([]string, len(raw))
	for i, s := range raw {
		u, err := url.PathUnescape(s)
		if err != nil || u == "" {
			return nil, nil, http.StatusNotFound
		}
		segs[i] = u
	}
	status := http.StatusNotFound
	for i := range routes {
		rt := &routes[i]
		params, ok := rt.match(segs)
		if !ok {
			continue
		}
		if rt.method != method {
			status = http.StatusMethodNotAllowed
			continue
		}
		return rt, params, 0
	}
	return nil, nil, status
}

func (rt *route) match(segs []string) (map[string]string, bool) {
	if len(segs) != len(rt.segs) {
		return nil, false
	}
	var params map[string]string
	for i, p := range rt.segs {
		if strings.HasPrefix(p, "{") {
			if params == nil {
				params = map[string]string{}
			}
			params[strings.Trim(p, "{}")] = segs[i]
			continue
		}
		if p != segs[i] {
			return nil, false
		}
	}
	return params, true
}

// ServeHTTP is the REST API: route, count, inject faults, authenticate,
// run, answer (or drop the connection).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rt, params, status := match(r.Method, r.URL.EscapedPath())
	if rt == nil {
		s.stats.unrouted.Add(1)
		s.stats.status(status)
		writeEnvelope(w, status, map[int]string{404: "no such route: ", 405: "method not allowed: "}[status]+r.Method+" "+r.URL.Path, nil)
		return
	}
	s.stats.request(rt.key)
	if !s.enter() {
		writeEnvelope(w, http.StatusServiceUnavailable, "server closed", nil)
		return
	}
	defer s.leave()
	rq := &request{r: r, params: params}
	status, title, data := s.run(rt, rq)
	if s.faults.TakeDrop() {
		s.stats.dropped.Add(1)
		s.log.Debug("dropping the connection", "route", rt.key)
		dropConn(r.Context())
		panic(http.ErrAbortHandler) // net/http closes the connection without an answer
	}
	s.stats.status(status)
	if s.log.Enabled(r.Context(), slog.LevelDebug) { // the arguments cost allocations per request
		s.log.Debug("request", "route", rt.key, "path", r.URL.Path, "status", status)
	}
	writeEnvelope(w, status, title, data)
}

// run applies the faults and the authentication, then the handler.
func (s *Server) run(rt *route, rq *request) (int, string, any) {
	s.sleep(s.faults.Delay(rt.op))
	if s.faults.Fail(rt.op) {
		s.stats.injected.Add(1)
		return http.StatusServiceUnavailable, "injected fault", nil
	}
	if rt.op != "login" {
		if e := s.authorize(rq); e != nil {
			return e.Status, e.Title, nil
		}
	}
	status, data, e := rt.h(s, rq)
	if e != nil {
		return e.Status, e.Title, nil
	}
	return status, "OK", data
}
