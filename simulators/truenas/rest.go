package truenas

import (
	"encoding/base64"
	"net/http"
	"net/url"
	"strings"

	"github.com/switchyard-csi/switchyard/simulators/truenas/middleware"
)

// restRoute is what a REST path and verb resolve to.
type restRoute struct {
	method  *middleware.Method
	id      any  // the item id of /ns/id/<id> routes
	hasID   bool // an item route: id is the first parameter
	getByID bool // GET /ns/id/<id>: a query of that id with get=true
	filter  bool // GET of a query method: filters come from the query string
}

// serveREST is the REST v2.0 transport (restful.py): absent from 26.
func (s *Server) serveREST(w http.ResponseWriter, r *http.Request) {
	if s.version.AtLeast(26, 0, 0) {
		plainError(w, http.StatusNotFound)
		return
	}
	segs, ok := restSegments(r)
	if !ok {
		plainError(w, http.StatusNotFound)
		return
	}
	if len(segs) == 0 {
		if r.Method != http.MethodGet {
			plainError(w, http.StatusMethodNotAllowed)
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"openapi": "3.0.0", "info": map[string]any{"title": "TrueNAS RESTful API", "version": "v2.0"}, "paths": map[string]any{}})
		return
	}
	route, status := s.resolveREST(r.Method, segs)
	if status != 0 {
		plainError(w, status)
		return
	}
	ss := newSession(s, transportREST, r.TLS != nil, r.RemoteAddr)
	if status, msg := s.restAuth(r, ss, route.method.Name); status != 0 {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(status)
		w.Write([]byte(msg))
		return
	}
	params, status, msg := restParams(r, route)
	if status != 0 {
		writeJSON(w, status, msg)
		return
	}
	if !s.begin() {
		plainError(w, http.StatusServiceUnavailable)
		return
	}
	out := s.call(s.generation(), ss, route.method.Name, params)
	s.end()
	if out.drop {
		dropConn(r.Context())
		panic(http.ErrAbortHandler)
	}
	if out.err != nil {
		status, body := restError(out.err, route.getByID)
		writeJSON(w, status, body)
		return
	}
	writeJSON(w, http.StatusOK, out.result)
}

// restSegments splits the path after /api/v2.0 into unescaped segments
// (ids are url-encoded: dataset ids contain "/").
func restSegments(r *http.Request) ([]string, bool) {
	p := strings.TrimPrefix(r.URL.EscapedPath(), "/api/v2.0")
	p = strings.Trim(p, "/")
	if p == "" {
		return nil, true
	}
	raw := strings.Split(p, "/")
	segs := make([]string, len(raw))
	for i, seg := range raw {
		u, err := url.PathUnescape(seg)
		if err != nil || u == "" {
			return nil, false
		}
		segs[i] = u
	}
	return segs, true
}

// resolveREST maps a verb and path to a method as restful.py registers
// routes; status is 404 (no such route) or 405 (route, but not this verb).
func (s *Server) resolveREST(verb string, segs []string) (restRoute, int) {
	// /ns/id/<id>[/<item method>] on a CRUD namespace.
	for i := 1; i+1 < len(segs); i++ {
		ns := strings.Join(segs[:i], ".")
		if segs[i] != "id" || !s.isCRUD(ns) {
			continue
		}
		id := restID(segs[i+1])
		switch rest := segs[i+2:]; len(rest) {
		case 0:
			name := map[string]string{http.MethodGet: ".query", http.MethodPut: ".update", http.MethodDelete: ".delete"}[verb]
			if m, ok := s.reg.Lookup(ns + name); ok && name != "" {
				return restRoute{method: m, id: id, hasID: verb != http.MethodGet, getByID: verb == http.MethodGet}, 0
			}
			return restRoute{}, http.StatusMethodNotAllowed
		case 1:
			m, ok := s.reg.Lookup(ns + "." + rest[0])
			if !ok || blacklisted(rest[0], true) {
				return restRoute{}, http.StatusNotFound
			}
			if verb != http.MethodPost {
				return restRoute{}, http.StatusMethodNotAllowed
			}
			return restRoute{method: m, id: id, hasID: true}, 0
		}
		return restRoute{}, http.StatusNotFound
	}
	// The namespace itself: CRUD (query, create) or config (config, update).
	ns := strings.Join(segs, ".")
	if s.isCRUD(ns) || s.isConfig(ns) {
		var name string
		switch {
		case s.isCRUD(ns) && verb == http.MethodGet:
			name = ".query"
		case s.isCRUD(ns) && verb == http.MethodPost:
			name = ".create"
		case s.isConfig(ns) && verb == http.MethodGet:
			name = ".config"
		case s.isConfig(ns) && verb == http.MethodPut:
			name = ".update"
		}
		if m, ok := s.reg.Lookup(ns + name); ok && name != "" {
			return restRoute{method: m, filter: name == ".query"}, 0
		}
		return restRoute{}, http.StatusMethodNotAllowed
	}
	// Any other method: /ns/<method>.
	if len(segs) < 2 {
		return restRoute{}, http.StatusNotFound
	}
	ns, short := strings.Join(segs[:len(segs)-1], "."), segs[len(segs)-1]
	m, ok := s.reg.Lookup(ns + "." + short)
	if !ok || blacklisted(short, s.isCRUD(ns)) || s.isConfig(ns) && (short == "config" || short == "update") {
		return restRoute{}, http.StatusNotFound
	}
	// Methods with parameters are POST; those without, and query-style
	// methods, are GET.
	want := http.MethodPost
	if len(m.Params) == 0 || isFilterable(m) {
		want = http.MethodGet
	}
	if verb != want {
		return restRoute{}, http.StatusMethodNotAllowed
	}
	return restRoute{method: m, filter: isFilterable(m)}, 0
}

// blacklisted: the CRUD verbs are only reachable through the resource
// routes, not as /ns/<method>.
func blacklisted(short string, crud bool) bool {
	return crud && (short == "query" || short == "create" || short == "update" || short == "delete")
}

func (s *Server) isCRUD(ns string) bool   { _, ok := s.reg.Lookup(ns + ".query"); return ok }
func (s *Server) isConfig(ns string) bool { _, ok := s.reg.Lookup(ns + ".config"); return ok }

// restID is an id from the URL: an integer when it is all digits.
func restID(seg string) any {
	if isDigits(seg) {
		if n, ok := atoiSafe(seg); ok {
			return n
		}
	}
	return seg
}

// restAuth authenticates a request (basic or bearer API key); it returns a
// status and plain-text body when the request must be refused.
func (s *Server) restAuth(r *http.Request, ss *session, method string) (int, string) {
	h := r.Header.Get("Authorization")
	switch {
	case strings.HasPrefix(h, "Basic "):
		raw, err := base64.StdEncoding.DecodeString(h[len("Basic "):])
		user, password, ok := strings.Cut(string(raw), ":")
		if err != nil || !ok {
			return http.StatusBadRequest, "400: Bad Request"
		}
		if !s.auth.checkPassword(user, password) {
			s.stats.loginFailures.Add(1)
			return http.StatusUnauthorized, "Bad username or password"
		}
		ss.login(user, credPassword)
	case strings.HasPrefix(h, "Bearer "):
		if !s.presentKey(h[len("Bearer "):], ss.secure) {
			s.stats.loginFailures.Add(1)
			return http.StatusUnauthorized, "Invalid API key"
		}
		ss.login("root", credAPIKey)
	default:
		if noAuthMethods[method] {
			return 0, ""
		}
		return http.StatusUnauthorized, "401: Unauthorized"
	}
	s.stats.logins.Add(1)
	return 0, ""
}
