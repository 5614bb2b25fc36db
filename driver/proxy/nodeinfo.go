package proxy

import (
	"fmt"
	"log/slog"
	"strconv"
	"strings"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"

	"github.com/switchyard-csi/switchyard/driver/nodeid"
)

// NodeTopology is the accessible topology a node reports.
func NodeTopology(t TopologySettings, f nodeid.Facts, log *slog.Logger) (map[string]string, error) {
	f = f.WithDefaults()
	switch t.Type {
	case TopologyCluster:
		return map[string]string{t.Prefix + "/cluster": "local"}, nil
	case TopologyNode:
		if f.NodeName == "" {
			return nil, fmt.Errorf("nodeTopology type node needs CSI_NODE_ID")
		}
		return map[string]string{t.Prefix + "/node": f.NodeName}, nil
	}
	out := map[string]string{}
	for _, r := range t.Rules {
		in, err := ruleInput(r, f)
		if err != nil {
			return nil, err
		}
		m := r.Regex.FindStringSubmatch(in)
		if m == nil || in == "" {
			continue // a rule that does not match (or has no input: an unset env) is skipped
		}
		out[t.Prefix+"/"+r.Key] = expandTemplate(r.Template, m)
	}
	if len(out) == 0 && log != nil {
		log.Warn("no nodeTopology rule matches this node; it reports no zone", "node", f.NodeName)
	}
	return out, nil
}

func ruleInput(r TopologyRule, f nodeid.Facts) (string, error) {
	switch r.Source {
	case "hostname":
		return f.Hostname()
	case "env":
		return f.Getenv(r.EnvName), nil
	case "file":
		data, err := f.ReadFile(r.File)
		if err != nil {
			return "", fmt.Errorf("nodeTopology rule %s: %w", r.Key, err)
		}
		return strings.TrimSpace(string(data)), nil
	}
	return f.NodeName, nil
}

// expandTemplate replaces {match:N} with capture group N.
func expandTemplate(tpl string, m []string) string {
	var b strings.Builder
	for {
		i := strings.Index(tpl, "{match:")
		if i < 0 {
			b.WriteString(tpl)
			return b.String()
		}
		j := strings.IndexByte(tpl[i:], '}')
		if j < 0 {
			b.WriteString(tpl)
			return b.String()
		}
		b.WriteString(tpl[:i])
		if n, err := strconv.Atoi(tpl[i+len("{match:") : i+j]); err == nil && n >= 0 && n < len(m) {
			b.WriteString(m[n])
		}
		tpl = tpl[i+j+1:]
	}
}

// NodeInfo builds the NodeGetInfo answer of a proxy node.
func NodeInfo(s *Settings, f nodeid.Facts, log *slog.Logger) (*csipb.NodeGetInfoResponse, error) {
	id, err := nodeid.Build(s.NodeID, f)
	if err != nil {
		return nil, err
	}
	topo, err := NodeTopology(s.Topology, f, log)
	if err != nil {
		return nil, err
	}
	resp := &csipb.NodeGetInfoResponse{NodeId: id}
	if len(topo) > 0 {
		resp.AccessibleTopology = &csipb.Topology{Segments: topo}
	}
	return resp, nil
}
