package middleware

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"
)

// Encode is json.Marshal(v), byte for byte, for the values the
// simulator's answers are made of: maps of string keys to any, lists,
// strings, numbers, booleans and null (rows, query results, errors).
// json.Marshal walks such a tree by reflection, boxes every map key into
// a reflect.Value to sort the keys, and checks and copies every nested
// encoding again: a quarter of the simulator's CPU in
// BenchmarkTrueNASCreateDelete went to encoding and decoding JSON (issue
// 16, sixth round), most of it dataset entries of ~40 properties of five
// fields each. Encode writes those types directly and hands any other
// value (a struct, a json.Marshaler, json.Number, a float32, a named map
// type) to json.Marshal, whose bytes are the same wherever the value sits
// in the tree. TestEncodeIsMarshal compares the two on generated trees.
func Encode(v any) ([]byte, error) {
	return AppendEncoded(make([]byte, 0, 512), v)
}

// AppendEncoded appends Encode(v) to dst.
func AppendEncoded(dst []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(dst, "null"...), nil
	case string:
		return appendString(dst, x), nil
	case bool:
		return strconv.AppendBool(dst, x), nil
	case int:
		return strconv.AppendInt(dst, int64(x), 10), nil
	case int64:
		return strconv.AppendInt(dst, x, 10), nil
	case int32:
		return strconv.AppendInt(dst, int64(x), 10), nil
	case uint64:
		return strconv.AppendUint(dst, x, 10), nil
	case float64:
		if math.IsInf(x, 0) || math.IsNaN(x) {
			break // json.Marshal's UnsupportedValueError
		}
		return appendFloat(dst, x), nil
	case map[string]any:
		return appendMap(dst, x)
	case []any:
		return appendList(dst, x, AppendEncoded)
	case []map[string]any:
		return appendList(dst, x, appendMap)
	case []string:
		return appendList(dst, x, func(dst []byte, s string) ([]byte, error) { return appendString(dst, s), nil })
	case Appender:
		return x.AppendJSON(dst)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return append(dst, b...), nil
}

// Appender is an answer that writes its own encoding: a typed value that
// stands for a tree of maps (a dataset entry create and update answer
// with), written without building the maps. AppendJSON must append what
// Encode (json.Marshal) writes of that tree, and the type must be a
// json.Marshaler giving the same bytes, for json.Marshal's users.
type Appender interface {
	AppendJSON(dst []byte) ([]byte, error)
}

// appendList writes a list, each element by elem; a nil list is null.
func appendList[T any](dst []byte, l []T, elem func([]byte, T) ([]byte, error)) ([]byte, error) {
	if l == nil {
		return append(dst, "null"...), nil
	}
	dst = append(dst, '[')
	for i, e := range l {
		if i > 0 {
			dst = append(dst, ',')
		}
		var err error
		if dst, err = elem(dst, e); err != nil {
			return nil, err
		}
	}
	return append(dst, ']'), nil
}

// appendMap writes an object with its keys in byte order, as json.Marshal
// sorts a map's keys; a nil map is null.
func appendMap(dst []byte, m map[string]any) ([]byte, error) {
	if m == nil {
		return append(dst, "null"...), nil
	}
	var small [48]string // a dataset entry has ~45 keys: no allocation for the keys
	keys := small[:0]
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return AppendObject(dst, keys, func(dst []byte, k string) ([]byte, error) { return AppendEncoded(dst, m[k]) })
}

// AppendObject writes an object of keys, which are sorted, each key's
// value written by value.
func AppendObject(dst []byte, keys []string, value func(dst []byte, key string) ([]byte, error)) ([]byte, error) {
	dst = append(dst, '{')
	for i, k := range keys {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendString(dst, k)
		dst = append(dst, ':')
		var err error
		if dst, err = value(dst, k); err != nil {
			return nil, err
		}
	}
	return append(dst, '}'), nil
}

// appendFloat formats f as json.Marshal does a float64: like ES6's
// number to string, 'f' between 1e-6 and 1e21, else 'e' with the
// exponent unpadded (1e-7, not 1e-07).
func appendFloat(dst []byte, f float64) []byte {
	// Most numbers in answers are integers (sizes, ids, counts): below
	// 2^53 and whole, the shortest 'f' form is the integer's digits, which
	// AppendInt writes several times faster. -0 keeps its sign ("-0").
	if f == math.Trunc(f) && math.Abs(f) < 1<<53 && (f != 0 || !math.Signbit(f)) {
		return strconv.AppendInt(dst, int64(f), 10)
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	start := len(dst)
	dst = strconv.AppendFloat(dst, f, format, -1, 64)
	if format == 'e' {
		if n := len(dst); n-start >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
	}
	return dst
}

const hexDigits = "0123456789abcdef"

// appendString writes s quoted as json.Marshal does (HTML-safe): ", \ and
// control characters escaped (\b \f \n \r \t by name, the rest as \u00XX),
// <, > and & as \u003c, \u003e, \u0026, U+2028 and U+2029 as \u2028 and
// \u2029, and each byte of invalid UTF-8 as \ufffd.
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		b := s[i]
		if b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' && b != '<' && b != '>' && b != '&' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '"', '\\':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
