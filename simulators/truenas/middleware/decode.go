package middleware

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// DecodeNumbers is what a json.Decoder with UseNumber decodes of raw's
// first value into an any (maps, lists, strings, json.Number, booleans,
// null), the arguments' form the validators read. Every method argument
// was decoded so: the decoder copies raw into its buffer, scans it once
// to find the value's end and again to build it, through reflection
// (with the schema checks a tenth of the simulator's CPU per call, issue
// 16, eighth round). DecodeNumbers builds the usual argument in one scan:
// JSON whose strings hold no escape, control or non-ASCII byte, with
// nothing but white space after it. Anything else goes to the decoder,
// which gives its value or error. TestDecodeNumbersIsTheDecoder compares
// the two.
func DecodeNumbers(raw []byte) (any, error) {
	s := argScanner{b: raw}
	if v, ok := s.value(0); ok && s.end() {
		return v, nil
	}
	return decodeWithDecoder(raw)
}

// decodeWithDecoder is the json.Decoder's answer DecodeNumbers stands for.
func decodeWithDecoder(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// ScanList is json.Unmarshal(raw, &list) for a list of the values
// DecodeNumbers reads (numbers as float64) with nothing else after it;
// ok false is anything else, for the caller to unmarshal. The query
// filters' form (ParseQuery).
func ScanList(raw []byte) (list []any, ok bool) {
	v, ok := scanFloats(raw, '[')
	if !ok {
		return nil, false
	}
	return v.([]any), true
}

// ScanObject is ScanList for an object: json.Unmarshal(raw, &row) (the
// sharing tables' rows).
func ScanObject(raw []byte) (row map[string]any, ok bool) {
	v, ok := scanFloats(raw, '{')
	if !ok {
		return nil, false
	}
	return v.(map[string]any), true
}

// scanFloats reads raw as one value that opens with open, numbers as
// float64.
func scanFloats(raw []byte, open byte) (any, bool) {
	s := argScanner{b: raw, floats: true}
	s.space()
	if s.i >= len(s.b) || s.b[s.i] != open {
		return nil, false
	}
	v, ok := s.value(0)
	if !ok || !s.end() {
		return nil, false
	}
	return v, true
}

// maxArgDepth is the nesting the scan builds; deeper goes to the decoder
// (which allows 10,000 levels).
const maxArgDepth = 100

// argScanner reads one JSON value from b at i; ok false is "not the
// simple case", never an answer.
type argScanner struct {
	b []byte
	i int
	// floats: numbers as float64, as json.Unmarshal into any makes them
	// (else json.Number)
	floats bool
}

func (s *argScanner) space() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// end tells whether only white space is left.
func (s *argScanner) end() bool {
	s.space()
	return s.i == len(s.b)
}

func (s *argScanner) value(depth int) (any, bool) {
	s.space()
	if s.i >= len(s.b) || depth > maxArgDepth {
		return nil, false
	}
	switch c := s.b[s.i]; {
	case c == '{':
		return s.object(depth)
	case c == '[':
		return s.list(depth)
	case c == '"':
		return s.str()
	case c == 't':
		return true, s.literal("true")
	case c == 'f':
		return false, s.literal("false")
	case c == 'n':
		return nil, s.literal("null")
	case c == '-' || c >= '0' && c <= '9':
		return s.number()
	}
	return nil, false
}

func (s *argScanner) literal(word string) bool {
	if !bytes.HasPrefix(s.b[s.i:], []byte(word)) {
		return false
	}
	s.i += len(word)
	return true
}

// object reads {...}; a repeated key keeps its last value, as the decoder
// does.
func (s *argScanner) object(depth int) (any, bool) {
	s.i++ // '{'
	m := map[string]any{}
	if s.closes('}') {
		return m, true
	}
	for {
		s.space()
		if s.i >= len(s.b) || s.b[s.i] != '"' {
			return nil, false
		}
		k, ok := s.str()
		s.space()
		if !ok || s.i >= len(s.b) || s.b[s.i] != ':' {
			return nil, false
		}
		s.i++
		v, ok := s.value(depth + 1)
		if !ok {
			return nil, false
		}
		m[k.(string)] = v
		if more, ok := s.sep('}'); !ok || !more {
			return m, ok
		}
	}
}

// list reads [...]; an empty one is an empty list, not nil, as the
// decoder makes it.
func (s *argScanner) list(depth int) (any, bool) {
	s.i++ // '['
	l := []any{}
	if s.closes(']') {
		return l, true
	}
	for {
		v, ok := s.value(depth + 1)
		if !ok {
			return nil, false
		}
		l = append(l, v)
		if more, ok := s.sep(']'); !ok || !more {
			return l, ok
		}
	}
}

// closes reads white space and closer, if closer is next.
func (s *argScanner) closes(closer byte) bool {
	s.space()
	if s.i < len(s.b) && s.b[s.i] == closer {
		s.i++
		return true
	}
	return false
}

// sep reads what follows a member: a comma (more) or closer.
func (s *argScanner) sep(closer byte) (more, ok bool) {
	s.space()
	if s.i >= len(s.b) {
		return false, false
	}
	switch s.b[s.i] {
	case ',':
		s.i++
		return true, true
	case closer:
		s.i++
		return false, true
	}
	return false, false
}

// str reads a string. Escapes other than \\u are undone here; a \\u
// escape, a control character or invalid UTF-8 (which the decoder
// replaces) is left to the decoder.
func (s *argScanner) str() (any, bool) {
	start := s.i + 1
	var buf []byte // the string so far, once an escape was met
	last, ascii := start, true
	for j := start; j < len(s.b); j++ {
		switch c := s.b[j]; {
		case c == '"':
			if !ascii && !utf8.Valid(s.b[start:j]) {
				return nil, false
			}
			s.i = j + 1
			if buf == nil {
				return string(s.b[start:j]), true
			}
			return string(append(buf, s.b[last:j]...)), true
		case c == '\\':
			if j+1 >= len(s.b) || simpleEscapes[s.b[j+1]] == 0 {
				return nil, false
			}
			buf = append(append(buf, s.b[last:j]...), simpleEscapes[s.b[j+1]])
			j++
			last = j + 1
		case c < 0x20:
			return nil, false
		case c >= 0x80:
			ascii = false
		}
	}
	return nil, false
}

// simpleEscapes are the one-letter escapes and what they stand for.
var simpleEscapes = [256]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

// number reads a number as JSON writes it (-?int frac? exp?), kept as
// its text.
func (s *argScanner) number() (any, bool) {
	start := s.i
	if s.b[s.i] == '-' {
		s.i++
	}
	switch {
	case s.i < len(s.b) && s.b[s.i] == '0':
		s.i++
	case s.digits() == 0:
		return nil, false
	}
	if s.i < len(s.b) && s.b[s.i] == '.' {
		s.i++
		if s.digits() == 0 {
			return nil, false
		}
	}
	if s.i < len(s.b) && (s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		s.i++
		if s.i < len(s.b) && (s.b[s.i] == '+' || s.b[s.i] == '-') {
			s.i++
		}
		if s.digits() == 0 {
			return nil, false
		}
	}
	if s.floats {
		f, err := strconv.ParseFloat(string(s.b[start:s.i]), 64)
		return f, err == nil // out of range: the decoder's error
	}
	return json.Number(s.b[start:s.i]), true
}

// digits reads decimal digits and tells how many.
func (s *argScanner) digits() int {
	n := 0
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		s.i++
		n++
	}
	return n
}
