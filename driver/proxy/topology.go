package proxy

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"

	"github.com/switchyard-csi/switchyard/driver/config"
)

// TopologyEntry is one `proxy.perDriver.topology` item of a connection:
// the (short-keyed) segments it serves and extra labels for volumes.
type TopologyEntry struct {
	Requirements map[string]string
	Extra        map[string]string
}

func parsePerDriverTopology(t config.Tree) ([]TopologyEntry, config.Problems) {
	const key = "proxy.perDriver.topology"
	v, ok := t.Lookup(key)
	if !ok || v == nil {
		return nil, nil
	}
	list, isList := v.([]any)
	if !isList {
		return nil, config.Problems{{Key: key, Msg: "must be a list of {requirements, extra}"}}
	}
	var out []TopologyEntry
	var ps config.Problems
	for i, e := range list {
		item := config.Tree(asMap(e))
		k := fmt.Sprintf("%s[%d]", key, i)
		req, p1 := stringMap(item, "requirements", k)
		extra, p2 := stringMap(item, "extra", k)
		ps = append(ps, p1...)
		ps = append(ps, p2...)
		if len(req) == 0 && len(p1) == 0 {
			// Without requirements the entry would serve every zone: a
			// forgotten key, never what a topology entry means.
			ps = append(ps, config.Problem{Key: k + ".requirements", Msg: "is required: the topology segment (e.g. zone: a) this connection's volumes are reachable in"})
		}
		for rk := range req {
			if strings.Contains(rk, "/") {
				ps = append(ps, config.Problem{Key: k + ".requirements." + rk, Msg: "use the short key (without prefix): the proxy adds nodeTopology.prefix"})
			}
		}
		out = append(out, TopologyEntry{Requirements: req, Extra: extra})
	}
	return out, ps
}

func stringMap(t config.Tree, key, at string) (map[string]string, config.Problems) {
	v, ok := t.Lookup(key)
	if !ok || v == nil {
		return nil, nil
	}
	m, isMap := v.(map[string]any)
	if !isMap {
		return nil, config.Problems{{Key: at + "." + key, Msg: "must be a map of key: value"}}
	}
	out := make(map[string]string, len(m))
	var ps config.Problems
	for k, val := range m {
		// The value itself, not Tree.String(k): keys such as
		// topology.kubernetes.io/zone hold dots, which a path lookup would
		// split into nested maps and find nothing.
		switch x := val.(type) {
		case string:
			out[k] = x
		case bool, int, int64, uint64, float64:
			out[k] = fmt.Sprint(x)
		default:
			ps = append(ps, config.Problem{Key: at + "." + key + "." + k, Msg: "must be a string"})
		}
	}
	return out, ps
}

// segments returns the full topology segments of an entry: prefixed
// requirements plus extra labels as they are.
func (e TopologyEntry) segments(prefix string) map[string]string {
	out := make(map[string]string, len(e.Requirements)+len(e.Extra))
	for k, v := range e.Requirements {
		out[prefix+"/"+k] = v
	}
	maps.Copy(out, e.Extra)
	return out
}

// satisfies reports whether the entry serves a CSI topology term. Term keys
// the entry does not mention are ignored (they belong to other drivers or
// describe the node, not the storage).
func (e TopologyEntry) satisfies(prefix string, term map[string]string) bool {
	for k, v := range term {
		short, ok := strings.CutPrefix(k, prefix+"/")
		if !ok {
			continue
		}
		if want, has := e.Requirements[short]; has && want != v {
			return false
		}
	}
	return true
}

// checkTopology decides whether a connection with perDriver topology can
// make a volume for the request, and returns the accessible topology to
// report. A request without requirements always passes (mode 1 of the
// three StorageClass modes). At least one requisite term must be served
// (the CSI meaning of requisite); preferred terms order the result.
func checkTopology(conn, prefix string, entries []TopologyEntry, req *csipb.TopologyRequirement) ([]*csipb.Topology, error) {
	all := func(es []TopologyEntry) []*csipb.Topology {
		out := make([]*csipb.Topology, 0, len(es))
		for _, e := range es {
			out = append(out, &csipb.Topology{Segments: e.segments(prefix)})
		}
		return out
	}
	terms := append(slices.Clone(req.GetPreferred()), req.GetRequisite()...)
	for _, t := range terms {
		for k := range t.GetSegments() {
			if !strings.HasPrefix(k, prefix+"/") && !hasExtraKey(entries, k) {
				return nil, fmt.Errorf("connection %s: topology key %q does not carry the prefix %q of proxy.nodeTopology.prefix", conn, k, prefix)
			}
		}
	}
	if len(req.GetRequisite()) == 0 && len(req.GetPreferred()) == 0 {
		return all(entries), nil
	}
	servedBy := func(t *csipb.Topology) []TopologyEntry {
		var out []TopologyEntry
		for _, e := range entries {
			if e.satisfies(prefix, t.GetSegments()) {
				out = append(out, e)
			}
		}
		return out
	}
	ok := len(req.GetRequisite()) == 0
	for _, t := range req.GetRequisite() {
		if len(servedBy(t)) > 0 {
			ok = true
			break
		}
	}
	if !ok {
		return nil, fmt.Errorf("connection %s serves none of the requested topologies %s (its proxy.perDriver.topology: %s)", conn, describeTerms(req.GetRequisite()), describeEntries(entries))
	}
	// Put the entries matching the first satisfiable preferred term first.
	ordered := entries
	for _, t := range req.GetPreferred() {
		if first := servedBy(t); len(first) > 0 {
			ordered = append(slices.Clone(first), slices.DeleteFunc(slices.Clone(entries), func(e TopologyEntry) bool {
				return slices.ContainsFunc(first, func(f TopologyEntry) bool {
					return maps.Equal(f.Requirements, e.Requirements) && maps.Equal(f.Extra, e.Extra)
				})
			})...)
			break
		}
	}
	return all(ordered), nil
}

func hasExtraKey(entries []TopologyEntry, k string) bool {
	for _, e := range entries {
		if _, ok := e.Extra[k]; ok {
			return true
		}
	}
	return false
}

func describeTerms(ts []*csipb.Topology) string {
	parts := make([]string, 0, len(ts))
	for _, t := range ts {
		parts = append(parts, fmt.Sprint(t.GetSegments()))
	}
	return "[" + strings.Join(parts, " ") + "]"
}

func describeEntries(es []TopologyEntry) string {
	parts := make([]string, 0, len(es))
	for _, e := range es {
		parts = append(parts, fmt.Sprint(e.Requirements))
	}
	return "[" + strings.Join(parts, " ") + "]"
}
