// Package census is what each simulated TrueNAS release really has, derived
// from the middleware's own source at a release tag by gen_census.py (make
// truenas-census): every public method with its job flag and parameter
// names and, where the release describes the method with an API model
// (25.04 and later, namespace by namespace), the fields its first object
// argument accepts and the fields its entries return. The simulator's
// tests hold its methods against these tables.
package census

import (
	"embed"
	"encoding/json"
	"fmt"
	"sort"
)

//go:embed *.json
var digests embed.FS

// Source names the middleware tree a digest was derived from.
type Source struct {
	Repo   string `json:"repo"`
	Tag    string `json:"tag"`
	Commit string `json:"commit"`
	API    string `json:"api"` // api/<dir> of the models ("-": none, legacy schema)
}

// Method is one public method of a release.
type Method struct {
	Job    bool     `json:"job"`
	Params []string `json:"params"`
	// Fields are the fields of the first object argument (Params[FieldsParam])
	// with whether each is required; nil where the release has no model.
	Fields      map[string]bool `json:"fields"`
	FieldsParam int             `json:"fields_param"`
	// Returns are the fields of the entries the method returns (query,
	// create, update, get_instance) with whether each is always there
	// (false: NotRequired, or an entry model made of optional fields);
	// empty where the model says nothing.
	Returns map[string]bool `json:"returns"`
}

// Census is one release's digest.
type Census struct {
	Source  Source            `json:"source"`
	Methods map[string]Method `json:"methods"`
}

// Load reads the digest of a release ("24.10", "25.04", "25.10", "26.04").
func Load(release string) (*Census, error) {
	data, err := digests.ReadFile(release + ".json")
	if err != nil {
		return nil, fmt.Errorf("census: no digest for TrueNAS %s", release)
	}
	var c Census
	if err := json.Unmarshal(data, &c); err != nil {
		return nil, fmt.Errorf("census: %s.json: %w", release, err)
	}
	return &c, nil
}

// Names lists the methods, sorted.
func (c *Census) Names() []string {
	out := make([]string, 0, len(c.Methods))
	for n := range c.Methods {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// HasService reports whether the release has any public method in
// service ns (e.g. "pool.dataset").
func (c *Census) HasService(ns string) bool {
	for n := range c.Methods {
		if len(n) > len(ns) && n[:len(ns)] == ns && n[len(ns)] == '.' {
			return true
		}
	}
	return false
}
