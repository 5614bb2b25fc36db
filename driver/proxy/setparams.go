package proxy

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/switchyard-csi/switchyard/driver/config"
)

// StorageClass parameters naming a connection set (docs/proxy.md,
// "Connection sets"). ConnectionParameter names a single connection.
const (
	// ConnectionsParameter lists the members: "nas-a,nas-b". The order is
	// the last tie-break of the choice, so it is the admin's preference.
	ConnectionsParameter = "connections"
	// SelectorParameter selects members by the labels their files declare
	// under proxy.labels: "tier=fast,site!=old,zone" (all must hold).
	SelectorParameter = "connectionSelector"
)

// setSpec is the set a request names: explicit members or a selector.
type setSpec struct {
	members  []string   // from ConnectionsParameter, in the order written
	selector []labelReq // from SelectorParameter
	key      string     // the parameter it came from, for messages
	raw      string     // the parameter's value, for messages
}

// labelReq is one term of a selector: key=value, key!=value or key (exists).
type labelReq struct {
	key, value string
	op         string // "=", "!=", "exists"
}

func (r labelReq) matches(labels map[string]string) bool {
	v, has := labels[r.key]
	switch r.op {
	case "=":
		return has && v == r.value
	case "!=":
		return !has || v != r.value
	default:
		return has
	}
}

func (r labelReq) String() string {
	if r.op == "exists" {
		return r.key
	}
	return r.key + r.op + r.value
}

// parseSetSpec reads the set parameters. ok is false when the request
// names no set (the single-connection path then runs unchanged).
func parseSetSpec(params map[string]string) (spec setSpec, ok bool, err error) {
	list, hasList := params[ConnectionsParameter]
	sel, hasSel := params[SelectorParameter]
	if !hasList && !hasSel {
		return setSpec{}, false, nil
	}
	if c := params[ConnectionParameter]; c != "" {
		return setSpec{}, true, fmt.Errorf("parameters %s and %s both given: use %s for one connection, %s for a set", ConnectionParameter, setKeyOf(hasList), ConnectionParameter, setKeyOf(hasList))
	}
	if hasList && hasSel {
		return setSpec{}, true, fmt.Errorf("parameters %s and %s both given: name the members or select them by label, not both", ConnectionsParameter, SelectorParameter)
	}
	if hasList {
		spec = setSpec{key: ConnectionsParameter, raw: list}
		for _, part := range strings.Split(list, ",") {
			name := strings.TrimSpace(part)
			if name == "" {
				return setSpec{}, true, fmt.Errorf("parameter %s %q: an empty member (write nas-a,nas-b)", ConnectionsParameter, list)
			}
			if err := CheckConnectionName(name); err != nil {
				return setSpec{}, true, fmt.Errorf("parameter %s: %v", ConnectionsParameter, err)
			}
			if slices.Contains(spec.members, name) {
				return setSpec{}, true, fmt.Errorf("parameter %s %q names connection %s twice", ConnectionsParameter, list, name)
			}
			spec.members = append(spec.members, name)
		}
		return spec, true, nil
	}
	reqs, err := parseSelector(sel)
	if err != nil {
		return setSpec{}, true, fmt.Errorf("parameter %s: %v", SelectorParameter, err)
	}
	return setSpec{selector: reqs, key: SelectorParameter, raw: sel}, true, nil
}

func setKeyOf(list bool) string {
	if list {
		return ConnectionsParameter
	}
	return SelectorParameter
}

// labelWord is the alphabet of label keys and values: Kubernetes label
// syntax, so the same words read the same in both places. Compiled on
// first use: the bounded repetition makes it the costliest expression in
// the binary (~0.7 ms and 800 allocations at every start-up otherwise).
var labelWord = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9._/-]{0,251}[A-Za-z0-9])?$`)
})

func parseSelector(sel string) ([]labelReq, error) {
	if strings.TrimSpace(sel) == "" {
		return nil, fmt.Errorf("is empty: write key=value terms, e.g. tier=fast,zone!=old")
	}
	var out []labelReq
	for _, part := range strings.Split(sel, ",") {
		term := strings.TrimSpace(part)
		var r labelReq
		switch {
		case strings.Contains(term, "!="):
			k, v, _ := strings.Cut(term, "!=")
			r = labelReq{key: strings.TrimSpace(k), value: strings.TrimSpace(v), op: "!="}
		case strings.Contains(term, "="):
			k, v, _ := strings.Cut(term, "=")
			r = labelReq{key: strings.TrimSpace(k), value: strings.TrimSpace(strings.TrimPrefix(v, "=")), op: "="}
		default:
			r = labelReq{key: term, op: "exists"}
		}
		if !labelWord().MatchString(r.key) {
			return nil, fmt.Errorf("term %q: %q is not a label key (letters, digits, '.', '_', '-', '/')", term, r.key)
		}
		if r.op != "exists" && r.value != "" && !labelWord().MatchString(r.value) {
			return nil, fmt.Errorf("term %q: %q is not a label value", term, r.value)
		}
		out = append(out, r)
	}
	return out, nil
}

func selects(reqs []labelReq, labels map[string]string) bool {
	for _, r := range reqs {
		if !r.matches(labels) {
			return false
		}
	}
	return true
}

// parseLabels reads proxy.labels of a connection file: a flat map of
// strings that connectionSelector terms match.
func parseLabels(t config.Tree) (map[string]string, config.Problems) {
	const key = "proxy.labels"
	v, ok := t.Lookup(key)
	if !ok || v == nil {
		return nil, nil
	}
	m, isMap := v.(map[string]any)
	if !isMap {
		return nil, config.Problems{{Key: key, Msg: "must be a map of label: value (e.g. tier: fast)"}}
	}
	out := make(map[string]string, len(m))
	var ps config.Problems
	for k, val := range m {
		s := fmt.Sprint(val)
		switch val.(type) {
		case string, bool, int, int64, uint64, float64:
		default:
			ps = append(ps, config.Problem{Key: key + "." + k, Msg: "must be a string"})
			continue
		}
		if !labelWord().MatchString(k) {
			ps = append(ps, config.Problem{Key: key + "." + k, Msg: "is not a label key: letters, digits, '.', '_', '-', '/', starting and ending with a letter or digit"})
		}
		if s != "" && !labelWord().MatchString(s) {
			ps = append(ps, config.Problem{Key: key + "." + k, Msg: fmt.Sprintf("value %q is not a label value: letters, digits, '.', '_', '-'", s)})
		}
		out[k] = s
	}
	slices.SortFunc(ps, func(a, b config.Problem) int { return strings.Compare(a.Key, b.Key) })
	return out, ps
}
