package sharing

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/switchyard-csi/switchyard/simulators/truenas/middleware"
)

// The middleware validates arguments in one of two dialects, depending on
// whether a namespace has been ported to the pydantic API models of 25.04+
// yet. Drivers see the difference: an unknown field is
// "sharingnfs_create.paths: Field was not expected" in the old dialect and
// "data.paths: Extra inputs are not permitted" in pydantic's.

// dialect says how a method checks its arguments and names its errors.
type dialect struct {
	pydantic bool
	attr     string // prefix of error attributes: a schema name or an argument name
}

func oldSchema(name string) dialect { return dialect{attr: name} }
func pydantic(arg string) dialect   { return dialect{pydantic: true, attr: arg} }

func (d dialect) at(name string) string {
	if d.attr == "" {
		return name
	}
	if name == "" {
		return d.attr
	}
	return d.attr + "." + name
}

// kind is a field's JSON type.
type kind int

const (
	kStr kind = iota
	kBool
	kInt
	kIntOrStr
	kStrList
	kObj
	kObjList
	kAny
)

// field describes one attribute of an argument object.
type field struct {
	name     string
	kind     kind
	null     bool  // null is a valid value
	required bool  // on create
	def      any   // filled in on create when absent (nil: left absent)
	enum     []any // allowed values (strings or ints); for kStrList, of each item
	minLen   int   // strings: at least this long (NonEmptyString is 1)
	maxLen   int   // strings: at most this long (0: no limit)
	min, max *int  // integers: range
	sub      []field
}

func intp(i int) *int { return &i }

// decode checks raw against fields and returns the object with defaults
// filled in (create) or only the given fields (update). Every problem is
// reported, as both dialects collect errors before raising.
func decode(d dialect, raw json.RawMessage, fields []field, create bool) (middleware.Row, middleware.ValidationErrors) {
	var v any
	if len(bytes.TrimSpace(raw)) == 0 {
		v = map[string]any{}
	} else {
		var err error
		if v, err = middleware.DecodeNumbers(raw); err != nil {
			return nil, middleware.ValidationErrors{{Attribute: d.at(""), Message: "Invalid JSON: " + err.Error()}}
		}
	}
	var errs middleware.ValidationErrors
	out := decodeObj(d, "", v, fields, create, &errs)
	if len(errs) > 0 {
		return nil, errs
	}
	return out, nil
}

func decodeObj(d dialect, path string, v any, fields []field, create bool, errs *middleware.ValidationErrors) middleware.Row {
	add := func(attr, msg string) {
		*errs = append(*errs, middleware.ValidationError{Attribute: d.at(attr), Message: msg})
	}
	if v == nil && !d.pydantic {
		v = map[string]any{} // the old Dict treats a missing object as {}
	}
	obj, ok := v.(map[string]any)
	if !ok {
		if d.pydantic {
			add(path, "Input should be a valid dictionary")
		} else {
			add(path, "A dict was expected")
		}
		return nil
	}
	byName := map[string]*field{}
	for i := range fields {
		byName[fields[i].name] = &fields[i]
	}
	join := func(name string) string {
		if path == "" {
			return name
		}
		return path + "." + name
	}
	out := middleware.Row{}
	for _, key := range sortedKeys(obj) {
		f := byName[key]
		if f == nil {
			if d.pydantic {
				add(join(key), "Extra inputs are not permitted")
			} else {
				add(join(key), "Field was not expected")
			}
			continue
		}
		if val, ok := decodeValue(d, join(key), obj[key], f, create, errs); ok {
			out[key] = val
		}
	}
	if create {
		for _, f := range fields {
			if _, given := obj[f.name]; given {
				continue
			}
			if f.required {
				if d.pydantic {
					add(join(f.name), "Field required")
				} else {
					add(join(f.name), "attribute required")
				}
				continue
			}
			if f.def != nil {
				out[f.name] = copyJSON(f.def)
			} else if f.null {
				out[f.name] = nil
			}
		}
	}
	return out
}

func decodeValue(d dialect, attr string, v any, f *field, create bool, errs *middleware.ValidationErrors) (any, bool) {
	add := func(a, msg string) {
		*errs = append(*errs, middleware.ValidationError{Attribute: d.at(a), Message: msg})
	}
	if v == nil {
		if f.null || f.kind == kAny {
			return nil, true
		}
		if d.pydantic {
			add(attr, typeMsg(f.kind))
		} else {
			add(attr, "null not allowed")
		}
		return nil, false
	}
	switch f.kind {
	case kAny:
		return v, true
	case kStr:
		s, ok := v.(string)
		if !ok {
			if n, isNum := v.(json.Number); isNum && !d.pydantic {
				if _, err := n.Int64(); err == nil {
					s, ok = n.String(), true // the old Str accepts an integer and stringifies it
				}
			}
		}
		if !ok {
			add(attr, oldOr(d, "Not a string", typeMsg(kStr)))
			return nil, false
		}
		return s, checkStr(d, attr, s, f, errs)
	case kBool:
		b, ok := v.(bool)
		if !ok {
			add(attr, oldOr(d, "Not a boolean", typeMsg(kBool)))
			return nil, false
		}
		return b, true
	case kInt, kIntOrStr:
		if s, isStr := v.(string); isStr && f.kind == kIntOrStr {
			return s, true
		}
		n, ok := toInt(d, v)
		if !ok {
			add(attr, oldOr(d, "Not an integer", typeMsg(kInt)))
			return nil, false
		}
		return n, checkInt(d, attr, n, f, errs)
	case kStrList:
		l, ok := v.([]any)
		if !ok {
			add(attr, oldOr(d, "Not a list", typeMsg(kStrList)))
			return nil, false
		}
		out := make([]any, 0, len(l))
		good := true
		for i, x := range l {
			s, isStr := x.(string)
			item := attr + "." + strconv.Itoa(i)
			switch {
			case !isStr:
				add(item, oldOr(d, "Not a string", typeMsg(kStr)))
				good = false
			case len(f.enum) > 0 && !inEnum(s, f.enum):
				add(item, enumMsg(d, s, f.enum))
				good = false
			case d.pydantic && f.minLen > 0 && len(s) < f.minLen:
				add(item, atLeast(f.minLen))
				good = false
			default:
				out = append(out, s)
			}
		}
		return out, good
	case kObj:
		n := len(*errs)
		o := decodeObj(d, attr, v, f.sub, create, errs)
		return o, len(*errs) == n
	case kObjList:
		l, ok := v.([]any)
		if !ok {
			add(attr, oldOr(d, "Not a list", typeMsg(kStrList)))
			return nil, false
		}
		n := len(*errs)
		out := make([]any, 0, len(l))
		for i, x := range l {
			// list items are whole objects: their defaults apply on update too
			out = append(out, decodeObj(d, attr+"."+strconv.Itoa(i), x, f.sub, true, errs))
		}
		return out, len(*errs) == n
	}
	return nil, false
}

