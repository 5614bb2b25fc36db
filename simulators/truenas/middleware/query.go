package middleware

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strings"
)

// Row is one object as a query returns it (decoded JSON).
type Row = map[string]any

// QueryOptions are the options of a *.query call.
type QueryOptions struct {
	Select  []string       `json:"select"`
	OrderBy []string       `json:"order_by"`
	Count   bool           `json:"count"`
	Get     bool           `json:"get"`
	Offset  int            `json:"offset"`
	Limit   int            `json:"limit"`
	Extra   map[string]any `json:"extra"`
}

// ParseQuery reads a query's [filters, options] parameters. attr prefixes
// validation errors ("pool_dataset_query").
func ParseQuery(params []json.RawMessage, attr string) (filters []any, opts QueryOptions, err error) {
	if len(params) > 0 && string(params[0]) != "null" {
		if l, ok := ScanList(params[0]); ok {
			filters = l
		} else if err := json.Unmarshal(params[0], &filters); err != nil {
			return nil, opts, Invalid(attr+".query-filters", "Not a list")
		}
	}
	if len(params) > 1 && string(params[1]) != "null" {
		if err := json.Unmarshal(params[1], &opts); err != nil {
			return nil, opts, Invalid(attr+".query-options", "Not a dictionary: %v", err)
		}
	}
	if _, err := compile(filters); err != nil {
		return nil, opts, Invalid(attr+".query-filters", "%v", err)
	}
	return filters, opts, nil
}

// Query filters, orders, pages and shapes rows as the middleware's
// filter_list does, and returns the query's result: the list, a count
// (options.count) or one object (options.get; none matching is an
// ENOENT CallError "MatchNotFound()").
func Query(rows []Row, filters []any, opts QueryOptions) (any, error) {
	match, err := compile(filters)
	if err != nil {
		return nil, Invalid("query-filters", "%v", err)
	}
	out := make([]Row, 0, len(rows))
	for _, r := range rows {
		if match(r) {
			out = append(out, r)
		}
	}
	if opts.Count {
		return len(out), nil
	}
	if len(opts.OrderBy) > 0 {
		sortRows(out, opts.OrderBy)
	}
	if opts.Offset > 0 {
		if opts.Offset >= len(out) {
			out = out[:0]
		} else {
			out = out[opts.Offset:]
		}
	}
	if opts.Limit > 0 && opts.Limit < len(out) {
		out = out[:opts.Limit]
	}
	if len(opts.Select) > 0 {
		for i, r := range out {
			out[i] = selectFields(r, opts.Select)
		}
	}
	if opts.Get {
		if len(out) == 0 {
			return nil, &CallError{Errno: ENOENT, Message: "MatchNotFound()"}
		}
		return out[0], nil
	}
	return out, nil
}

// Lookup returns the value at a dotted path ("user_properties.x.value").
func Lookup(r Row, path string) (any, bool) {
	var cur any = r
	for _, part := range strings.Split(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		cur, ok = m[part]
		if !ok {
			return nil, false
		}
	}
	return cur, true
}

type matcher func(Row) bool

// compile turns filters into a predicate: a list of [field, op, value]
// triples (all must hold) where an element may also be ["OR", [f1, f2, ...]]
// and each fN a triple or a list of triples.
func compile(filters []any) (matcher, error) {
	var ms []matcher
	for _, f := range filters {
		m, err := compileOne(f)
		if err != nil {
			return nil, err
		}
		ms = append(ms, m)
	}
	return func(r Row) bool {
		for _, m := range ms {
			if !m(r) {
				return false
			}
		}
		return true
	}, nil
}

func compileOne(f any) (matcher, error) {
	l, ok := f.([]any)
	if !ok {
		return nil, fmt.Errorf("filter %v is not a list", f)
	}
	if len(l) == 2 {
		if op, _ := l[0].(string); op == "OR" {
			alts, ok := l[1].([]any)
			if !ok {
				return nil, fmt.Errorf("OR takes a list of filters")
			}
			var ms []matcher
			for _, a := range alts {
				var m matcher
				var err error
				if al, ok := a.([]any); ok && len(al) > 0 {
					if _, nested := al[0].([]any); nested {
						m, err = compile(al)
					} else {
						m, err = compileOne(a)
					}
				} else {
					err = fmt.Errorf("invalid OR element %v", a)
				}
				if err != nil {
					return nil, err
				}
				ms = append(ms, m)
			}
			return func(r Row) bool {
				for _, m := range ms {
					if m(r) {
						return true
					}
				}
				return false
			}, nil
		}
	}
	if len(l) != 3 {
		return nil, fmt.Errorf("Invalid filter %v", f)
	}
	field, ok1 := l[0].(string)
	op, ok2 := l[1].(string)
	if !ok1 || !ok2 {
		return nil, fmt.Errorf("Invalid filter %v", f)
	}
	want := l[2]
	test, err := operator(op, want)
	if err != nil {
		return nil, err
	}
	return func(r Row) bool {
		v, _ := Lookup(r, field)
		return test(v)
	}, nil
}

