// Package nodeid builds a node's CSI node_id from its parts and reads one
// back: `/`-joined `n=<CSI_NODE_ID>`, `h=<hostname>`, `i<short>=<iqn
// suffix>` (from /etc/iscsi/initiatorname.iscsi), `v<short>=<nqn suffix>`
// (from /etc/nvme/hostnqn), at most 256 bytes (reference/proxy.md). The
// proxy and standalone mode both build their node ids here.
package nodeid

import (
	"bufio"
	"bytes"
	"cmp"
	"fmt"
	"strings"

	"github.com/switchyard-csi/switchyard/driver/backend"
)

// MaxLen is CSI's limit for node_id.
const MaxLen = 256

// Build builds node_id from the parts s enables:
// n=<node name>/h=<hostname>/i<short>=<iqn suffix>/v<short>=<nqn suffix>.
func Build(s Settings, f Facts) (string, error) {
	f = f.WithDefaults()
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
		file := cmp.Or(s.IQNFile, IQNFile)
		data, err := f.ReadFile(file)
		if err != nil {
			return "", fmt.Errorf("node id part iqn: %w", err)
		}
		iqn := parseInitiatorName(data)
		if iqn == "" {
			return "", fmt.Errorf("node id part iqn: no InitiatorName= line in %s", file)
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
	// '/' separates the parts: a value holding one would not read back.
	for _, p := range parts {
		if _, v, _ := strings.Cut(p, "="); strings.Contains(v, "/") {
			return "", fmt.Errorf("node id part %.80q contains '/', which separates node id parts; disable that part or, for an IQN or NQN, add a prefix that covers the '/'", p)
		}
	}
	id := strings.Join(parts, "/")
	if id == "" {
		return "", fmt.Errorf("node id is empty: enable at least one of proxy.nodeId.parts")
	}
	if len(id) > MaxLen {
		return "", fmt.Errorf("node id %q is %d bytes; CSI allows %d: disable parts or add iqnPrefix/nqnPrefix short names", id, len(id), MaxLen)
	}
	return id, nil
}

// Standalone is the node_id of a node running one backend on its own, and
// the node name it stands for: CSI_NODE_ID, else the hostname (like
// democratic-csi). The id is the plain node name unless hostAccess (a
// backend that grants each node's NVMe host NQN at
// ControllerPublishVolume, backend.Type.HostNQN): then it is built from s
// with that name, so the controller can read the NQN back (Parse).
func Standalone(s Settings, f Facts, hostAccess bool) (id, nodeName string, err error) {
	f = f.WithDefaults()
	if f.NodeName == "" {
		h, err := f.Hostname()
		if err != nil {
			return "", "", fmt.Errorf("CSI_NODE_ID is not set and the hostname is unknown: %w", err)
		}
		f.NodeName = h
	}
	if !hostAccess {
		return f.NodeName, f.NodeName, nil
	}
	id, err = Build(s, f)
	return id, f.NodeName, err
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

func shorten(code, value string, prefixes []Prefix, key string) (string, error) {
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

// Parse reverses Build using the same prefix tables: what a controller-side
// call can learn about a node from its node_id.
func Parse(s Settings, id string) (backend.NodeIdentity, error) {
	var out backend.NodeIdentity
	for _, part := range strings.Split(id, "/") {
		key, val, ok := strings.Cut(part, "=")
		if !ok || key == "" {
			return out, fmt.Errorf("node id %q: part %q is not <code>=<value>", id, part)
		}
		var err error
		switch key[0] {
		case 'n':
			out.Name = val
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

// Parser is Parse bound to s, the shape backend.Options.ParseNodeID wants.
func Parser(s Settings) func(string) (backend.NodeIdentity, error) {
	return func(id string) (backend.NodeIdentity, error) { return Parse(s, id) }
}

func expand(short, suffix string, prefixes []Prefix, key string) (string, error) {
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
