package synology

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
)

// handler runs one API method under s.mu and returns the data of the
// envelope (nil: no data) or an *apiError.
type handler func(s *Server, c *call) (any, error)

// apiDef is one API: the cgi path SYNO.API.Info reports, its versions,
// its methods and whether a session is needed.
type apiDef struct {
	path     string
	min, max int
	noAuth   bool
	methods  map[string]handler
}

// apis is the table of every API the simulator serves (filled by the
// files of each API family).
var apis = map[string]*apiDef{}

// call is one request: its parameters, the version asked for and the
// session's user.
type call struct {
	p       url.Values
	version int
	user    string
	sid     string
	w       http.ResponseWriter
	r       *http.Request
}

// ServeHTTP answers /webapi/query.cgi, /webapi/entry.cgi and
// /webapi/auth.cgi. DSM answers 200 with an envelope even for API errors.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/webapi/query.cgi", "/webapi/entry.cgi", "/webapi/auth.cgi":
	default:
		http.NotFound(w, r)
		return
	}
	s.requests.Add(1)
	if s.opts.Latency > 0 {
		time.Sleep(s.opts.Latency)
	}
	if err := r.ParseForm(); err != nil {
		writeEnvelope(w, nil, fail(codeNoParameter))
		return
	}
	data, err := s.dispatch(w, r)
	writeEnvelope(w, data, err)
}

func (s *Server) dispatch(w http.ResponseWriter, r *http.Request) (any, error) {
	p := r.Form
	api, method, ver := p.Get("api"), p.Get("method"), p.Get("version")
	if api == "" || method == "" || ver == "" {
		return nil, fail(codeNoParameter)
	}
	def := apis[api]
	if def == nil {
		return nil, fail(codeNoSuchAPI)
	}
	h := def.methods[method]
	if h == nil {
		return nil, fail(codeNoSuchMethod)
	}
	v, err := strconv.Atoi(strings.Trim(ver, `"`))
	if err != nil || v < def.min || v > def.max {
		return nil, fail(codeVersion)
	}
	c := &call{p: p, version: v, w: w, r: r}
	if fn := s.beforeCall.Load(); fn != nil {
		(*fn)(api, method)
	}
	data, err := s.serve(def, h, c, api, method)
	s.flush()
	return data, err
}

// serve checks the session and runs the handler under the NAS's lock.
func (s *Server) serve(def *apiDef, h handler, c *call, api, method string) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reapLocked()
	if !def.noAuth {
		sid := sidOf(c.r)
		user, err := s.checkSessionLocked(sid)
		if err != nil {
			s.log.Debug("rejected", "api", api, "method", method, "error", err)
			return nil, err
		}
		c.user, c.sid = user, sid
	}
	s.log.Debug("call", "api", api, "method", method, "version", c.version)
	return h(s, c)
}

func writeEnvelope(w http.ResponseWriter, data any, err error) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	out := map[string]any{"success": err == nil}
	if err != nil {
		code := codeUnknown
		var ae *apiError
		if errors.As(err, &ae) {
			code = ae.code
		}
		out["error"] = map[string]any{"code": code}
	} else if data != nil {
		out["data"] = data
	}
	_ = json.NewEncoder(w).Encode(out)
}

// Parameter readers: DSM takes a JSON value where the text is one and the
// raw text otherwise, so name="x" and name=x both mean x.

func (c *call) has(name string) bool { return c.p.Has(name) }

func (c *call) str(name string) string {
	raw := c.p.Get(name)
	var s string
	if json.Unmarshal([]byte(raw), &s) == nil {
		return s
	}
	return raw
}

func (c *call) int64(name string) (int64, bool) {
	raw := strings.Trim(c.p.Get(name), `"`)
	n, err := strconv.ParseInt(raw, 10, 64)
	if err != nil {
		f, ferr := strconv.ParseFloat(raw, 64)
		if ferr != nil {
			return 0, false
		}
		n = int64(f)
	}
	return n, true
}

func (c *call) boolean(name string, def bool) bool {
	switch strings.Trim(c.p.Get(name), `"`) {
	case "true", "1":
		return true
	case "false", "0":
		return false
	}
	return def
}

// strs reads a JSON list whose items may be strings or numbers; a bare
// value is a list of one.
func (c *call) strs(name string) []string {
	raw := c.p.Get(name)
	var items []any
	if json.Unmarshal([]byte(raw), &items) != nil {
		if v := c.str(name); v != "" {
			return []string{v}
		}
		return nil
	}
	var out []string
	for _, it := range items {
		switch v := it.(type) {
		case string:
			out = append(out, v)
		case float64:
			out = append(out, strconv.FormatInt(int64(v), 10))
		}
	}
	return out
}

// jsonParam decodes a parameter that carries a JSON document.
func (c *call) jsonParam(name string, into any) error {
	if err := json.Unmarshal([]byte(c.p.Get(name)), into); err != nil {
		return fail(codeInvalidParam)
	}
	return nil
}

// register adds an API served from version 1 to maxVer.
func register(name, path string, maxVer int, noAuth bool, methods map[string]handler) {
	apis[name] = &apiDef{path: path, min: 1, max: maxVer, noAuth: noAuth, methods: methods}
}

func init() {
	register("SYNO.API.Info", "query.cgi", 1, true, map[string]handler{"query": apiInfo})
}

// apiInfo answers SYNO.API.Info query: every API asked for ("all" or a
// comma-separated list) with its path and version range.
func apiInfo(_ *Server, c *call) (any, error) {
	q := c.str("query")
	want := map[string]bool{}
	for _, n := range strings.Split(q, ",") {
		want[strings.TrimSpace(n)] = true
	}
	names := make([]string, 0, len(apis))
	for n := range apis {
		names = append(names, n)
	}
	sort.Strings(names)
	out := map[string]any{}
	for _, n := range names {
		if q == "" || want["all"] || want[n] {
			d := apis[n]
			out[n] = map[string]any{"path": d.path, "minVersion": d.min, "maxVersion": d.max, "requestFormat": "JSON"}
		}
	}
	return out, nil
}

// sidOf is the session id of a request: the _sid parameter, else the
// cookie _sid or id (DSM's login cookie).
func sidOf(r *http.Request) string {
	if sid := r.Form.Get("_sid"); sid != "" {
		return sid
	}
	for _, name := range []string{"_sid", "id"} {
		if ck, err := r.Cookie(name); err == nil {
			return ck.Value
		}
	}
	return ""
}
