package config

import (
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"

	yaml "sigs.k8s.io/yaml/goyaml.v3"
)

// checkShape reports a value that is not one of Tree's documented shapes:
// map[string]any, []any, string, bool, int64, uint64, float64 or nil.
func checkShape(v any, path string) error {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if err := checkShape(e, path+"."+k); err != nil {
				return err
			}
		}
	case []any:
		for i, e := range x {
			if err := checkShape(e, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	case nil, string, bool, int64, uint64, float64:
	default:
		return fmt.Errorf("%s: %T is not a Tree value", path, v)
	}
	return nil
}

// sameValue is reflect.DeepEqual except that numbers compare by value:
// YAML may read "080" as a float and its rewrite "80" as an integer, and
// Tree.Int reads both alike.
func sameValue(a, b any) bool {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, e := range x {
			if f, ok := y[k]; !ok || !sameValue(e, f) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !sameValue(x[i], y[i]) {
				return false
			}
		}
		return true
	}
	if fa, ok := num(a); ok {
		fb, ok := num(b)
		return ok && fa == fb
	}
	return reflect.DeepEqual(a, b)
}

func num(v any) (float64, bool) {
	switch x := v.(type) {
	case int64:
		return float64(x), true
	case uint64:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
}

func hasNaN(v any) bool {
	switch x := v.(type) {
	case map[string]any:
		for _, e := range x {
			if hasNaN(e) {
				return true
			}
		}
	case []any:
		for _, e := range x {
			if hasNaN(e) {
				return true
			}
		}
	case float64:
		return math.IsNaN(x)
	}
	return false
}

// FuzzParse: any bytes give a Tree of the documented shapes or an error
// (never a panic); the same bytes give the same tree; and a tree written
// back as YAML reads back to the same tree.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"driver: local-hostpath\nlocal-hostpath:\n  shareBasePath: /x\n",
		"driver: proxy\nproxy:\n  configFolder: /c\n  nodeId:\n    parts: {nodeName: true, iqn: yes}\n",
		"a: 1\na: 2\n", "- a\n- b\n", "", "~", "1: x\ntrue: y\n2.5: z\n", "a: &x [1, 2]\nb: *x\n",
		"a: 0x10\nb: 1e3\nc: .nan\nd: -.inf\ne: 18446744073709551615\n", "{a: [b, {c: d}]}", "a: !!binary aGVsbG8=\n",
		"a: |\n  multi\n  line\n", "? [complex]\n: key\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		tree, err := Parse(data)
		if err != nil {
			if tree != nil {
				t.Fatalf("Parse returned a tree with error %v", err)
			}
			return
		}
		if tree == nil {
			t.Fatalf("Parse(%q) returned a nil tree without error", data)
		}
		if err := checkShape(map[string]any(tree), ""); err != nil {
			t.Fatalf("Parse(%q): %v", data, err)
		}
		again, err := Parse(data)
		if err != nil || (!hasNaN(map[string]any(tree)) && !reflect.DeepEqual(tree, again)) {
			t.Fatalf("Parse(%q) is not deterministic: %v", data, err)
		}
		if hasNaN(map[string]any(tree)) {
			return
		}
		out, err := yaml.Marshal(map[string]any(tree))
		if err != nil {
			t.Fatalf("marshal %#v: %v", tree, err)
		}
		back, err := Parse(out)
		if err != nil {
			t.Fatalf("Parse(Marshal(Parse(%q))) = %v\n%s", data, err, out)
		}
		if !sameValue(map[string]any(tree), map[string]any(back)) {
			t.Fatalf("round trip of %q changed the tree:\n%#v\n%#v", data, tree, back)
		}
	})
}

// expandRef is ExpandEnv's rule written as a scanner: $${NAME} is the
// literal ${NAME}, ${NAME} is lookup(NAME), anything else is kept.
func expandRef(s string, lookup func(string) (string, bool)) (string, []string) {
	var b strings.Builder
	var unset []string
	ref := func(i int) (name string, end int) { // s[i] == '$': ${NAME} at i?
		if i+1 >= len(s) || s[i+1] != '{' {
			return "", -1
		}
		j := i + 2
		if j >= len(s) || !(s[j] == '_' || s[j] >= 'A' && s[j] <= 'Z' || s[j] >= 'a' && s[j] <= 'z') {
			return "", -1
		}
		for j < len(s) && (s[j] == '_' || s[j] >= 'A' && s[j] <= 'Z' || s[j] >= 'a' && s[j] <= 'z' || s[j] >= '0' && s[j] <= '9') {
			j++
		}
		if j >= len(s) || s[j] != '}' {
			return "", -1
		}
		return s[i+2 : j], j + 1
	}
	for i := 0; i < len(s); {
		if s[i] == '$' {
			if i+1 < len(s) && s[i+1] == '$' {
				if name, end := ref(i + 1); end > 0 {
					b.WriteString("${" + name + "}")
					i = end
					continue
				}
			}
			if name, end := ref(i); end > 0 {
				v, ok := lookup(name)
				if !ok {
					unset = append(unset, name)
				}
				b.WriteString(v)
				i = end
				continue
			}
		}
		b.WriteByte(s[i])
		i++
	}
	return b.String(), unset
}

// FuzzExpandEnv: ExpandEnv agrees with the reference scanner on every
// string value, fails exactly when an unescaped reference names an unset
// variable (naming it and the key), and leaves keys alone.
func FuzzExpandEnv(f *testing.F) {
	for _, s := range []string{"${HOME}/x", "$${HOME}", "$$${HOME}", "${UNSET}", "${}", "${1A}", "$HOME", "a${A}b${B_2}c", "${A", "$${", "${A}${A}", "$$$${A}"} {
		f.Add(s)
	}
	env := map[string]string{"HOME": "/root", "A": "1", "B_2": "${A}", "EMPTY": ""}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	f.Fuzz(func(t *testing.T, s string) {
		tree := Tree{"k": s, "list": []any{s, int64(1)}, "sub": map[string]any{"x": s}}
		if _, fixed := tree[s]; !fixed { // s as a key too, unless it is one of the three above
			tree[s] = "key"
		}
		err := ExpandEnv(tree, lookup)
		want, unset := expandRef(s, lookup)
		if (err != nil) != (len(unset) > 0) {
			t.Fatalf("ExpandEnv(%q) error %v; unset references %v", s, err, unset)
		}
		if err != nil {
			p, ok := err.(Problem)
			if !ok || !strings.Contains(p.Msg, unset[0]) && !containsAny(p.Msg, unset) || p.Key == "" {
				t.Fatalf("ExpandEnv(%q) error %#v does not name the variable and key", s, err)
			}
			return
		}
		for _, got := range []any{tree["k"], tree["list"].([]any)[0], tree["sub"].(map[string]any)["x"]} {
			if got != want {
				t.Fatalf("ExpandEnv(%q) = %q; want %q", s, got, want)
			}
		}
		if tree[s] != "key" && s != "k" && s != "list" && s != "sub" {
			t.Fatalf("ExpandEnv changed the key %q", s)
		}
	})
}

func containsAny(msg string, names []string) bool {
	for _, n := range names {
		if strings.Contains(msg, n) {
			return true
		}
	}
	return false
}
