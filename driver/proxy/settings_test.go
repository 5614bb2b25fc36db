package proxy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-csi/switchyard/driver/config"
)

func TestParseSettings(t *testing.T) {
	tests := []struct {
		yaml string
		keys []string // keys the problems must name, in order
		ok   func(Settings) bool
	}{
		{"driver: proxy\nproxy:\n  configFolder: /c\n", nil, func(s Settings) bool {
			return s.ConfigFolder == "/c" && s.CacheTimeout == time.Hour && s.Topology.Type == TopologyCluster && s.NodeID.NodeName
		}},
		{"proxy:\n  configFolder: /c\n  cacheTimeoutMinutes: -1\n", nil, func(s Settings) bool { return s.NoCache }},
		{"proxy:\n  configFolder: /c\n  cacheTimeoutMinutes: 0\n", nil, func(s Settings) bool { return !s.NoCache && s.CacheTimeout == 0 }},
		{"proxy:\n  configFolder: /c\n  nodeTopology:\n    type: custom\n    customRules:\n    - keySuffix: zone\n      matchRegexp: 'n-(.*)'\n      resultTemplate: 'z-${match:1}'\n", nil,
			func(s Settings) bool {
				return s.Topology.Type == TopologyZone && s.Topology.Rules[0].Template == "z-{match:1}"
			}},
		{"driver: proxy\n", []string{"proxy"}, nil},
		{"proxy:\n  cacheTimeoutMinutes: soon\n", []string{"proxy.configFolder", "proxy.cacheTimeoutMinutes"}, nil},
		{"proxy:\n  configFolder: /c\n  defaultConnection: ../x\n", []string{"proxy.defaultConnection"}, nil},
		{"proxy:\n  configFolder: /c\n  nodeTopology:\n    type: planet\n", []string{"proxy.nodeTopology.type"}, nil},
		{"proxy:\n  configFolder: /c\n  nodeTopology:\n    type: zone\n    fromRegexp:\n    - source: env\n      regex: '('\n", []string{"proxy.nodeTopology.fromRegexp[0].topologyKey", "proxy.nodeTopology.fromRegexp[0].envName", "proxy.nodeTopology.fromRegexp[0].regex"}, nil},
		{"proxy:\n  configFolder: /c\n  nodeId:\n    parts: {nodeName: false}\n", []string{"proxy.nodeId.parts"}, nil},
		{"proxy:\n  configFolder: /c\n  nodeId:\n    iqnPrefix:\n    - {shortName: 'A!', prefix: iqn.}\n", []string{"proxy.nodeId.iqnPrefix[0].shortName"}, nil},
	}
	for _, tt := range tests {
		tree, err := config.Parse([]byte(tt.yaml))
		if err != nil {
			t.Fatal(err)
		}
		s, ps := ParseSettings(tree)
		var keys []string
		for _, p := range ps {
			keys = append(keys, p.Key)
		}
		if strings.Join(keys, ",") != strings.Join(tt.keys, ",") {
			t.Errorf("%q: problems %v; want keys %v", tt.yaml, ps, tt.keys)
		}
		if tt.ok != nil && !tt.ok(s) {
			t.Errorf("%q: settings %+v", tt.yaml, s)
		}
	}
}

func TestCheckFolder(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("ok.yaml", "driver: fake-test\nfake:\n  label: ok\n")
	write(strings.Repeat("l", 50)+".yaml", "driver: fake-test\nfake:\n  label: long\n")   // 2+50+1+40 > 128? no: 93; fine
	write(strings.Repeat("m", 63)+".yaml", "driver: fake-test\nfake:\n  label: longer\n") // 2+63+1+40 = 106: fine
	write("bad name.yaml", "driver: fake-test\n")
	write("broken.yaml", "driver: [")
	write("nolabel.yaml", "driver: fake-test\n")
	write("notes.txt", "ignored")
	s := &Settings{ConfigFolder: dir, Topology: TopologySettings{Type: TopologyCluster}}
	ps := CheckFolder(s, config.Tree{})
	got := ps.Error()
	for _, want := range []string{"bad name.yaml: the file name is not a usable connection name", "broken.yaml: invalid YAML", "nolabel.yaml: fake.label: required"} {
		if !strings.Contains(got, want) {
			t.Errorf("problems %q lack %q", got, want)
		}
	}
	if len(ps) != 3 {
		t.Errorf("%d problems; want 3:\n%s", len(ps), got)
	}
}

func TestCheckConnectionHandleLength(t *testing.T) {
	dir := t.TempDir()
	name := strings.Repeat("n", 63)
	file := filepath.Join(dir, name+".yaml")
	os.WriteFile(file, []byte("driver: fake-test\nfake:\n  label: x\n"), 0o644)
	s := &Settings{ConfigFolder: dir}
	if ps := CheckConnection(name, file, config.Tree{}, s); len(ps) != 0 {
		t.Fatalf("63-char name with 40-byte ids: %v", ps)
	}
	withLimits := func(limit int) config.Problems {
		typ, _ := lookupFake()
		old := typ.MaxVolumeIDLen
		typ.MaxVolumeIDLen = limit
		defer func() { typ.MaxVolumeIDLen = old }()
		return CheckConnection(name, file, config.Tree{}, s)
	}
	ps := withLimits(64)
	if len(ps) != 1 || !strings.Contains(ps[0].Error(), "handles can reach 130 bytes") || !strings.Contains(ps[0].Error(), "at most 61 characters") {
		t.Fatalf("problems %v; want one about 130-byte handles", ps)
	}
}
