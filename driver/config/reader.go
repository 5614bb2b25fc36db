package config

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Reader reads typed values from a config tree, collecting one Problem per
// bad key instead of stopping at the first.
type Reader struct {
	cfg      Tree
	problems []Problem
}

// NewReader reads from t.
func NewReader(t Tree) *Reader { return &Reader{cfg: t} }

// Problems are the problems found so far.
func (r *Reader) Problems() []Problem { return r.problems }

// Tree is the tree being read.
func (r *Reader) Tree() Tree { return r.cfg }

// Add records a problem with key.
func (r *Reader) Add(key, format string, args ...any) {
	r.problems = append(r.problems, Problem{Key: key, Msg: fmt.Sprintf(format, args...)})
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
	case map[string]any, Tree:
		return "a map"
	case []any:
		return "a list"
	}
	return fmt.Sprintf("%v", v)
}

// Str reads a scalar as a string ("" when absent).
func (r *Reader) Str(key string) string {
	v, ok := r.cfg.Lookup(key)
	if !ok {
		return ""
	}
	s, isScalar := scalar(v)
	if !isScalar {
		r.Add(key, "must be a single value, got %s", describe(v))
	}
	return strings.TrimSpace(s)
}

// Required reads a scalar that must be set; what says what it is for.
func (r *Reader) Required(key, what string) string {
	s := r.Str(key)
	if s == "" {
		r.Add(key, "required: %s", what)
	}
	return s
}

// Bool reads true/false (also "true"/"false" strings, as YAML configs
// written for democratic-csi often quote them).
func (r *Reader) Bool(key string, def bool) bool {
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
	r.Add(key, "must be true or false, got %s", describe(v))
	return def
}

// List reads a list of scalars (a single scalar is a one-item list).
func (r *Reader) List(key string) []string {
	v, ok := r.cfg.Lookup(key)
	if !ok || v == nil {
		return nil
	}
	items, isList := v.([]any)
	if !isList {
		if s, isScalar := scalar(v); isScalar && s != "" {
			return []string{s}
		}
		r.Add(key, "must be a list, got %s", describe(v))
		return nil
	}
	var out []string
	for i, it := range items {
		s, isScalar := scalar(it)
		if !isScalar {
			r.Add(fmt.Sprintf("%s[%d]", key, i), "must be a single value, got %s", describe(it))
			continue
		}
		out = append(out, s)
	}
	return out
}

// KV is one key/value of a config map.
type KV struct{ Key, Value string }

// Pairs reads a map of scalars, sorted by key so commands are deterministic.
func (r *Reader) Pairs(key string) []KV {
	v, ok := r.cfg.Lookup(key)
	if !ok || v == nil {
		return nil
	}
	m := r.cfg.Sub(key)
	if m == nil {
		r.Add(key, "must be a map of names to values, got %s", describe(v))
		return nil
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []KV
	for _, k := range keys {
		s, isScalar := scalar(m[k])
		if !isScalar {
			r.Add(key+"."+k, "must be a single value, got %s", describe(m[k]))
			continue
		}
		out = append(out, KV{k, s})
	}
	return out
}
