package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"
)

// restRequest is one middleware call as REST v2.0 sends it.
type restRequest struct {
	Verb    string     // GET, POST, PUT, DELETE
	Path    string     // under /api/v2.0, escaped, e.g. "/pool/dataset/id/tank%2Fa"
	Query   url.Values // nil for none
	Body    any        // sent as JSON when HasBody
	HasBody bool
}

// configNamespaces are the middleware's ConfigServices among those a CSI
// driver touches: GET /ns is their config(), PUT /ns their update().
var configNamespaces = map[string]bool{
	"iscsi.global": true, "nvmet.global": true, "nfs": true, "smb": true, "ssh": true,
	"ftp": true, "snmp": true, "ups": true, "mail": true, "kmip": true,
	"system.general": true, "system.advanced": true, "network.configuration": true,
	"systemdataset": true,
}

// filterableMethods are non-query methods that take (filters, options)
// and so are GET routes with a query string.
var filterableMethods = map[string]bool{
	"core.get_jobs": true,
}

// paramNames names the body parameters (those after the id, for delete)
// of methods that have several: REST then wants an object keyed by these
// names, however many the caller passes. A method with one such parameter
// (pool.dataset.delete's options, iscsi.targetextent.delete's force) takes
// it as the bare body and needs no entry.
var paramNames = map[string][]string{
	"iscsi.target.delete": {"force", "delete_extents"},
	"iscsi.extent.delete": {"remove", "force"},
}

// mapREST maps a method and its positional params the way the
// middleware's restful layer maps routes back to calls.
func mapREST(method string, params []any) (restRequest, error) {
	dot := strings.LastIndex(method, ".")
	if dot < 1 || dot == len(method)-1 {
		return restRequest{}, fmt.Errorf("%q is not a middleware method name (namespace.method)", method)
	}
	ns, verb := method[:dot], method[dot+1:]
	base := "/" + strings.ReplaceAll(ns, ".", "/")
	ps, err := normalizeParams(params)
	if err != nil {
		return restRequest{}, fmt.Errorf("%s: %v", method, err)
	}

	if configNamespaces[ns] {
		switch verb {
		case "config":
			return restRequest{Verb: "GET", Path: base}, nil
		case "update":
			return withBody(restRequest{Verb: "PUT", Path: base}, ps, 0), nil
		}
	}
	switch {
	case verb == "query":
		return queryRequest(base, ps)
	case filterableMethods[method]:
		return queryRequest(base+"/"+verb, ps)
	case verb == "get_instance":
		return getInstanceRequest(method, base, ps)
	case verb == "create":
		return withBody(restRequest{Verb: "POST", Path: base}, ps, 0), nil
	case verb == "update" || verb == "delete":
		if len(ps) == 0 {
			return restRequest{}, fmt.Errorf("%s: the id (first parameter) is missing", method)
		}
		path, err := idPath(base, ps[0])
		if err != nil {
			return restRequest{}, fmt.Errorf("%s: %v", method, err)
		}
		if verb == "update" {
			return withBody(restRequest{Verb: "PUT", Path: path}, ps, 1), nil
		}
		return argsRequest(method, restRequest{Verb: "DELETE", Path: path}, ps[1:])
	}
	path := base + "/" + verb
	if len(ps) == 0 {
		// Methods without parameters are GET routes (and only GET).
		return restRequest{Verb: "GET", Path: path}, nil
	}
	return argsRequest(method, restRequest{Verb: "POST", Path: path}, ps)
}

// withBody sends ps[i] as the body when there is one.
func withBody(r restRequest, ps []any, i int) restRequest {
	if i < len(ps) {
		r.Body, r.HasBody = ps[i], true
	}
	return r
}

// argsRequest sends args as the body: none, an object keyed by parameter
// names for a method known to take several, else the single one as is.
func argsRequest(method string, r restRequest, args []any) (restRequest, error) {
	names, multi := paramNames[method]
	switch {
	case len(args) == 0:
		return r, nil
	case len(args) == 1 && !multi:
		r.Body, r.HasBody = args[0], true
		return r, nil
	}
	if len(names) < len(args) {
		return restRequest{}, fmt.Errorf("%s: REST needs the names of its %d parameters and this client does not know them; use %s: websocket",
			method, len(args), keyTransport)
	}
	obj := make(map[string]any, len(args))
	for i, a := range args {
		obj[names[i]] = a
	}
	r.Body, r.HasBody = obj, true
	return r, nil
}

// idPath is base/id/<id>, the id url-encoded (dataset ids contain "/").
func idPath(base string, id any) (string, error) {
	var s string
	switch v := id.(type) {
	case string:
		s = v
	case json.Number:
		s = v.String()
	default:
		return "", fmt.Errorf("the id must be a string or a number, not %T", id)
	}
	if s == "" {
		return "", fmt.Errorf("the id is empty")
	}
	return base + "/id/" + url.PathEscape(s), nil
}

