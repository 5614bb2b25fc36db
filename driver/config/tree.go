// Package config reads democratic-csi compatible configuration files: the
// main driver config and the proxy's connection files. A config is kept as a
// generic YAML tree (Tree) because democratic-csi files carry many sections a
// given backend ignores; typed views are decoded from the tree on demand.
package config

import (
	"fmt"
	"strconv"
	"strings"
)

// Tree is a parsed YAML document: maps are map[string]any, lists []any,
// scalars string, bool, int64, float64 or nil.
type Tree map[string]any

// Lookup returns the value at a dotted key path ("local-hostpath.shareBasePath").
func (t Tree) Lookup(path string) (any, bool) {
	var cur any = map[string]any(t)
	for _, part := range strings.Split(path, ".") {
		m, ok := asMap(cur)
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

// String returns the scalar at path as a string ("" and false when absent or nil).
func (t Tree) String(path string) (string, bool) {
	v, ok := t.Lookup(path)
	if !ok || v == nil {
		return "", false
	}
	switch x := v.(type) {
	case string:
		return x, true
	case bool, int, int64, uint64, float64:
		return fmt.Sprint(x), true
	}
	return "", false
}

// Int returns the integer at path. Numeric strings are accepted because
// democratic-csi configs often quote numbers.
func (t Tree) Int(path string) (int64, bool, error) {
	v, ok := t.Lookup(path)
	if !ok || v == nil {
		return 0, false, nil
	}
	switch x := v.(type) {
	case int:
		return int64(x), true, nil
	case int64:
		return x, true, nil
	case uint64:
		if x <= 1<<63-1 {
			return int64(x), true, nil
		}
	case float64:
		if x == float64(int64(x)) {
			return int64(x), true, nil
		}
	case string:
		if n, err := strconv.ParseInt(strings.TrimSpace(x), 0, 64); err == nil {
			return n, true, nil
		}
	}
	return 0, true, fmt.Errorf("%s: must be an integer, got %v", path, v)
}

// Bool returns the boolean at path; "true"/"false" strings are accepted.
func (t Tree) Bool(path string) (bool, bool, error) {
	v, ok := t.Lookup(path)
	if !ok || v == nil {
		return false, false, nil
	}
	switch x := v.(type) {
	case bool:
		return x, true, nil
	case string:
		if b, err := strconv.ParseBool(x); err == nil {
			return b, true, nil
		}
	}
	return false, true, fmt.Errorf("%s: must be true or false, got %v", path, v)
}

// Sub returns the map at path, or nil when absent.
func (t Tree) Sub(path string) Tree {
	v, ok := t.Lookup(path)
	if !ok {
		return nil
	}
	m, _ := asMap(v)
	return m
}

func asMap(v any) (Tree, bool) {
	switch m := v.(type) {
	case Tree:
		return m, true
	case map[string]any:
		return Tree(m), true
	}
	return nil, false
}

// Merge deep-merges over onto base and returns a new tree: maps merge key by
// key, anything else in over replaces base. Neither input is modified.
func Merge(base, over Tree) Tree {
	out := make(Tree, len(base)+len(over))
	for k, v := range base {
		out[k] = clone(v)
	}
	for k, v := range over {
		bm, bok := asMap(out[k])
		om, ook := asMap(v)
		if bok && ook {
			out[k] = map[string]any(Merge(bm, om))
			continue
		}
		out[k] = clone(v)
	}
	return out
}

func clone(v any) any {
	switch x := v.(type) {
	case Tree:
		return map[string]any(Merge(nil, x))
	case map[string]any:
		return map[string]any(Merge(nil, x))
	case []any:
		c := make([]any, len(x))
		for i, e := range x {
			c[i] = clone(e)
		}
		return c
	}
	return v
}
