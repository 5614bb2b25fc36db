package zfsgeneric

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/switchyard-csi/switchyard/driver/config"
)

// reader reads typed values from a config tree, collecting one Problem per
// bad key instead of stopping at the first.
type reader struct {
	cfg      config.Tree
	problems []config.Problem
}

func (r *reader) add(key, format string, args ...any) {
	r.problems = append(r.problems, config.Problem{Key: key, Msg: fmt.Sprintf(format, args...)})
}

// scalar renders a YAML scalar as democratic-csi would see it in a string
// context (numbers and booleans included); ok is false for maps and lists.
func scalar(v any) (string, bool) {
	switch x := v.(type) {
	case nil:
		return "", true
	case string:
		return x, true
	case bool:
		return strconv.FormatBool(x), true
	case int:
		return strconv.Itoa(x), true
	case int64:
		return strconv.FormatInt(x, 10), true
	case uint64:
		return strconv.FormatUint(x, 10), true
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64), true
	}
	return "", false
}

func describe(v any) string {
	switch v.(type) {
	case map[string]any, config.Tree:
		return "a map"
	case []any:
		return "a list"
	}
	return fmt.Sprintf("%v", v)
}

// str reads a scalar as a string ("" when absent).
func (r *reader) str(key string) string {
	v, ok := r.cfg.Lookup(key)
	if !ok {
		return ""
	}
	s, isScalar := scalar(v)
	if !isScalar {
		r.add(key, "must be a single value, got %s", describe(v))
	}
	return strings.TrimSpace(s)
}

func (r *reader) required(key, what string) string {
	s := r.str(key)
	if s == "" {
		r.add(key, "required: %s", what)
	}
	return s
}

// boolean reads true/false (also "true"/"false" strings, as YAML configs
// written for democratic-csi often quote them).
func (r *reader) boolean(key string, def bool) bool {
	v, ok := r.cfg.Lookup(key)
	if !ok || v == nil || v == "" {
		return def
	}
	switch x := v.(type) {
	case bool:
		return x
	case string:
		if b, err := strconv.ParseBool(strings.TrimSpace(x)); err == nil {
			return b
		}
	}
	r.add(key, "must be true or false, got %s", describe(v))
	return def
}

// list reads a list of scalars (a single scalar is a one-item list).
func (r *reader) list(key string) []string {
	v, ok := r.cfg.Lookup(key)
	if !ok || v == nil {
		return nil
	}
	items, isList := v.([]any)
	if !isList {
		if s, isScalar := scalar(v); isScalar && s != "" {
			return []string{s}
		}
		r.add(key, "must be a list, got %s", describe(v))
		return nil
	}
	var out []string
	for i, it := range items {
		s, isScalar := scalar(it)
		if !isScalar {
			r.add(fmt.Sprintf("%s[%d]", key, i), "must be a single value, got %s", describe(it))
			continue
		}
		out = append(out, s)
	}
	return out
}

// kv is one key/value of a config map, in key order.
type kv struct{ key, value string }

// pairs reads a map of scalars, sorted by key so commands are deterministic.
func (r *reader) pairs(key string) []kv {
	v, ok := r.cfg.Lookup(key)
	if !ok || v == nil {
		return nil
	}
	m := r.cfg.Sub(key)
	if m == nil {
		r.add(key, "must be a map of names to values, got %s", describe(v))
		return nil
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []kv
	for _, k := range keys {
		s, isScalar := scalar(m[k])
		if !isScalar {
			r.add(key+"."+k, "must be a single value, got %s", describe(m[k]))
			continue
		}
		out = append(out, kv{k, s})
	}
	return out
}
