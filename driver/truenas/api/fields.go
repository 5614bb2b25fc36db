package api

import "bytes"

// EachField steps over the top-level JSON object raw, calling f with each
// key (as written between its quotes: plain is false when it holds an
// escape or a non-ASCII byte, which only encoding/json decodes as it
// would) and value (raw bytes, a sub-slice of raw), in order, until f
// returns false. ok is false when raw is not an object it could step
// over (or f stopped).
//
// It finds where values end without checking them: raw must be valid JSON
// (json.Valid, or an answer Client.Call returned). What it saves over
// encoding/json decoding into a map or a struct is the decoding of the
// values the caller does not want, and the second scan of json.Unmarshal
// (one to validate, one to decode): a dataset entry is ~5 KB of which a
// caller wants a few fields.
func EachField(raw []byte, f func(key []byte, plain bool, value []byte) bool) (ok bool) {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return false
	}
	i = skipSpace(raw, i+1)
	if i < len(raw) && raw[i] == '}' {
		return skipSpace(raw, i+1) == len(raw)
	}
	for {
		if i >= len(raw) || raw[i] != '"' {
			return false
		}
		kEnd := valueEnd(raw, i)
		if kEnd < 0 {
			return false
		}
		key := raw[i+1 : kEnd-1]
		i = skipSpace(raw, kEnd)
		if i >= len(raw) || raw[i] != ':' {
			return false
		}
		i = skipSpace(raw, i+1)
		vEnd := valueEnd(raw, i)
		if vEnd < 0 {
			return false
		}
		if !f(key, bytes.IndexByte(key, '\\') < 0 && ascii(key), raw[i:vEnd]) {
			return false
		}
		i = skipSpace(raw, vEnd)
		if i >= len(raw) {
			return false
		}
		switch raw[i] {
		case ',':
			i = skipSpace(raw, i+1)
		case '}':
			return skipSpace(raw, i+1) == len(raw)
		default:
			return false
		}
	}
}

// valueEnd is the index just past the JSON value starting at raw[i] (a
// string, an object or array with what it holds, or a number or literal
// up to the next delimiter), or -1 when raw ends first.
func valueEnd(raw []byte, i int) int {
	if i >= len(raw) {
		return -1
	}
	switch raw[i] {
	case '"':
		for j := i + 1; j < len(raw); j++ {
			switch raw[j] {
			case '\\':
				j++ // the escaped byte; a \u's four hex digits need no care
			case '"':
				return j + 1
			}
		}
		return -1
	case '{', '[':
		depth := 0
		for j := i; j < len(raw); j++ {
			switch raw[j] {
			case '"':
				end := valueEnd(raw, j)
				if end < 0 {
					return -1
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	}
	j := i
	for j < len(raw) && !delimiter(raw[j]) {
		j++
	}
	if j == i {
		return -1
	}
	return j
}

func skipSpace(raw []byte, i int) int {
	for i < len(raw) && space(raw[i]) {
		i++
	}
	return i
}

func space(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// delimiter ends a number or literal.
func delimiter(c byte) bool { return c == ',' || c == '}' || c == ']' || space(c) }

func ascii(b []byte) bool {
	for _, c := range b {
		if c >= 0x80 {
			return false
		}
	}
	return true
}