func getInstanceRequest(method, base string, ps []any) (restRequest, error) {
	if len(ps) == 0 {
		return restRequest{}, fmt.Errorf("%s: the id (first parameter) is missing", method)
	}
	path, err := idPath(base, ps[0])
	if err != nil {
		return restRequest{}, fmt.Errorf("%s: %v", method, err)
	}
	r := restRequest{Verb: "GET", Path: path}
	if len(ps) > 1 && ps[1] != nil {
		opts, ok := ps[1].(map[string]any)
		if !ok {
			return restRequest{}, fmt.Errorf("%s: options must be an object", method)
		}
		q := url.Values{}
		for k, v := range opts {
			if k != "extra" {
				return restRequest{}, fmt.Errorf("%s: option %q cannot be sent over REST (only extra can); use %s: websocket", method, k, keyTransport)
			}
			if err := addExtra(q, v); err != nil {
				return restRequest{}, fmt.Errorf("%s: %v", method, err)
			}
		}
		if len(q) > 0 {
			r.Query = q
		}
	}
	return r, nil
}

// queryRequest maps (filters, options) to a query string where every
// filter and option can be said that way, else to a GET whose body names
// them (the restful layer accepts a body on GET; "query-filters" and
// "query-options" are the names every version understands).
func queryRequest(path string, ps []any) (restRequest, error) {
	var filters, options any
	if len(ps) > 0 {
		filters = ps[0]
	}
	if len(ps) > 1 {
		options = ps[1]
	}
	if len(ps) > 2 {
		return restRequest{}, fmt.Errorf("a query takes filters and options, not %d parameters", len(ps))
	}
	r := restRequest{Verb: "GET", Path: path}
	if q, ok := queryString(filters, options); ok {
		if len(q) > 0 {
			r.Query = q
		}
		return r, nil
	}
	body := map[string]any{}
	if filters != nil {
		body["query-filters"] = filters
	}
	if options != nil {
		body["query-options"] = options
	}
	r.Body, r.HasBody = body, true
	return r, nil
}

// filterOps are the operators the restful layer reads from "field__op"
// (its own names for them; "=" is the bare field).
var filterOps = map[string]string{
	"=": "", "!=": "neq", ">": "gt", "<": "lt", ">=": "gte", "<=": "lte", "~": "regex",
}

func queryString(filters, options any) (url.Values, bool) {
	q := url.Values{}
	if filters != nil {
		list, ok := filters.([]any)
		if !ok {
			return nil, false
		}
		for _, f := range list {
			triple, ok := f.([]any)
			if !ok || len(triple) != 3 {
				return nil, false // conjunctions (["OR", ...]) need the body
			}
			field, ok1 := triple[0].(string)
			op, ok2 := triple[1].(string)
			suffix, ok3 := filterOps[op]
			val, ok4 := queryValue(triple[2])
			if !ok1 || !ok2 || !ok3 || !ok4 || field == "" || strings.Contains(field, "__") ||
				field == "limit" || field == "offset" || field == "count" || field == "sort" || strings.HasPrefix(field, "extra.") {
				return nil, false
			}
			key := field
			if suffix != "" {
				key += "__" + suffix
			}
			if _, dup := q[key]; dup {
				return nil, false // the server reads one value per key
			}
			q.Set(key, val)
		}
	}
	if options != nil {
		opts, ok := options.(map[string]any)
		if !ok {
			return nil, false
		}
		for k, v := range opts {
			switch k {
			case "limit", "offset":
				n, ok := v.(json.Number)
				if !ok || !isDigits(n.String()) {
					return nil, false
				}
				q.Set(k, n.String())
			case "count":
				b, ok := v.(bool)
				if !ok {
					return nil, false
				}
				if b {
					q.Set("count", "true")
				}
			case "extra":
				if addExtra(q, v) != nil {
					return nil, false
				}
			default:
				// select, order_by, get, ...: no query parameter carries them faithfully.
				return nil, false
			}
		}
	}
	return q, true
}

// queryValue renders a filter value as the restful layer will read it
// back: it turns digit strings into integers and true/false/null into
// their JSON values, so only values that survive that round trip (and
// read the same if a server JSON-decodes them) qualify.
func queryValue(v any) (string, bool) {
	switch x := v.(type) {
	case nil:
		return "null", true
	case bool:
		return strconv.FormatBool(x), true
	case json.Number:
		if isDigits(x.String()) {
			return x.String(), true
		}
		return "", false
	case string:
		if isDigits(x) || json.Valid([]byte(x)) {
			return "", false
		}
		switch strings.ToLower(x) {
		case "true", "false", "null":
			return "", false
		}
		return x, true
	}
	return "", false
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// addExtra adds options.extra as extra.<key>=<JSON value>.
func addExtra(q url.Values, extra any) error {
	m, ok := extra.(map[string]any)
	if !ok {
		return fmt.Errorf("options.extra must be an object")
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		b, err := json.Marshal(m[k])
		if err != nil {
			return err
		}
		q.Set("extra."+k, string(b))
	}
	return nil
}

// normalizeParams turns the caller's Go values (structs, typed maps,
// slices) into plain JSON values (map[string]any, []any, json.Number,
// string, bool, nil) that the mapping can inspect.
func normalizeParams(params []any) ([]any, error) {
	if len(params) == 0 {
		return nil, nil
	}
	if out, ok := plainParams(params); ok {
		return out, nil
	}
	return roundTripParams(params)
}

// roundTripParams is normalizeParams through JSON: encoded, then decoded
// with numbers kept as written.
func roundTripParams(params []any) ([]any, error) {
	b, err := json.Marshal(params)
	if err != nil {
		return nil, fmt.Errorf("cannot encode the parameters: %v", err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var out []any
	if err := dec.Decode(&out); err != nil {
		return nil, fmt.Errorf("cannot encode the parameters: %v", err)
	}
	return out, nil
}