func operator(op string, want any) (func(any) bool, error) {
	ci := false
	if strings.HasPrefix(op, "C") && len(op) > 1 {
		ci, op = true, op[1:]
	}
	str := func(v any) string {
		s, _ := v.(string)
		if ci {
			return strings.ToLower(s)
		}
		return s
	}
	w := str(want)
	switch op {
	case "=":
		return func(v any) bool { return equal(v, want, ci) }, nil
	case "!=":
		return func(v any) bool { return !equal(v, want, ci) }, nil
	case ">", ">=", "<", "<=":
		return func(v any) bool { return compare(v, want, op) }, nil
	case "~":
		re, err := regexp.Compile(fmt.Sprint(want))
		if err != nil {
			return nil, fmt.Errorf("invalid regular expression %q", want)
		}
		return func(v any) bool { s, ok := v.(string); return ok && re.MatchString(s) }, nil
	case "in", "nin":
		list, ok := want.([]any)
		if !ok {
			return nil, fmt.Errorf("%s takes a list", op)
		}
		in := func(v any) bool {
			for _, x := range list {
				if equal(v, x, ci) {
					return true
				}
			}
			return false
		}
		if op == "nin" {
			return func(v any) bool { return !in(v) }, nil
		}
		return in, nil
	case "rin", "rnin":
		has := func(v any) bool {
			switch c := v.(type) {
			case []any:
				for _, x := range c {
					if equal(x, want, ci) {
						return true
					}
				}
			case string:
				return strings.Contains(str(c), w)
			}
			return false
		}
		if op == "rnin" {
			return func(v any) bool { return !has(v) }, nil
		}
		return has, nil
	case "^":
		return func(v any) bool { return isString(v) && strings.HasPrefix(str(v), w) }, nil
	case "!^":
		return func(v any) bool { return isString(v) && !strings.HasPrefix(str(v), w) }, nil
	case "$":
		return func(v any) bool { return isString(v) && strings.HasSuffix(str(v), w) }, nil
	case "!$":
		return func(v any) bool { return isString(v) && !strings.HasSuffix(str(v), w) }, nil
	}
	return nil, fmt.Errorf("Invalid operation: %s", op)
}

func isString(v any) bool { _, ok := v.(string); return ok }

// equal compares decoded JSON values; numbers compare by value whatever
// their Go type (rows built in Go hold ints, decoded filters float64).
func equal(a, b any, ci bool) bool {
	if fa, ok := number(a); ok {
		fb, ok := number(b)
		return ok && fa == fb
	}
	if sa, ok := a.(string); ok {
		sb, ok := b.(string)
		if ci {
			return ok && strings.EqualFold(sa, sb)
		}
		return ok && sa == sb
	}
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}

func compare(a, b any, op string) bool {
	var c int
	if fa, ok := number(a); ok {
		fb, ok := number(b)
		if !ok {
			return false
		}
		switch {
		case fa < fb:
			c = -1
		case fa > fb:
			c = 1
		}
	} else if sa, ok := a.(string); ok {
		sb, ok := b.(string)
		if !ok {
			return false
		}
		c = strings.Compare(sa, sb)
	} else {
		return false
	}
	switch op {
	case ">":
		return c > 0
	case ">=":
		return c >= 0
	case "<":
		return c < 0
	}
	return c <= 0
}

func number(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case float32:
		return float64(n), true
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	case uint64:
		return float64(n), true
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	}
	return math.NaN(), false
}

func sortRows(rows []Row, orderBy []string) {
	sort.SliceStable(rows, func(i, j int) bool {
		for _, key := range orderBy {
			desc := strings.HasPrefix(key, "-")
			key = strings.TrimPrefix(key, "-")
			key = strings.TrimPrefix(strings.TrimPrefix(key, "nulls_first:"), "nulls_last:")
			a, _ := Lookup(rows[i], key)
			b, _ := Lookup(rows[j], key)
			if equal(a, b, false) {
				continue
			}
			less := compare(a, b, "<")
			if desc {
				return !less
			}
			return less
		}
		return false
	})
}

// selectFields keeps the selected (possibly dotted) fields of r.
func selectFields(r Row, fields []string) Row {
	out := Row{}
	for _, f := range fields {
		v, ok := Lookup(r, f)
		if !ok {
			continue
		}
		parts := strings.Split(f, ".")
		cur := out
		for _, p := range parts[:len(parts)-1] {
			next, ok := cur[p].(map[string]any)
			if !ok {
				next = map[string]any{}
				cur[p] = next
			}
			cur = next
		}
		cur[parts[len(parts)-1]] = v
	}
	return out
}
