package config

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"sync"

	yaml "sigs.k8s.io/yaml/goyaml.v3"
)

// Parse reads one YAML document into a Tree. YAML 1.2 rules apply, as in
// democratic-csi (js-yaml): "yes", "on" and "y" stay strings. Duplicate keys
// are an error. An empty document is an empty tree; a document whose top
// level is not a map is an error.
func Parse(data []byte) (Tree, error) {
	var v any
	if err := yaml.Unmarshal(data, &v); err != nil {
		return nil, fmt.Errorf("invalid YAML: %w", err)
	}
	if v == nil {
		return Tree{}, nil
	}
	m, ok := normalize(v).(map[string]any)
	if !ok {
		return nil, fmt.Errorf("invalid config: the top level must be a map of keys, got %T", v)
	}
	return Tree(m), nil
}

// normalize gives every map string keys, so the tree has one shape
// whatever the YAML (keys such as 1 or true become "1", "true").
func normalize(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = normalize(e)
		}
		return x
	case map[any]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[fmt.Sprint(k)] = normalize(e)
		}
		return out
	case []any:
		for i, e := range x {
			x[i] = normalize(e)
		}
		return x
	case int:
		return int64(x)
	}
	return v
}

var envRef = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\$?\$\{([A-Za-z_][A-Za-z0-9_]*)\}`) }) // compiled on first use

// ExpandEnv replaces ${NAME} in every string value of t (keys and comments
// are left alone) with what lookup returns; $${NAME} stays a literal
// ${NAME}. A reference to an unset variable is an error naming it and the
// key: silently expanding to "" would turn a forgotten variable into an
// empty password or path.
func ExpandEnv(t Tree, lookup func(string) (string, bool)) error {
	var err error
	var walk func(v any, key string) any
	walk = func(v any, key string) any {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				x[k] = walk(e, join(key, k))
			}
		case []any:
			for i, e := range x {
				x[i] = walk(e, fmt.Sprintf("%s[%d]", key, i))
			}
		case string:
			return envRef().ReplaceAllStringFunc(x, func(ref string) string {
				if ref[1] == '$' {
					return ref[1:] // $${NAME}: the literal ${NAME}
				}
				name := ref[2 : len(ref)-1]
				val, ok := lookup(name)
				if !ok && err == nil {
					err = Problem{Key: key, Msg: fmt.Sprintf("environment variable %s is not set (referenced as ${%s})", name, name)}
				}
				return val
			})
		}
		return v
	}
	walk(map[string]any(t), "")
	return err
}

func join(prefix, key string) string {
	if prefix == "" {
		return key
	}
	return prefix + "." + key
}

// LoadMain reads the main config file, expanding ${VAR} from the environment.
func LoadMain(path string) (Tree, error) {
	data, err := readFile(path)
	if err != nil {
		return nil, Problem{File: path, Msg: err.Error()}
	}
	t, err := Parse(data)
	if err != nil {
		return nil, Problem{File: path, Msg: err.Error()}
	}
	if err := ExpandEnv(t, os.LookupEnv); err != nil {
		var p Problem
		if !errors.As(err, &p) {
			p = Problem{Msg: err.Error()}
		}
		p.File = path
		return nil, p
	}
	return t, nil
}

// LoadFile reads a connection file (no environment expansion: connection
// files arrive through Kubernetes Secrets, already literal).
func LoadFile(path string) (Tree, error) {
	data, err := readFile(path)
	if err != nil {
		return nil, Problem{File: path, Msg: err.Error()}
	}
	t, err := Parse(data)
	if err != nil {
		return nil, Problem{File: path, Msg: err.Error()}
	}
	return t, nil
}
