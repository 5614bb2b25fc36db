package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		yaml, err string
	}{
		{"driver: proxy\n", ""},
		{"", ""},
		{"# only a comment\n", ""},
		{"driver: [", "invalid YAML"},
		{"- a\n", "top level must be a map"},
		{"a: 1\na: 2\n", "invalid YAML"}, // duplicate keys are a mistake, not a merge
	}
	for _, tt := range tests {
		_, err := Parse([]byte(tt.yaml))
		if (tt.err == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tt.err) {
			t.Errorf("Parse(%q) = %v; want error %q", tt.yaml, err, tt.err)
		}
	}
}

func TestGetters(t *testing.T) {
	tree, err := Parse([]byte(`
a:
  s: text
  n: 42
  big: 9007199254740993
  q: "0750"
  f: 1.5
  b: true
  bs: "false"
  nil:
`))
	if err != nil {
		t.Fatal(err)
	}
	if s, ok := tree.String("a.s"); !ok || s != "text" {
		t.Errorf("String = %q %v", s, ok)
	}
	if s, ok := tree.String("a.n"); !ok || s != "42" {
		t.Errorf("String of a number = %q %v", s, ok)
	}
	if n, ok, err := tree.Int("a.big"); !ok || err != nil || n != 9007199254740993 {
		t.Errorf("Int keeps 64-bit precision: %d %v %v", n, ok, err)
	}
	if n, _, err := tree.Int("a.q"); err != nil || n != 0o750 {
		t.Errorf("Int of a quoted octal = %d %v", n, err)
	}
	if _, ok, err := tree.Int("a.f"); !ok || err == nil || !strings.Contains(err.Error(), "a.f") {
		t.Errorf("Int of 1.5 must fail naming the key: %v", err)
	}
	if b, ok, err := tree.Bool("a.bs"); !ok || err != nil || b {
		t.Errorf("Bool of \"false\" = %v %v %v", b, ok, err)
	}
	if _, ok, err := tree.Int("a.missing"); ok || err != nil {
		t.Errorf("missing key: %v %v", ok, err)
	}
	if _, ok := tree.String("a.nil"); ok {
		t.Error("nil value reported as set")
	}
	if _, ok := tree.Lookup("a.s.deeper"); ok {
		t.Error("Lookup through a scalar succeeded")
	}
}

func TestMerge(t *testing.T) {
	base, _ := Parse([]byte("driver: proxy\nnode:\n  format: {ext4: {opts: [a]}}\n  mount: {flags: x}\nlist: [1, 2]\n"))
	over, _ := Parse([]byte("driver: local-hostpath\nnode:\n  mount: {flags: y}\nlist: [3]\n"))
	m := Merge(base, over)
	checks := map[string]string{"driver": "local-hostpath", "node.mount.flags": "y"}
	for k, want := range checks {
		if got, _ := m.String(k); got != want {
			t.Errorf("%s = %q; want %q", k, got, want)
		}
	}
	if _, ok := m.Lookup("node.format.ext4.opts"); !ok {
		t.Error("deep merge lost a base key")
	}
	if l, _ := m.Lookup("list"); len(l.([]any)) != 1 {
		t.Errorf("lists must be replaced, got %v", l)
	}
	// Inputs are untouched.
	if got, _ := base.String("node.mount.flags"); got != "x" {
		t.Error("Merge modified its base")
	}
	m["node"].(map[string]any)["mount"].(map[string]any)["flags"] = "z"
	if got, _ := over.String("node.mount.flags"); got != "y" {
		t.Error("the merged tree shares maps with its input")
	}
}

func TestExpandEnv(t *testing.T) {
	env := map[string]string{"HOST": "nas.local", "EMPTY": "", "PORT": "2049"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	tree, _ := Parse([]byte("# ${NOT_IN_A_COMMENT}\nhost: ${HOST}\nx: ${EMPTY}\nliteral: $HOST\nescaped: $${HOST}\nnested:\n  list: [\"${HOST}:${PORT}\"]\n  port: ${PORT}\n"))
	if err := ExpandEnv(tree, lookup); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"host": "nas.local", "x": "", "literal": "$HOST", "escaped": "${HOST}"}
	for k, v := range want {
		if got, _ := tree.String(k); got != v {
			t.Errorf("%s = %q; want %q", k, got, v)
		}
	}
	if l, _ := tree.Lookup("nested.list"); l.([]any)[0] != "nas.local:2049" {
		t.Errorf("list item = %v", l)
	}
	if n, _, err := tree.Int("nested.port"); err != nil || n != 2049 {
		t.Errorf("an expanded number reads as an int: %d %v", n, err)
	}
	tree, _ = Parse([]byte("a:\n  b: ${NOPE}\n"))
	err := ExpandEnv(tree, lookup)
	if err == nil || !strings.Contains(err.Error(), "a.b: environment variable NOPE is not set") {
		t.Fatalf("unset variable: %v; want an error naming key and variable", err)
	}
}

func TestLoadMainNamesTheFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "main.yaml")
	os.WriteFile(p, []byte("driver: ${SWITCHYARD_TEST_UNSET_VAR}\n"), 0o644)
	_, err := LoadMain(p)
	if err == nil || !strings.HasPrefix(err.Error(), p+": ") || !strings.Contains(err.Error(), "SWITCHYARD_TEST_UNSET_VAR") {
		t.Fatalf("LoadMain = %v; want an error naming file and variable", err)
	}
	t.Setenv("SWITCHYARD_TEST_DRIVER", "proxy")
	os.WriteFile(p, []byte("driver: ${SWITCHYARD_TEST_DRIVER}\n"), 0o644)
	tree, err := LoadMain(p)
	if d, _ := tree.String("driver"); err != nil || d != "proxy" {
		t.Fatalf("LoadMain = %v, %v", tree, err)
	}
	if _, err := LoadFile(filepath.Join(dir, "missing.yaml")); err == nil || !strings.Contains(err.Error(), "missing.yaml") {
		t.Fatalf("LoadFile of a missing file: %v", err)
	}
}

func TestProblems(t *testing.T) {
	ps := Problems{{Key: "a.b", Msg: "required"}, {File: "other.yaml", Msg: "broken"}}.InFile("main.yaml")
	if got := ps.Error(); got != "main.yaml: a.b: required\nother.yaml: broken" {
		t.Fatalf("Problems = %q", got)
	}
	if (Problems{}).Err() != nil {
		t.Fatal("empty Problems is an error")
	}
}
