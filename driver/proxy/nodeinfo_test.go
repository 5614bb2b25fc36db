package proxy

import (
	"errors"
	"maps"
	"strings"
	"testing"
)

func facts(files map[string]string) NodeFacts {
	return NodeFacts{
		NodeName: "node-a-1",
		Hostname: func() (string, error) { return "host-a", nil },
		ReadFile: func(p string) ([]byte, error) {
			if v, ok := files[p]; ok {
				return []byte(v), nil
			}
			return nil, errors.New("no such file " + p)
		},
		Getenv: func(k string) string { return map[string]string{"REGION": "eu-1"}[k] },
	}
}

func TestNodeID(t *testing.T) {
	hostFiles := map[string]string{
		IQNFile: "## comment\nInitiatorName=iqn.1993-08.org.debian:01:abcdef\n",
		NQNFile: "nqn.2014-08.org.nvmexpress:uuid:68f1d462-633b-4085-a634-899b88e5af74\n",
	}
	iqnP := []IDPrefix{{"1", "iqn.1993-08.org.debian:01:"}}
	nqnP := []IDPrefix{{"2", "nqn.2014-08.org.nvmexpress:uuid:"}}
	tests := []struct {
		name string
		s    NodeIDSettings
		f    NodeFacts
		want string
		err  string
	}{
		{"default", NodeIDSettings{NodeName: true}, facts(hostFiles), "n=node-a-1", ""},
		{"all parts", NodeIDSettings{NodeName: true, Hostname: true, IQN: true, NQN: true, IQNPrefixes: iqnP, NQNPrefixes: nqnP}, facts(hostFiles),
			"n=node-a-1/h=host-a/i1=abcdef/v2=68f1d462-633b-4085-a634-899b88e5af74", ""},
		{"no CSI_NODE_ID", NodeIDSettings{NodeName: true}, NodeFacts{ReadFile: facts(nil).ReadFile}, "", "CSI_NODE_ID is not set"},
		{"iqn and nqn without prefixes: whole names", NodeIDSettings{NodeName: true, IQN: true, NQN: true}, facts(hostFiles),
			"n=node-a-1/i=iqn.1993-08.org.debian:01:abcdef/v=nqn.2014-08.org.nvmexpress:uuid:68f1d462-633b-4085-a634-899b88e5af74", ""},
		{"nqn with a slash", NodeIDSettings{NQN: true}, facts(map[string]string{NQNFile: "nqn.x/y"}), "", "proxy.nodeId.nqnPrefix"},
		{"no iqn file", NodeIDSettings{IQN: true, IQNPrefixes: iqnP}, facts(nil), "", "node id part iqn"},
		{"too long", NodeIDSettings{NodeName: true}, NodeFacts{NodeName: strings.Repeat("n", 300)}, "", "CSI allows 256"},
		{"empty", NodeIDSettings{}, facts(nil), "", "node id is empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := NodeID(tt.s, tt.f)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("NodeID = %q, %v; want error with %q", got, err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("NodeID = %q, %v; want %q", got, err, tt.want)
			}
			parts, err := ParseNodeID(tt.s, got)
			if err != nil || parts.NodeName != tt.f.NodeName {
				t.Fatalf("ParseNodeID(%q) = %+v, %v", got, parts, err)
			}
			if tt.s.IQN && parts.IQN != "iqn.1993-08.org.debian:01:abcdef" {
				t.Fatalf("IQN round trip: %q", parts.IQN)
			}
			if tt.s.NQN && parts.NQN != "nqn.2014-08.org.nvmexpress:uuid:68f1d462-633b-4085-a634-899b88e5af74" {
				t.Fatalf("NQN round trip: %q", parts.NQN)
			}
		})
	}
}

func TestNodeTopology(t *testing.T) {
	re := func(r TopologyRule, expr string) TopologyRule {
		rs, ps := parseRule(map[string]any{"topologyKey": r.Key, "source": r.Source, "envName": r.EnvName, "file": r.File, "regex": expr, "template": r.Template}, "x")
		if len(ps) > 0 {
			t.Fatal(ps)
		}
		return rs
	}
	p := DefaultTopologyPrefix
	tests := []struct {
		name string
		ts   TopologySettings
		want map[string]string
	}{
		{"cluster", TopologySettings{Type: TopologyCluster, Prefix: p}, map[string]string{p + "/cluster": "local"}},
		{"node", TopologySettings{Type: TopologyNode, Prefix: "x.io"}, map[string]string{"x.io/node": "node-a-1"}},
		{"zone rules", TopologySettings{Type: TopologyZone, Prefix: p, Rules: []TopologyRule{
			re(TopologyRule{Key: "zone", Source: "nodeName", Template: "zone-{match:1}"}, `node-(\w)-[0-9]+`),
			re(TopologyRule{Key: "region", Source: "env", EnvName: "REGION"}, `.*`),
			re(TopologyRule{Key: "rack", Source: "file", File: "/etc/rack"}, `rack(\d+)`),
			re(TopologyRule{Key: "never", Source: "hostname"}, `other`),             // no match: skipped
			re(TopologyRule{Key: "unset", Source: "env", EnvName: "NOT_SET"}, `.*`), // no input: skipped
		}}, map[string]string{p + "/zone": "zone-a", p + "/region": "eu-1", p + "/rack": "rack7"}},
	}
	for _, tt := range tests {
		got, err := NodeTopology(tt.ts, facts(map[string]string{"/etc/rack": "rack7\n"}), nil)
		if err != nil || !maps.Equal(got, tt.want) {
			t.Errorf("%s: NodeTopology = %v, %v; want %v", tt.name, got, err, tt.want)
		}
	}
	// Anchoring: a partial match does not count.
	r := re(TopologyRule{Key: "zone", Source: "nodeName"}, `node-a`)
	got, _ := NodeTopology(TopologySettings{Type: TopologyZone, Prefix: p, Rules: []TopologyRule{r}}, facts(nil), nil)
	if len(got) != 0 {
		t.Errorf("partial match produced %v", got)
	}
}
