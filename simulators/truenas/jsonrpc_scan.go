package truenas

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// scanRPCRequest is the usual request read in one pass: an object (that
// json.Valid accepted) with "jsonrpc": "2.0", a "method" string and a
// "params" array, members in any order. Decoding it (into a map of raw
// members, then each member again, every step scanning and copying)
// was 6 % of the simulator's CPU per WebSocket call (issue 16, sixth
// round). ok is false for anything else, and for whatever the decode
// might read differently: a key or string with an escape or invalid
// UTF-8, an unknown member, a wrong version, method or params type.
// decodeRPCRequest then reads the message and words its errors.
// TestScannedRequestIsTheDecode compares the two on mutated messages.
//
// The parameters are slices of data, not copies: the WebSocket hands
// each message over in a buffer of its own.
func scanRPCRequest(data []byte) (rpcRequest, bool) {
	var req rpcRequest
	var version, method, params []byte
	i := skipSpace(data, 0) + 1 // past '{'
	for {
		i = skipSpace(data, i)
		if data[i] == '}' {
			break
		}
		keyEnd := skipValue(data, i)
		key, plain := plainString(data[i:keyEnd])
		if !plain {
			return req, false
		}
		i = skipSpace(data, keyEnd) + 1 // past ':'
		i = skipSpace(data, i)
		end := skipValue(data, i)
		val := data[i:end]
		switch string(key) {
		case "jsonrpc":
			version = val
		case "method":
			method = val
		case "params":
			params = val
		case "id":
			req.id = val
		default:
			return req, false
		}
		i = skipSpace(data, end)
		if data[i] == ',' {
			i++
		}
	}
	v, plainV := plainString(version)
	m, plainM := plainString(method)
	if !plainV || string(v) != "2.0" || !plainM || req.id != nil && !validID(req.id) {
		return req, false
	}
	req.method = string(m)
	switch {
	case params == nil:
		req.params = []json.RawMessage{}
	case params[0] == '[':
		req.params = arrayElements(params)
	default:
		return req, false
	}
	return req, true
}

// validID: an id is null, a number or a string (the decode's check).
func validID(id []byte) bool {
	return id[0] == '"' || id[0] == '-' || id[0] >= '0' && id[0] <= '9' || bytes.Equal(id, []byte("null"))
}

// plainString returns the contents of the JSON string s when decoding it
// would give the same bytes: no escape, valid UTF-8. ok is false for
// anything else (also for s not a string, or absent).
func plainString(s []byte) ([]byte, bool) {
	if len(s) < 2 || s[0] != '"' {
		return nil, false
	}
	in := s[1 : len(s)-1]
	if bytes.IndexByte(in, '\\') >= 0 || !utf8.Valid(in) {
		return nil, false
	}
	return in, true
}

// arrayElements splits a valid JSON array into its elements, without the
// whitespace around them (as decoding into []json.RawMessage gives them).
func arrayElements(a []byte) []json.RawMessage {
	out := []json.RawMessage{}
	i := skipSpace(a, 1)
	for a[i] != ']' {
		end := skipValue(a, i)
		out = append(out, a[i:end:end])
		i = skipSpace(a, end)
		if a[i] == ',' {
			i = skipSpace(a, i+1)
		}
	}
	return out
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipValue returns the end of the valid JSON value starting at b[i].
func skipValue(b []byte, i int) int {
	switch b[i] {
	case '"':
		for i++; ; i++ {
			switch b[i] {
			case '\\':
				i++
			case '"':
				return i + 1
			}
		}
	case '{', '[':
		depth := 0
		for ; ; i++ {
			switch b[i] {
			case '"':
				i = skipValue(b, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
		}
	}
	for ; i < len(b); i++ { // a number, true, false or null
		switch b[i] {
		case ',', '}', ']', ' ', '\t', '\r', '\n':
			return i
		}
	}
	return i
}
