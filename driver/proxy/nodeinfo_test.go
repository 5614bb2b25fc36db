package proxy

import (
	"errors"
	"maps"
	"strings"
	"testing"

	"github.com/switchyard-csi/switchyard/driver/nodeid"
)

func facts(files map[string]string) nodeid.Facts {
	return nodeid.Facts{
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

// NodeInfo answers with the node id nodeid builds and the node topology.
func TestNodeInfo(t *testing.T) {
	s := &Settings{NodeID: nodeid.Settings{NodeName: true, Hostname: true}, Topology: TopologySettings{Type: TopologyNode, Prefix: "x.io"}}
	info, err := NodeInfo(s, facts(nil), nil)
	if err != nil || info.GetNodeId() != "n=node-a-1/h=host-a" || info.GetAccessibleTopology().GetSegments()["x.io/node"] != "node-a-1" {
		t.Fatalf("NodeInfo = %v, %v", info, err)
	}
	if _, err := NodeInfo(s, nodeid.Facts{}, nil); err == nil || !strings.Contains(err.Error(), "CSI_NODE_ID") {
		t.Fatalf("NodeInfo without CSI_NODE_ID: %v", err)
	}
}
