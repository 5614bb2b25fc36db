package truenas

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
)

// parseRPCRequest validates a message against middlewared's request
// schema: an object with "jsonrpc": "2.0", a string "method", an optional
// array "params", an optional null/number/string "id" and nothing else.
// Batches (arrays) are invalid requests.
func parseRPCRequest(data []byte) (rpcRequest, int, string) {
	if surelyOneObject(data) {
		if req, ok := scanRPCRequest(data); ok {
			return req, 0, ""
		}
	} else if code, msg := notOneObject(data); code != 0 {
		return rpcRequest{}, code, msg
	}
	return decodeRPCRequest(data)
}

// decodeRPCRequest is parseRPCRequest for a message that is one object,
// by decoding it: every message scanRPCRequest leaves, and the words of
// every error.
func decodeRPCRequest(data []byte) (rpcRequest, int, string) {
	var fields map[string]json.RawMessage
	_ = json.Unmarshal(data, &fields)
	var extra []string
	for k := range fields {
		switch k {
		case "jsonrpc", "method", "params", "id":
		default:
			extra = append(extra, k)
		}
	}
	if len(extra) > 0 {
		sort.Strings(extra)
		return rpcRequest{}, rpcInvalidRequest, fmt.Sprintf("Additional properties are not allowed (%q was unexpected)", extra)
	}
	var version string
	if v, ok := fields["jsonrpc"]; !ok {
		return rpcRequest{}, rpcInvalidRequest, "'jsonrpc' is a required property"
	} else if json.Unmarshal(v, &version) != nil || version != "2.0" {
		return rpcRequest{}, rpcInvalidRequest, fmt.Sprintf("%s is not one of ['2.0']", compact(v))
	}
	var req rpcRequest
	if m, ok := fields["method"]; !ok {
		return rpcRequest{}, rpcInvalidRequest, "'method' is a required property"
	} else if json.Unmarshal(m, &req.method) != nil {
		return rpcRequest{}, rpcInvalidRequest, fmt.Sprintf("%s is not of type 'string'", compact(m))
	}
	if p, ok := fields["params"]; ok {
		if json.Unmarshal(p, &req.params) != nil || req.params == nil {
			return rpcRequest{}, rpcInvalidRequest, fmt.Sprintf("%s is not of type 'array'", compact(p))
		}
	}
	if req.params == nil {
		req.params = []json.RawMessage{}
	}
	if id, ok := fields["id"]; ok {
		t := bytes.TrimSpace(id)
		switch {
		case len(t) > 0 && (t[0] == '"' || t[0] == '-' || t[0] >= '0' && t[0] <= '9'):
		case bytes.Equal(t, []byte("null")):
		default:
			return rpcRequest{}, rpcInvalidRequest, fmt.Sprintf("%s is not of type 'null', 'number', 'string'", compact(id))
		}
		req.id = t
	}
	return req, 0, ""
}

// surelyOneObject is the shortcut: one scan, nothing built.
func surelyOneObject(data []byte) bool {
	t := bytes.TrimLeft(data, " \t\r\n")
	return len(t) > 0 && t[0] == '{' && json.Valid(data)
}

// notOneObject is why data is not one JSON object: a parse error (as the
// decoder words it) or another type. Only messages surelyOneObject refuses
// come here: for the others, one scan without building the value answers
// the same (issue 16: decoding every request
// into maps and slices only to see it was an object was a cost of every
// call).
func notOneObject(data []byte) (int, string) {
	var raw any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&raw); err != nil || dec.More() {
		if err == nil {
			err = fmt.Errorf("extra data after the JSON value")
		}
		return rpcParseError, err.Error()
	}
	if _, ok := raw.(map[string]any); !ok {
		return rpcInvalidRequest, fmt.Sprintf("%s is not of type 'object'", compact(data))
	}
	return 0, ""
}

func compact(data []byte) string {
	var b bytes.Buffer
	if json.Compact(&b, data) != nil {
		return string(data)
	}
	return b.String()
}
