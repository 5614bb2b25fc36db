package proxy

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/switchyard-csi/switchyard/driver/backend"
	"github.com/switchyard-csi/switchyard/driver/config"
)

// DefaultTopologyPrefix is democratic-csi's topology key prefix.
const DefaultTopologyPrefix = backend.DefaultTopologyPrefix

// Settings is the `proxy:` section of the main config.
type Settings struct {
	ConfigFolder string
	// CacheTimeout closes a real driver idle for this long; 0 keeps it
	// forever. NoCache builds a new driver for every call.
	CacheTimeout      time.Duration
	NoCache           bool
	DefaultConnection string
	NodeID            NodeIDSettings
	Topology          TopologySettings
}

// NodeIDSettings choose the parts of node_id (docs/proxy.md, "Node id").
type NodeIDSettings struct {
	NodeName, Hostname, IQN, NQN bool
	IQNPrefixes, NQNPrefixes     []IDPrefix
	// IQNFile and NQNFile are where the node's initiator names are read
	// (default IQNFile, NQNFile): a node plugin container may mount the
	// host's /etc elsewhere.
	IQNFile, NQNFile string
}

// IDPrefix shortens an IQN/NQN in node_id: Prefix is replaced by ShortName.
type IDPrefix struct{ ShortName, Prefix string }

// Topology types.
const (
	TopologyCluster = "cluster"
	TopologyNode    = "node"
	TopologyZone    = "zone"
)

// TopologySettings say what topology a node reports.
type TopologySettings struct {
	Type   string
	Prefix string
	Rules  []TopologyRule
}

// TopologyRule derives one topology key from a node fact.
type TopologyRule struct {
	Key      string // short key; the prefix is added
	Source   string // nodeName | hostname | env | file
	EnvName  string
	File     string
	Regex    *regexp.Regexp // anchored
	Template string         // "{match:N}" references capture groups
}

// ParseSettings reads the proxy section of a main config, reporting every
// problem with its key.
func ParseSettings(t config.Tree) (Settings, config.Problems) {
	var ps config.Problems
	bad := func(key, format string, a ...any) {
		ps = append(ps, config.Problem{Key: key, Msg: fmt.Sprintf(format, a...)})
	}
	s := Settings{CacheTimeout: 60 * time.Minute}
	if t.Sub("proxy") == nil {
		bad("proxy", "required for driver: proxy (at least proxy.configFolder)")
		return s, ps
	}
	s.ConfigFolder, _ = t.String("proxy.configFolder")
	if s.ConfigFolder == "" {
		bad("proxy.configFolder", "required: the folder holding the <connection>.yaml files")
	}
	switch n, set, err := t.Int("proxy.cacheTimeoutMinutes"); {
	case err != nil:
		bad("proxy.cacheTimeoutMinutes", "must be an integer number of minutes (0 = keep forever, -1 = no cache)")
	case !set:
	case n == -1:
		s.NoCache, s.CacheTimeout = true, 0
	case n < -1:
		bad("proxy.cacheTimeoutMinutes", "must be -1 (no cache), 0 (keep forever) or a positive number of minutes, got %d", n)
	default:
		s.CacheTimeout = time.Duration(n) * time.Minute
	}
	if d, _ := t.String("proxy.defaultConnection"); d != "" {
		if err := CheckConnectionName(d); err != nil {
			bad("proxy.defaultConnection", "%v", err)
		}
		s.DefaultConnection = d
	}
	s.NodeID, ps = parseNodeID(t, ps)
	s.Topology, ps = parseTopology(t, ps)
	return s, ps
}

// ParseNodeIDSettings reads proxy.nodeId from t over defaults; standalone
// drivers that grant hosts access use it too.
func ParseNodeIDSettings(t config.Tree, defaults NodeIDSettings) (NodeIDSettings, config.Problems) {
	return parseNodeIDOver(t, defaults, nil)
}

func parseNodeID(t config.Tree, ps config.Problems) (NodeIDSettings, config.Problems) {
	return parseNodeIDOver(t, NodeIDSettings{NodeName: true}, ps)
}

