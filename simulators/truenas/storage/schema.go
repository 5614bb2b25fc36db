package storage

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/switchyard-csi/switchyard/simulators/truenas/middleware"
)

// The middleware validates method arguments against a schema before the
// method runs. Up to 25.04 most storage methods used the legacy
// middlewared.schema (Dict/Str/Int...), from 25.10 pydantic models; both
// reject unknown fields, wrong types and bad enum values, with different
// wording. schema reproduces both.

type ftype int

const (
	tStr ftype = iota
	tInt
	tBool
	tList
	tObj
	tAny
)

// field is one attribute of a schema.
type field struct {
	name     string
	typ      ftype
	enum     []string // allowed string values (tStr)
	inherit  bool     // "INHERIT" is accepted whatever the type
	null     bool     // null is accepted
	required bool
	def      any                // default when absent; nil leaves it absent
	items    *schema            // tList: each item is validated by items (an object schema)
	obj      *schema            // tObj: the object is validated by obj
	pattern  string             // tStr: regular expression the value must match
	check    func(v any) string // extra validation of a present, non-null value; "" = valid
}

// schema is a Dict (legacy) or a BaseModel (pydantic).
type schema struct {
	name     string
	fields   []field
	pydantic bool
}

// args are decoded, validated arguments: strings, int64, bool, []any,
// map[string]any (nested objects decoded as args when they have a schema).
type args map[string]any

func (a args) str(k string) string { s, _ := a[k].(string); return s }
func (a args) boolean(k string) bool {
	b, _ := a[k].(bool)
	return b
}
func (a args) has(k string) bool { _, ok := a[k]; return ok }
func (a args) int(k string) (int64, bool) {
	n, ok := a[k].(int64)
	return n, ok
}
func (a args) sub(k string) args {
	switch m := a[k].(type) {
	case args:
		return m
	case map[string]any:
		return args(m)
	}
	return args{}
}

// decodeJSON decodes raw keeping numbers exact.
func decodeJSON(raw json.RawMessage) (any, error) { return middleware.DecodeNumbers(raw) }

// parse validates one positional parameter against s. A missing or null
// parameter is an empty object (every field takes its default).
func (s schema) parse(raw json.RawMessage) (args, error) {
	var v any
	if len(raw) > 0 {
		var err error
		if v, err = decodeJSON(raw); err != nil {
			return nil, middleware.Invalid(s.name, "Invalid JSON: %v", err)
		}
	}
	if v == nil {
		v = map[string]any{}
	}
	var errs middleware.ValidationErrors
	out := s.clean(s.name, v, &errs)
	if len(errs) > 0 {
		return nil, errs
	}
	return out, nil
}

// clean validates v as an object of s, adding errors under prefix.
func (s schema) clean(prefix string, v any, errs *middleware.ValidationErrors) args {
	obj, ok := v.(map[string]any)
	if !ok {
		*errs = append(*errs, middleware.ValidationError{Attribute: prefix, Message: s.typeMsg(tObj)})
		return nil
	}
	out := args{}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		f := s.field(k)
		if f == nil {
			msg := "Field was not expected"
			if s.pydantic {
				msg = "Extra inputs are not permitted"
			}
			*errs = append(*errs, middleware.ValidationError{Attribute: prefix + "." + k, Message: msg})
			continue
		}
		if val, ok := s.value(prefix+"."+k, f, obj[k], errs); ok {
			out[k] = val
		}
	}
	for i := range s.fields {
		f := &s.fields[i]
		if _, ok := obj[f.name]; ok {
			continue
		}
		if f.required {
			msg := "attribute required"
			if s.pydantic {
				msg = "Field required"
			}
			*errs = append(*errs, middleware.ValidationError{Attribute: prefix + "." + f.name, Message: msg})
			continue
		}
		if f.def != nil {
			out[f.name] = cloneDefault(f.def)
		}
	}
	return out
}

// field is the schema's attribute named name, or nil. A search: an
// argument names a few of a schema's ~40 fields, and a map of them built
// per call cost more than the comparisons.
func (s schema) field(name string) *field {
	for i := range s.fields {
		if s.fields[i].name == name {
			return &s.fields[i]
		}
	}
	return nil
}

func cloneDefault(d any) any {
	switch x := d.(type) {
	case []any:
		return append([]any{}, x...)
	case args:
		c := args{}
		for k, v := range x {
			c[k] = cloneDefault(v)
		}
		return c
	}
	return d
}

