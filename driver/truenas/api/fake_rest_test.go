package api

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// restRecord is one REST request as the fake server saw it.
type restRecord struct {
	Verb  string
	Path  string // escaped, as sent
	Query string
	Body  string
	Auth  string
}

func (f *fakeNAS) restRequests() []restRecord {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]restRecord(nil), f.restLog...)
}

// serveREST authenticates every request, then maps the route back to a
// method call the way the middleware's restful layer does (enough of it
// for the tests) and renders the outcome with its status codes.
func (f *fakeNAS) serveREST(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	f.restLog = append(f.restLog, restRecord{Verb: r.Method, Path: r.URL.EscapedPath(), Query: r.URL.RawQuery, Body: string(body), Auth: r.Header.Get("Authorization")})
	f.mu.Unlock()

	auth := r.Header.Get("Authorization")
	switch {
	case strings.HasPrefix(auth, "Bearer "):
		if !f.checkKey(strings.TrimPrefix(auth, "Bearer ")) {
			http.Error(w, "Invalid API key", http.StatusUnauthorized)
			return
		}
	case strings.HasPrefix(auth, "Basic "):
		raw, _ := base64.StdEncoding.DecodeString(strings.TrimPrefix(auth, "Basic "))
		u, p, _ := strings.Cut(string(raw), ":")
		if !f.checkPassword(u, p) {
			http.Error(w, "Bad username or password", http.StatusUnauthorized)
			return
		}
	default:
		http.Error(w, "401: Unauthorized", http.StatusUnauthorized)
		return
	}

	method, params, ok := f.restRoute(r, body)
	if !ok {
		http.Error(w, "404: Not Found", http.StatusNotFound)
		return
	}
	res, err := f.invoke(r.Context(), method, params, true)
	if err != nil {
		f.restError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}

// restRoute reverses the REST mapping for routes the tests use.
func (f *fakeNAS) restRoute(r *http.Request, body []byte) (string, []json.RawMessage, bool) {
	rest := strings.TrimPrefix(r.URL.EscapedPath(), "/api/v2.0/")
	var params []json.RawMessage
	if before, id, ok := strings.Cut(rest, "/id/"); ok {
		ns := strings.ReplaceAll(before, "/", ".")
		idStr, err := url.PathUnescape(id)
		if err != nil {
			return "", nil, false
		}
		idJSON, _ := json.Marshal(idStr)
		if _, err := strconv.Atoi(idStr); err == nil {
			idJSON = []byte(idStr)
		}
		params = append(params, idJSON)
		if len(body) > 0 {
			params = append(params, body)
		}
		switch r.Method {
		case http.MethodGet:
			return ns + ".get_instance", params[:1], true
		case http.MethodPut:
			return ns + ".update", params, true
		case http.MethodDelete:
			return ns + ".delete", params, true
		}
		return "", nil, false
	}
	ns := strings.ReplaceAll(rest, "/", ".")
	f.mu.Lock()
	_, isQuery := f.handlers[ns+".query"]
	_, isCreate := f.handlers[ns+".create"]
	f.mu.Unlock()
	switch {
	case r.Method == http.MethodGet && (isQuery || ns == "core.get_jobs"):
		m := ns + ".query"
		if ns == "core.get_jobs" {
			m = ns
		}
		if len(body) > 0 { // {"query-filters": ..., "query-options": ...}
			var b map[string]json.RawMessage
			_ = json.Unmarshal(body, &b)
			return m, []json.RawMessage{orEmpty(b["query-filters"], "[]"), orEmpty(b["query-options"], "{}")}, true
		}
		var filters [][]any
		for k, vs := range r.URL.Query() {
			v := any(vs[0])
			if n, err := strconv.Atoi(vs[0]); err == nil {
				v = n
			}
			filters = append(filters, []any{k, "=", v})
		}
		fj, _ := json.Marshal(filters)
		if filters == nil {
			fj = []byte("[]")
		}
		return m, []json.RawMessage{fj}, true
	case r.Method == http.MethodPost && isCreate:
		return ns + ".create", []json.RawMessage{body}, true
	}
	if len(body) > 0 {
		params = append(params, body)
	}
	f.mu.Lock()
	_, exists := f.handlers[ns]
	f.mu.Unlock()
	return ns, params, exists
}

func orEmpty(raw json.RawMessage, def string) json.RawMessage {
	if len(raw) == 0 {
		return json.RawMessage(def)
	}
	return raw
}

// restError renders a failure as restful.py does.
func (f *fakeNAS) restError(w http.ResponseWriter, err error) {
	var (
		ce  fakeCallError
		ve  fakeValidation
		nf  fakeInstanceNotFound
		rpc fakeRPCError
	)
	switch {
	case errors.As(err, &ce):
		writeJSON(w, 422, map[string]any{"message": ce.msg, "errno": ce.errno})
	case errors.As(err, &ve):
		out := map[string][]map[string]any{}
		for _, fl := range ve {
			out[fl.attr] = append(out[fl.attr], map[string]any{"message": fl.msg, "errno": fl.errno})
		}
		writeJSON(w, 422, out)
	case errors.As(err, &nf):
		writeJSON(w, 404, map[string]any{"message": string(nf)})
	case errors.As(err, &rpc) && rpc.code == -32601:
		http.Error(w, "404: Not Found", http.StatusNotFound)
	default:
		writeJSON(w, 500, map[string]any{"message": err.Error(), "traceback": "Traceback (most recent call last): ..."})
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
