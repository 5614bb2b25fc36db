package nodeid

import (
	"fmt"
	"regexp"
	"sync"

	"github.com/switchyard-csi/switchyard/driver/config"
)

// Settings choose the parts of node_id (reference/proxy.md, proxy.nodeId).
type Settings struct {
	NodeName, Hostname, IQN, NQN bool
	IQNPrefixes, NQNPrefixes     []Prefix
	// IQNFile and NQNFile are where the node's initiator names are read
	// (default IQNFile, NQNFile): a node plugin container may mount the
	// host's /etc elsewhere.
	IQNFile, NQNFile string
}

// Prefix shortens an IQN/NQN in node_id: Prefix is replaced by ShortName.
type Prefix struct{ ShortName, Prefix string }

// Host files with the node's initiator names.
const (
	IQNFile = "/etc/iscsi/initiatorname.iscsi"
	NQNFile = "/etc/nvme/hostnqn"
)

// ParseSettings reads proxy.nodeId from t over defaults (the proxy's:
// {NodeName: true}; a standalone backend that grants hosts access adds
// NQN), reporting every problem with its key.
func ParseSettings(t config.Tree, defaults Settings) (Settings, config.Problems) {
	n := defaults
	var ps config.Problems
	flag := func(key string, dst *bool) {
		v, set, err := t.Bool("proxy.nodeId.parts." + key)
		if err != nil {
			ps = append(ps, config.Problem{Key: "proxy.nodeId.parts." + key, Msg: "must be true or false"})
		} else if set {
			*dst = v
		}
	}
	flag("nodeName", &n.NodeName)
	flag("hostname", &n.Hostname)
	flag("iqn", &n.IQN)
	flag("nqn", &n.NQN)
	if !n.NodeName && !n.Hostname && !n.IQN && !n.NQN {
		ps = append(ps, config.Problem{Key: "proxy.nodeId.parts", Msg: "at least one part must be true: node_id cannot be empty"})
	}
	n.IQNFile, n.NQNFile = IQNFile, NQNFile
	if f, ok := t.String("proxy.nodeId.iqnFile"); ok && f != "" {
		n.IQNFile = f
	}
	if f, ok := t.String("proxy.nodeId.nqnFile"); ok && f != "" {
		n.NQNFile = f
	}
	n.IQNPrefixes, ps = parsePrefixes(t, "proxy.nodeId.iqnPrefix", ps)
	n.NQNPrefixes, ps = parsePrefixes(t, "proxy.nodeId.nqnPrefix", ps)
	return n, ps
}

var shortNameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9a-z]+$`) }) // compiled on first use

func parsePrefixes(t config.Tree, key string, ps config.Problems) ([]Prefix, config.Problems) {
	v, ok := t.Lookup(key)
	if !ok || v == nil {
		return nil, ps
	}
	list, ok := v.([]any)
	if !ok {
		return nil, append(ps, config.Problem{Key: key, Msg: "must be a list of {shortName, prefix}"})
	}
	var out []Prefix
	for i, e := range list {
		item, _ := e.(map[string]any)
		k := fmt.Sprintf("%s[%d]", key, i)
		p := Prefix{}
		p.ShortName, _ = config.Tree(item).String("shortName")
		p.Prefix, _ = config.Tree(item).String("prefix")
		if !shortNameRE().MatchString(p.ShortName) {
			ps = append(ps, config.Problem{Key: k + ".shortName", Msg: "must be lower-case letters and digits"})
			continue
		}
		if p.Prefix == "" {
			ps = append(ps, config.Problem{Key: k + ".prefix", Msg: "required"})
			continue
		}
		out = append(out, p)
	}
	return out, ps
}