// value validates one attribute.
func (s schema) value(attr string, f *field, v any, errs *middleware.ValidationErrors) (any, bool) {
	bad := func(msg string) (any, bool) {
		*errs = append(*errs, middleware.ValidationError{Attribute: attr, Message: msg})
		return nil, false
	}
	if v == nil {
		if f.null {
			return nil, true
		}
		if s.pydantic {
			return bad(s.typeMsg(f.typ))
		}
		return bad("null not allowed")
	}
	if f.inherit && v == "INHERIT" {
		return "INHERIT", true
	}
	var out any
	switch f.typ {
	case tStr:
		str, ok := v.(string)
		if n, isNum := v.(json.Number); isNum && !s.pydantic {
			// The legacy Str stringifies an integer (not a float, not a
			// bool) before checking the type: democratic-csi sends some
			// user property values as numbers.
			if _, err := n.Int64(); err == nil {
				str, ok = n.String(), true
			}
		}
		if !ok {
			return bad(s.typeMsg(tStr))
		}
		if len(f.enum) > 0 && !contains(f.enum, str) {
			return bad(s.enumMsg(f, str))
		}
		if f.pattern != "" && !patternRegexp(f.pattern).MatchString(str) {
			if s.pydantic {
				return bad(fmt.Sprintf("String should match pattern '%s'", f.pattern))
			}
			return bad("Does not match " + f.pattern)
		}
		out = str
	case tInt:
		n, ok := toInt(v)
		if !ok {
			return bad(s.typeMsg(tInt))
		}
		out = n
	case tBool:
		b, ok := v.(bool)
		if !ok {
			return bad(s.typeMsg(tBool))
		}
		out = b
	case tList:
		l, ok := v.([]any)
		if !ok {
			return bad(s.typeMsg(tList))
		}
		if f.items != nil {
			items := make([]any, 0, len(l))
			n := len(*errs)
			for i, it := range l {
				items = append(items, f.items.clean(attr+"."+strconv.Itoa(i), it, errs))
			}
			if len(*errs) > n {
				return nil, false
			}
			out = items
		} else {
			out = l
		}
	case tObj:
		o, ok := v.(map[string]any)
		if !ok {
			return bad(s.typeMsg(tObj))
		}
		if f.obj != nil {
			n := len(*errs)
			a := f.obj.clean(attr, o, errs)
			if len(*errs) > n {
				return nil, false
			}
			out = a
		} else {
			out = o
		}
	default:
		out = v
	}
	if f.check != nil {
		if msg := f.check(out); msg != "" {
			return bad(msg)
		}
	}
	return out, true
}

// patterns caches the compiled field patterns: compiling ".*:.*" for
// every user property of every dataset create and update was 4 % of the
// simulator's CPU (issue 16, sixth round). The patterns are the schemas'
// constants, so the cache holds a handful.
var patterns sync.Map // pattern -> *regexp.Regexp

// patternRegexp is the field pattern as the validators apply it: anchored
// at the start only (Python's re.match).
func patternRegexp(pattern string) *regexp.Regexp {
	if re, ok := patterns.Load(pattern); ok {
		return re.(*regexp.Regexp)
	}
	re := regexp.MustCompile("^(?:" + pattern + ")")
	patterns.Store(pattern, re)
	return re
}

func (s schema) typeMsg(t ftype) string {
	if s.pydantic {
		return map[ftype]string{
			tStr: "Input should be a valid string", tInt: "Input should be a valid integer",
			tBool: "Input should be a valid boolean", tList: "Input should be a valid list",
			tObj: "Input should be a valid dictionary",
		}[t]
	}
	return map[ftype]string{
		tStr: "Not a string", tInt: "Not an integer", tBool: "Not a boolean",
		tList: "Not a list", tObj: "A dict was expected",
	}[t]
}

func (s schema) enumMsg(f *field, got string) string {
	if !s.pydantic {
		return "Invalid choice: " + got
	}
	choices := append([]string{}, f.enum...)
	if f.inherit {
		choices = append(choices, "INHERIT")
	}
	q := make([]string, len(choices))
	for i, c := range choices {
		q[i] = "'" + c + "'"
	}
	if len(q) == 1 {
		return "Input should be " + q[0]
	}
	return "Input should be " + strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}

// toInt accepts JSON integers (and, like both validators in lax mode,
// strings of digits).
func toInt(v any) (int64, bool) {
	switch n := v.(type) {
	case json.Number:
		i, err := n.Int64()
		if err != nil {
			f, ferr := n.Float64()
			if ferr != nil || f != float64(int64(f)) {
				return 0, false
			}
			return int64(f), true
		}
		return i, true
	case string:
		i, err := strconv.ParseInt(n, 10, 64)
		return i, err == nil
	case int64:
		return n, true
	case int:
		return int64(n), true
	}
	return 0, false
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// rangeCheck is the legacy Range validator / pydantic ge/le.
func rangeCheck(pyd bool, lo, hi int64) func(any) string {
	return func(v any) string {
		n, ok := v.(int64)
		if !ok || n >= lo && n <= hi {
			return ""
		}
		if pyd {
			if n < lo {
				return fmt.Sprintf("Input should be greater than or equal to %d", lo)
			}
			return fmt.Sprintf("Input should be less than or equal to %d", hi)
		}
		return fmt.Sprintf("Should be between %d and %d", lo, hi)
	}
}

// quotaCheck is quota/refquota's "at least 1 GiB or 0" (legacy
// Or(Range(min=1 GiB), Exact(0)); pydantic ge=1 GiB | Literal[0, None]).
func quotaCheck(pyd bool) func(any) string {
	return func(v any) string {
		n, ok := v.(int64)
		if !ok || n == 0 || n >= 1<<30 {
			return ""
		}
		if pyd {
			return "Input should be greater than or equal to 1073741824 or Input should be 0 or None"
		}
		return "Should be greater or equal than 1073741824 or Should be 0"
	}
}
