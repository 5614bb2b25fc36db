package truenas

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"sort"
	"strings"

	"github.com/switchyard-csi/switchyard/simulators/truenas/middleware"
)

// maxRESTBody bounds a REST request body.
const maxRESTBody = 16 << 20

// restParams turns a REST request into the method's positional parameters
// as restful.py does; status != 0 is a 400 answer with body msg.
func restParams(r *http.Request, route restRoute) (params []json.RawMessage, status int, msg any) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxRESTBody))
	if err != nil {
		return nil, http.StatusBadRequest, map[string]any{"message": "reading the body: " + err.Error(), "errno": middleware.EINVAL}
	}
	hasBody := len(bytes.TrimSpace(body)) > 0
	if hasBody && !json.Valid(body) {
		var v any
		err := json.Unmarshal(body, &v)
		return nil, http.StatusBadRequest, map[string]any{"message": "json parse error: " + err.Error(), "errno": middleware.EINVAL}
	}
	switch {
	case route.getByID:
		opts := map[string]any{"get": true, "force_sql_filters": true, "extra": extraArgs(r)}
		params = []json.RawMessage{mustJSON([]any{[]any{"id", "=", route.id}}), mustJSON(opts)}
	case route.filter && r.Method == http.MethodGet:
		params = filterableArgs(r)
	}
	if params == nil && hasBody {
		names := route.method.Params
		if route.hasID && len(names) > 0 {
			names = names[1:]
		}
		var st int
		if params, st, msg = bodyArgs(body, names, r.Method); st != 0 {
			return nil, st, msg
		}
	}
	if route.hasID {
		params = append([]json.RawMessage{mustJSON(route.id)}, params...)
	}
	return params, 0, nil
}

// bodyArgs maps a body onto the parameters names: one parameter takes the
// whole body, several take an object keyed by their names.
func bodyArgs(body []byte, names []string, verb string) ([]json.RawMessage, int, any) {
	switch {
	case len(names) == 0 && (verb == http.MethodGet || verb == http.MethodDelete) && falsyJSON(body):
		// An empty object on GET/DELETE means "no parameters", which
		// restful.py keeps accepting for older clients.
		return nil, 0, nil
	case len(names) <= 1:
		return []json.RawMessage{json.RawMessage(body)}, 0, nil
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(body, &obj) != nil || obj == nil {
		return nil, http.StatusBadRequest, map[string]any{"message": "Endpoint accepts multiple params, object/dict expected."}
	}
	// Parameters renamed when middlewared moved to pydantic.
	for old, renamed := range map[string]string{"query-filters": "filters", "query-options": "options"} {
		if v, ok := obj[old]; ok && !contains(names, old) && contains(names, renamed) {
			obj[renamed] = v
			delete(obj, old)
		}
	}
	var params []json.RawMessage
	for _, n := range names {
		// A missing (optional) parameter is skipped, not filled with null:
		// the later ones move up a position, exactly as in restful.py.
		if v, ok := obj[n]; ok {
			params = append(params, v)
			delete(obj, n)
		}
	}
	if len(obj) > 0 {
		left := make([]string, 0, len(obj))
		for k := range obj {
			left = append(left, k)
		}
		sort.Strings(left)
		return nil, http.StatusBadRequest, map[string]any{"message": "The following attributes are not expected: " + strings.Join(left, ", ")}
	}
	return params, 0, nil
}

// filterableArgs turns a query string into [filters, options]: field=value
// and field__op=value filters, limit/offset/count/sort and extra.<key>.
// No query string means no parameters.
func filterableArgs(r *http.Request) []json.RawMessage {
	q := r.URL.Query()
	if len(q) == 0 {
		return nil
	}
	keys := make([]string, 0, len(q))
	for k := range q {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	filters := []any{}
	opts := map[string]any{}
	extra := map[string]any{}
	ops := map[string]string{"eq": "=", "neq": "!=", "gt": ">", "lt": "<", "gte": ">=", "lte": "<=", "regex": "~"}
	for _, key := range keys {
		val := q.Get(key)
		switch {
		case key == "limit" || key == "offset" || key == "count":
			opts[key] = convertOption(val)
			continue
		case key == "sort":
			// restful.py passes "sort"; the query options call it order_by.
			var order []any
			for _, v := range strings.Split(val, ",") {
				order = append(order, convertOption(v))
			}
			opts["order_by"] = order
			continue
		case strings.HasPrefix(key, "extra."):
			extra[strings.TrimPrefix(key, "extra.")] = jsonOrString(val)
			continue
		}
		field, op, ok := strings.Cut(key, "__")
		if !ok {
			op = "="
		} else if mapped, known := ops[op]; known {
			op = mapped
		}
		filters = append(filters, []any{field, op, filterValue(val)})
	}
	if len(extra) > 0 {
		opts["extra"] = extra
	}
	return []json.RawMessage{mustJSON(filters), mustJSON(opts)}
}

// extraArgs are the extra.<key> query parameters of a GET by id.
func extraArgs(r *http.Request) map[string]any {
	extra := map[string]any{}
	for k, v := range r.URL.Query() {
		if strings.HasPrefix(k, "extra.") && len(v) > 0 {
			extra[strings.TrimPrefix(k, "extra.")] = jsonOrString(v[0])
		}
	}
	return extra
}

// filterValue converts a filter value as restful.py does: digits are
// integers, true/false/null (any case) are JSON's, the rest strings.
func filterValue(v string) any {
	if isDigits(v) {
		if n, ok := atoiSafe(v); ok {
			return n
		}
	}
	switch strings.ToLower(v) {
	case "true":
		return true
	case "false":
		return false
	case "null":
		return nil
	}
	return v
}

// convertOption converts limit/offset/count/sort values.
func convertOption(v string) any {
	if isDigits(v) {
		if n, ok := atoiSafe(v); ok {
			return n
		}
	}
	switch strings.ToLower(v) {
	case "true", "1":
		return true
	case "false", "0":
		return false
	}
	return v
}

func jsonOrString(v string) any {
	var out any
	if json.Unmarshal([]byte(v), &out) == nil {
		return out
	}
	return v
}

// falsy is Python's "not data" for decoded JSON.
// falsyJSON is falsy of the body's value. Decoded only here: building
// every body's maps to ask this of GET and DELETE alone cost every call
// (issue 16).
func falsyJSON(body []byte) bool {
	var data any
	_ = json.Unmarshal(body, &data)
	return falsy(data)
}

func falsy(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case bool:
		return !x
	case float64:
		return x == 0
	case string:
		return x == ""
	case []any:
		return len(x) == 0
	case map[string]any:
		return len(x) == 0
	}
	return false
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		return json.RawMessage("null")
	}
	return b
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