func checkStr(d dialect, attr, s string, f *field, errs *middleware.ValidationErrors) bool {
	add := func(msg string) {
		*errs = append(*errs, middleware.ValidationError{Attribute: d.at(attr), Message: msg})
	}
	switch {
	case len(f.enum) > 0 && !inEnum(s, f.enum):
		add(enumMsg(d, s, f.enum))
	case f.minLen > 0 && len(s) < f.minLen:
		add(oldOr(d, "Empty value not allowed", atLeast(f.minLen)))
	case f.maxLen > 0 && len(s) > f.maxLen:
		add(oldOr(d, fmt.Sprintf("Value greater than %d not allowed", f.maxLen),
			fmt.Sprintf("String should have at most %d characters", f.maxLen)))
	default:
		return true
	}
	return false
}

func checkInt(d dialect, attr string, n int, f *field, errs *middleware.ValidationErrors) bool {
	add := func(msg string) {
		*errs = append(*errs, middleware.ValidationError{Attribute: d.at(attr), Message: msg})
	}
	switch {
	case len(f.enum) > 0 && !inEnum(n, f.enum):
		add(enumMsg(d, n, f.enum))
	case f.min != nil && n < *f.min:
		add(oldOr(d, rangeMsg(f), fmt.Sprintf("Input should be greater than or equal to %d", *f.min)))
	case f.max != nil && n > *f.max:
		add(oldOr(d, rangeMsg(f), fmt.Sprintf("Input should be less than or equal to %d", *f.max)))
	default:
		return true
	}
	return false
}

// rangeMsg is the old Range validator's text.
func rangeMsg(f *field) string {
	switch {
	case f.min != nil && f.max != nil:
		return fmt.Sprintf("Should be between %d and %d", *f.min, *f.max)
	case f.min != nil:
		return fmt.Sprintf("Should be greater than or equal to %d", *f.min)
	}
	return fmt.Sprintf("Should be less than or equal to %d", *f.max)
}

func toInt(d dialect, v any) (int, bool) {
	switch n := v.(type) {
	case json.Number:
		i, err := n.Int64()
		return int(i), err == nil
	case float64:
		if n == float64(int(n)) {
			return int(n), true
		}
	case int:
		return n, true
	case string:
		// the old Int accepts a string of digits; pydantic's strict mode does not
		if i, err := strconv.Atoi(n); err == nil && !d.pydantic && n != "" && strings.Trim(n, "0123456789") == "" {
			return i, true
		}
	}
	return 0, false
}

func typeMsg(k kind) string {
	switch k {
	case kStr:
		return "Input should be a valid string"
	case kBool:
		return "Input should be a valid boolean"
	case kInt, kIntOrStr:
		return "Input should be a valid integer"
	case kStrList, kObjList:
		return "Input should be a valid list"
	case kObj:
		return "Input should be a valid dictionary"
	}
	return "Invalid value"
}

func oldOr(d dialect, old, pyd string) string {
	if d.pydantic {
		return pyd
	}
	return old
}

func atLeast(n int) string {
	if n == 1 {
		return "String should have at least 1 character"
	}
	return fmt.Sprintf("String should have at least %d characters", n)
}

// enumMsg is "Invalid choice: X" (old) or pydantic's literal_error text,
// "Input should be 'A', 'B' or 'C'".
func enumMsg(d dialect, v any, enum []any) string {
	if !d.pydantic {
		return fmt.Sprintf("Invalid choice: %v", v)
	}
	parts := make([]string, len(enum))
	for i, e := range enum {
		if s, ok := e.(string); ok {
			parts[i] = "'" + s + "'"
		} else {
			parts[i] = fmt.Sprint(e)
		}
	}
	if len(parts) == 1 {
		return "Input should be " + parts[0]
	}
	return "Input should be " + strings.Join(parts[:len(parts)-1], ", ") + " or " + parts[len(parts)-1]
}

func inEnum(v any, enum []any) bool {
	for _, e := range enum {
		if e == v {
			return true
		}
	}
	return false
}

func strs(s ...string) []any {
	out := make([]any, len(s))
	for i, x := range s {
		out[i] = x
	}
	return out
}

// copyJSON deep-copies a default value so rows never share lists or maps.
func copyJSON(v any) any {
	switch x := v.(type) {
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = copyJSON(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = copyJSON(e)
		}
		return out
	}
	return v
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	// a stable order of errors, so tests and clients see the same list
	sort.Strings(keys)
	return keys
}
