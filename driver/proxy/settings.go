package proxy

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/switchyard-csi/switchyard/driver/backend"
	"github.com/switchyard-csi/switchyard/driver/config"
	"github.com/switchyard-csi/switchyard/driver/nodeid"
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
	NodeID            nodeid.Settings
	Topology          TopologySettings
}

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
	var nps config.Problems
	s.NodeID, nps = nodeid.ParseSettings(t, nodeid.Settings{NodeName: true})
	ps = append(ps, nps...)
	s.Topology, ps = parseTopology(t, ps)
	return s, ps
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