func parseNodeIDOver(t config.Tree, n NodeIDSettings, ps config.Problems) (NodeIDSettings, config.Problems) {
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

var shortNameRE = regexp.MustCompile(`^[0-9a-z]+$`)

func parsePrefixes(t config.Tree, key string, ps config.Problems) ([]IDPrefix, config.Problems) {
	v, ok := t.Lookup(key)
	if !ok || v == nil {
		return nil, ps
	}
	list, ok := v.([]any)
	if !ok {
		return nil, append(ps, config.Problem{Key: key, Msg: "must be a list of {shortName, prefix}"})
	}
	var out []IDPrefix
	for i, e := range list {
		item, _ := e.(map[string]any)
		k := fmt.Sprintf("%s[%d]", key, i)
		p := IDPrefix{}
		p.ShortName, _ = config.Tree(item).String("shortName")
		p.Prefix, _ = config.Tree(item).String("prefix")
		if !shortNameRE.MatchString(p.ShortName) {
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

func parseTopology(t config.Tree, ps config.Problems) (TopologySettings, config.Problems) {
	ts := TopologySettings{Type: TopologyCluster, Prefix: DefaultTopologyPrefix}
	if v, _ := t.String("proxy.nodeTopology.type"); v != "" {
		ts.Type = v
	}
	if ts.Type == "custom" { // upstream's example spelling
		ts.Type = TopologyZone
	}
	switch ts.Type {
	case TopologyCluster, TopologyNode, TopologyZone:
	default:
		ps = append(ps, config.Problem{Key: "proxy.nodeTopology.type", Msg: fmt.Sprintf("unknown type %q; use cluster, node or zone", ts.Type)})
	}
	if v, _ := t.String("proxy.nodeTopology.prefix"); v != "" {
		ts.Prefix = v
	}
	key := "proxy.nodeTopology.fromRegexp"
	v, ok := t.Lookup(key)
	if !ok || v == nil {
		key = "proxy.nodeTopology.customRules"
		v, ok = t.Lookup(key)
	}
	if !ok || v == nil {
		if ts.Type == TopologyZone {
			ps = append(ps, config.Problem{Key: "proxy.nodeTopology.fromRegexp", Msg: "type zone needs at least one rule"})
		}
		return ts, ps
	}
	list, isList := v.([]any)
	if !isList {
		return ts, append(ps, config.Problem{Key: key, Msg: "must be a list of rules"})
	}
	for i, e := range list {
		r, p := parseRule(config.Tree(asMap(e)), fmt.Sprintf("%s[%d]", key, i))
		ps = append(ps, p...)
		if len(p) == 0 {
			ts.Rules = append(ts.Rules, r)
		}
	}
	return ts, ps
}

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

// parseRule reads one rule in either spelling: fromRegexp (topologyKey,
// regex, template) or upstream's customRules (keySuffix, matchRegexp,
// resultTemplate with "${match:N}").
func parseRule(t config.Tree, key string) (TopologyRule, config.Problems) {
	var ps config.Problems
	first := func(keys ...string) string {
		for _, k := range keys {
			if v, ok := t.String(k); ok && v != "" {
				return v
			}
		}
		return ""
	}
	r := TopologyRule{
		Key:      first("topologyKey", "keySuffix"),
		Source:   first("source"),
		EnvName:  first("envName"),
		File:     first("file"),
		Template: strings.ReplaceAll(first("template", "resultTemplate"), "${match:", "{match:"),
	}
	if r.Key == "" {
		ps = append(ps, config.Problem{Key: key + ".topologyKey", Msg: "required"})
	}
	if r.Source == "" {
		r.Source = "nodeName"
	}
	switch r.Source {
	case "nodeName", "hostname":
	case "env":
		if r.EnvName == "" {
			ps = append(ps, config.Problem{Key: key + ".envName", Msg: "required when source is env"})
		}
	case "file":
		if r.File == "" {
			ps = append(ps, config.Problem{Key: key + ".file", Msg: "required when source is file"})
		}
	default:
		ps = append(ps, config.Problem{Key: key + ".source", Msg: fmt.Sprintf("unknown source %q; use nodeName, hostname, env or file", r.Source)})
	}
	expr := first("regex", "matchRegexp")
	if expr == "" {
		expr = ".*"
	}
	re, err := regexp.Compile("^(?:" + expr + ")$")
	if err != nil {
		ps = append(ps, config.Problem{Key: key + ".regex", Msg: fmt.Sprintf("invalid regular expression: %v", err)})
	}
	r.Regex = re
	if r.Template == "" {
		r.Template = "{match:0}"
	}
	return r, ps
}
