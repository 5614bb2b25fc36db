package truenas

import (
	"encoding/json"
	"slices"

	"github.com/switchyard-csi/switchyard/driver/truenas/api"
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
// check); anything the step-over does not expect (not an object, a key
// that will not unescape) goes to encoding/json whole, which then decodes
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

// entryFields decodes the values of the keys entryProp reads for names.
// ok is false when raw is not an object api.EachField could step over.
func entryFields(raw []byte, names []string) (e map[string]any, ok bool) {
	user := slices.ContainsFunc(names, isUserProp)
	e = make(map[string]any, len(entryKeys)+len(names))
	ok = api.EachField(raw, func(key []byte, plain bool, value []byte) bool {
		var k string
		var want bool
		if !plain {
			if json.Unmarshal(append(append([]byte{'"'}, key...), '"'), &k) != nil {
				return false
			}
			want = wantedKey([]byte(k), names, user)
		} else if want = wantedKey(key, names, user); want {
			k = string(key)
		}
		if !want {
			return true
		}
		var v any // a key given twice: the last wins, as in encoding/json
		if json.Unmarshal(value, &v) != nil {
			return false
		}
		e[k] = v
		return true
	})
	if !ok {
		return nil, false
	}
	return e, true
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
