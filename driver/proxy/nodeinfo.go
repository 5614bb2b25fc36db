package proxy

import (
	"bufio"
	"bytes"
	"cmp"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
)

// MaxNodeIDLen is CSI's limit for node_id.
const MaxNodeIDLen = 256

// NodeFacts are the facts about a node that node_id and topology use. The
// zero value reads them from the host.
type NodeFacts struct {
	NodeName string // CSI_NODE_ID
	Hostname func() (string, error)
	ReadFile func(path string) ([]byte, error)
	Getenv   func(string) string
}

func (f NodeFacts) withDefaults() NodeFacts {
	if f.Hostname == nil {
		f.Hostname = os.Hostname
	}
	if f.ReadFile == nil {
		f.ReadFile = os.ReadFile
	}
	if f.Getenv == nil {
		f.Getenv = os.Getenv
	}
	return f
}

// Host files with the node's initiator names.
const (
	IQNFile = "/etc/iscsi/initiatorname.iscsi"
	NQNFile = "/etc/nvme/hostnqn"
)

// NodeID builds node_id from the configured parts:
// n=<node name>/h=<hostname>/i<short>=<iqn suffix>/v<short>=<nqn suffix>.
func NodeID(s NodeIDSettings, f NodeFacts) (string, error) {
	f = f.withDefaults()
	var parts []string
	if s.NodeName {
		if f.NodeName == "" {
			return "", fmt.Errorf("CSI_NODE_ID is not set: the proxy needs the Kubernetes node name (set env CSI_NODE_ID from spec.nodeName)")
		}
		parts = append(parts, "n="+f.NodeName)
	}
	if s.Hostname {
		h, err := f.Hostname()
		if err != nil {
			return "", fmt.Errorf("node id part hostname: %w", err)
		}
		parts = append(parts, "h="+h)
	}
	if s.IQN {
		data, err := f.ReadFile(cmp.Or(s.IQNFile, IQNFile))
		if err != nil {
			return "", fmt.Errorf("node id part iqn: %w", err)
		}
		iqn := parseInitiatorName(data)
		if iqn == "" {
			return "", fmt.Errorf("node id part iqn: no InitiatorName= line in %s", cmp.Or(s.IQNFile, IQNFile))
		}
		p, err := shorten("i", iqn, s.IQNPrefixes, "proxy.nodeId.iqnPrefix")
		if err != nil {
			return "", err
		}
		parts = append(parts, p)
	}
	if s.NQN {
		data, err := f.ReadFile(cmp.Or(s.NQNFile, NQNFile))
		if err != nil {
			return "", fmt.Errorf("node id part nqn: %w", err)
		}
		p, err := shorten("v", strings.TrimSpace(string(data)), s.NQNPrefixes, "proxy.nodeId.nqnPrefix")
		if err != nil {
			return "", err
		}
		parts = append(parts, p)
	}
	id := strings.Join(parts, "/")
	if id == "" {
		return "", fmt.Errorf("node id is empty: enable at least one of proxy.nodeId.parts")
	}
	if len(id) > MaxNodeIDLen {
		return "", fmt.Errorf("node id %q is %d bytes; CSI allows %d: disable parts or add iqnPrefix/nqnPrefix short names", id, len(id), MaxNodeIDLen)
	}
	return id, nil
}

func parseInitiatorName(data []byte) string {
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := sc.Text()
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "InitiatorName="); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

func shorten(code, value string, prefixes []IDPrefix, key string) (string, error) {
	for _, p := range prefixes {
		if suffix, ok := strings.CutPrefix(value, p.Prefix); ok {
			return code + p.ShortName + "=" + suffix, nil
		}
	}
	// No prefix matches: the whole name, with an empty short name
	// (short names are never empty, so this cannot be misread). The
	// length check on the whole id still applies.
	if strings.ContainsAny(value, "/=") {
		return "", fmt.Errorf("node id: %q contains '/' or '='; add a prefix to %s so only a plain suffix is kept", value, key)
	}
	return code + "=" + value, nil
}

// NodeIDParts is a node_id read back: what a controller-side call can learn.
type NodeIDParts struct {
	NodeName, Hostname, IQN, NQN string
}

// ParseNodeID reverses NodeID using the same prefix tables.
func ParseNodeID(s NodeIDSettings, id string) (NodeIDParts, error) {
	var out NodeIDParts
	for _, part := range strings.Split(id, "/") {
		key, val, ok := strings.Cut(part, "=")
		if !ok || key == "" {
			return out, fmt.Errorf("node id %q: part %q is not <code>=<value>", id, part)
		}
		var err error
		switch key[0] {
		case 'n':
			out.NodeName = val
		case 'h':
			out.Hostname = val
		case 'i':
			out.IQN, err = expand(key[1:], val, s.IQNPrefixes, "proxy.nodeId.iqnPrefix")
		case 'v':
			out.NQN, err = expand(key[1:], val, s.NQNPrefixes, "proxy.nodeId.nqnPrefix")
		default:
			err = fmt.Errorf("node id %q: unknown part code %q", id, key)
		}
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

func expand(short, suffix string, prefixes []IDPrefix, key string) (string, error) {
	if short == "" {
		return suffix, nil // the whole name (see shorten)
	}
	for _, p := range prefixes {
		if p.ShortName == short {
			return p.Prefix + suffix, nil
		}
	}
	return "", fmt.Errorf("node id names prefix %q, which %s does not define", short, key)
}

// NodeTopology is the accessible topology a node reports.
func NodeTopology(t TopologySettings, f NodeFacts, log *slog.Logger) (map[string]string, error) {
	f = f.withDefaults()
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

func ruleInput(r TopologyRule, f NodeFacts) (string, error) {
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
func NodeInfo(s *Settings, f NodeFacts, log *slog.Logger) (*csipb.NodeGetInfoResponse, error) {
	id, err := NodeID(s.NodeID, f)
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
