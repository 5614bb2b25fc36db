package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"regexp"

	"sigs.k8s.io/yaml"
)

// Parse reads one YAML document into a Tree. An empty document is an empty
// tree; a document whose top level is not a map is an error.
func Parse(data []byte) (Tree, error) {
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		return nil, fmt.Errorf("invalid YAML: %w", err)
	}
	if bytes.Equal(bytes.TrimSpace(js), []byte("null")) {
		return Tree{}, nil
	}
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("invalid YAML: %w", err)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("invalid config: the top level must be a map of keys, got %T", v)
	}
	return Tree(m), nil
}

var envRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// ExpandEnv replaces ${NAME} with the value lookup returns. A reference to
// an unset variable is an error naming it: silently expanding to "" would
// turn a forgotten variable into an empty password or path.
func ExpandEnv(data []byte, lookup func(string) (string, bool)) ([]byte, error) {
	var missing []string
	out := envRef.ReplaceAllFunc(data, func(ref []byte) []byte {
		name := string(envRef.FindSubmatch(ref)[1])
		v, ok := lookup(name)
		if !ok {
			missing = append(missing, name)
			return ref
		}
		return []byte(v)
	})
	if len(missing) > 0 {
		return nil, fmt.Errorf("environment variable %s is not set (referenced as ${%s})", missing[0], missing[0])
	}
	return out, nil
}

// LoadMain reads the main config file, expanding ${VAR} from the environment.
func LoadMain(path string) (Tree, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, Problem{File: path, Msg: err.Error()}
	}
	data, err = ExpandEnv(data, os.LookupEnv)
	if err != nil {
		return nil, Problem{File: path, Msg: err.Error()}
	}
	t, err := Parse(data)
	if err != nil {
		return nil, Problem{File: path, Msg: err.Error()}
	}
	return t, nil
}

// LoadFile reads a connection file (no environment expansion: connection
// files arrive through Kubernetes Secrets, already literal).
func LoadFile(path string) (Tree, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, Problem{File: path, Msg: err.Error()}
	}
	t, err := Parse(data)
	if err != nil {
		return nil, Problem{File: path, Msg: err.Error()}
	}
	return t, nil
}
