package truenas

import (
	"bytes"
	"encoding/json"
	"slices"
)

// entryKeys are the keys entryProp reads whatever property it is asked for:
// the name and type, and where snapshot properties live. It reads
// user_properties for user properties only (wantedKey).
var entryKeys = [...]string{"id", "name", "type", "properties"}

// entryOf decodes a pool.dataset entry keeping only what entryProps reads
// for names; the other properties are stepped over, not decoded. The
// middleware answers a create with the whole entry, ~40 properties of five
// fields each (~5 KB), and decoding all of it into maps to read one
// (CreateVolume asks for the mountpoint) was the largest part of the
// driver's CPU per create (perf at 16 callers: a fifth of the create
// batch, and the garbage collection of its ~700 values).
//
// raw is an answer api.Call returned, so valid JSON (both transports
// check); anything the step-over does not expect (not an object, a key to
// unescape that will not) goes to encoding/json whole, which then decodes
// it or gives the error decoding into a map always gave.
func entryOf(raw json.RawMessage, names []string) (map[string]any, error) {
	if e, ok := entryFields(raw, names); ok {
		return e, nil
	}
	var whole map[string]any
	if err := json.Unmarshal(raw, &whole); err != nil {
		return nil, err
	}
	return whole, nil
}

// entryFields steps over raw's top-level object and decodes the values of
// the keys entryProp reads for names. ok is false when raw is not an
// object it could step over.
func entryFields(raw []byte, names []string) (e map[string]any, ok bool) {
	user := slices.ContainsFunc(names, isUserProp)
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return nil, false
	}
	e = make(map[string]any, len(entryKeys)+len(names))
	i = skipSpace(raw, i+1)
	if i < len(raw) && raw[i] == '}' {
		return e, skipSpace(raw, i+1) == len(raw)
	}
	for {
		if i >= len(raw) || raw[i] != '"' {
			return nil, false
		}
		kEnd := valueEnd(raw, i)
		if kEnd < 0 {
			return nil, false
		}
		key := raw[i+1 : kEnd-1]
		k, want := "", false
		if bytes.IndexByte(key, '\\') >= 0 || !ascii(key) {
			// escapes, or bytes encoding/json would check as UTF-8
			if json.Unmarshal(raw[i:kEnd], &k) != nil {
				return nil, false
			}
			want = wantedKey([]byte(k), names, user)
		} else if want = wantedKey(key, names, user); want {
			k = string(key)
		}
		i = skipSpace(raw, kEnd)
		if i >= len(raw) || raw[i] != ':' {
			return nil, false
		}
		i = skipSpace(raw, i+1)
		vEnd := valueEnd(raw, i)
		if vEnd < 0 {
			return nil, false
		}
		if want { // a key given twice: the last wins, as in encoding/json
			var v any
			if json.Unmarshal(raw[i:vEnd], &v) != nil {
				return nil, false
			}
			e[k] = v
		}
		i = skipSpace(raw, vEnd)
		if i >= len(raw) {
			return nil, false
		}
		switch raw[i] {
		case ',':
			i = skipSpace(raw, i+1)
		case '}':
			return e, skipSpace(raw, i+1) == len(raw)
		default:
			return nil, false
		}
	}
}

// wantedKey: entryProp reads key for names (user: a name is a user
// property). Compared as bytes, so the ~40 keys stepped over cost no
// string each.
func wantedKey(key []byte, names []string, user bool) bool {
	for _, k := range entryKeys {
		if string(key) == k {
			return true
		}
	}
	for _, n := range names {
		if string(key) == n {
			return true
		}
	}
	return user && string(key) == "user_properties"
}

// valueEnd is the index just past the JSON value starting at raw[i] (a
// string, an object or array with what it holds, or a number or literal
// up to the next delimiter), or -1 when raw ends first. It finds the end
// only; the values it steps over are not checked (raw is valid JSON).
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
