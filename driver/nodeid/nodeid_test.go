package nodeid

import (
	"errors"
	"strings"
	"testing"

	"github.com/switchyard-csi/switchyard/driver/config"
)

func facts(files map[string]string) Facts {
	return Facts{
		NodeName: "node-a-1",
		Hostname: func() (string, error) { return "host-a", nil },
		ReadFile: func(p string) ([]byte, error) {
			if v, ok := files[p]; ok {
				return []byte(v), nil
			}
			return nil, errors.New("no such file " + p)
		},
	}
}

var hostFiles = map[string]string{
	IQNFile: "## comment\nInitiatorName=iqn.1993-08.org.debian:01:abcdef\n",
	NQNFile: "nqn.2014-08.org.nvmexpress:uuid:68f1d462-633b-4085-a634-899b88e5af74\n",
}

func TestBuild(t *testing.T) {
	iqnP := []Prefix{{"1", "iqn.1993-08.org.debian:01:"}}
	nqnP := []Prefix{{"2", "nqn.2014-08.org.nvmexpress:uuid:"}}
	tests := []struct {
		name string
		s    Settings
		f    Facts
		want string
		err  string
	}{
		{"default", Settings{NodeName: true}, facts(hostFiles), "n=node-a-1", ""},
		{"all parts", Settings{NodeName: true, Hostname: true, IQN: true, NQN: true, IQNPrefixes: iqnP, NQNPrefixes: nqnP}, facts(hostFiles),
			"n=node-a-1/h=host-a/i1=abcdef/v2=68f1d462-633b-4085-a634-899b88e5af74", ""},
		{"no CSI_NODE_ID", Settings{NodeName: true}, Facts{ReadFile: facts(nil).ReadFile}, "", "CSI_NODE_ID is not set"},
		{"iqn and nqn without prefixes: whole names", Settings{NodeName: true, IQN: true, NQN: true}, facts(hostFiles),
			"n=node-a-1/i=iqn.1993-08.org.debian:01:abcdef/v=nqn.2014-08.org.nvmexpress:uuid:68f1d462-633b-4085-a634-899b88e5af74", ""},
		{"files elsewhere", Settings{NodeName: true, NQN: true, NQNFile: "/host/etc/nvme/hostnqn"}, facts(map[string]string{"/host/etc/nvme/hostnqn": "nqn.x:y\n"}),
			"n=node-a-1/v=nqn.x:y", ""},
		{"nqn with a slash", Settings{NQN: true}, facts(map[string]string{NQNFile: "nqn.x/y"}), "", "proxy.nodeId.nqnPrefix"},
		{"no iqn file", Settings{IQN: true, IQNPrefixes: iqnP}, facts(nil), "", "node id part iqn"},
		{"no InitiatorName line", Settings{IQN: true}, facts(map[string]string{IQNFile: "# nothing\n"}), "", "no InitiatorName= line in " + IQNFile},
		{"too long", Settings{NodeName: true}, Facts{NodeName: strings.Repeat("n", 300)}, "", "CSI allows 256"},
		{"exactly 256 bytes", Settings{NodeName: true}, Facts{NodeName: strings.Repeat("n", MaxLen-2)}, "n=" + strings.Repeat("n", MaxLen-2), ""},
		{"empty", Settings{}, facts(nil), "", "node id is empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Build(tt.s, tt.f)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("Build = %q, %v; want error with %q", got, err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("Build = %q, %v; want %q", got, err, tt.want)
			}
			parts, err := Parse(tt.s, got)
			if err != nil || parts.Name != tt.f.NodeName {
				t.Fatalf("Parse(%q) = %+v, %v", got, parts, err)
			}
			if tt.s.IQN && parts.IQN != "iqn.1993-08.org.debian:01:abcdef" {
				t.Fatalf("IQN round trip: %q", parts.IQN)
			}
			if tt.s.NQN && tt.s.NQNFile == "" && parts.NQN != "nqn.2014-08.org.nvmexpress:uuid:68f1d462-633b-4085-a634-899b88e5af74" {
				t.Fatalf("NQN round trip: %q", parts.NQN)
			}
		})
	}
}

func TestParseRejects(t *testing.T) {
	for id, want := range map[string]string{
		"n=a/novalue": "is not <code>=<value>",
		"x=1":         "unknown part code",
		"i7=abc":      "proxy.nodeId.iqnPrefix does not define",
	} {
		if _, err := Parse(Settings{}, id); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) = %v; want an error with %q", id, err, want)
		}
	}
}

func TestStandalone(t *testing.T) {
	noName := facts(hostFiles)
	noName.NodeName = ""
	tests := []struct {
		name       string
		f          Facts
		hostAccess bool
		id, node   string
	}{
		{"node name", facts(hostFiles), false, "node-a-1", "node-a-1"},
		{"hostname when CSI_NODE_ID is unset", noName, false, "host-a", "host-a"},
		{"host access carries the NQN", facts(hostFiles), true, "n=node-a-1/v=nqn.2014-08.org.nvmexpress:uuid:68f1d462-633b-4085-a634-899b88e5af74", "node-a-1"},
		{"host access, hostname as node name", noName, true, "n=host-a/v=nqn.2014-08.org.nvmexpress:uuid:68f1d462-633b-4085-a634-899b88e5af74", "host-a"},
	}
	for _, tt := range tests {
		id, node, err := Standalone(Settings{NodeName: true, NQN: true}, tt.f, tt.hostAccess)
		if err != nil || id != tt.id || node != tt.node {
			t.Errorf("%s: Standalone = %q, %q, %v; want %q, %q", tt.name, id, node, err, tt.id, tt.node)
		}
	}
	broken := Facts{Hostname: func() (string, error) { return "", errors.New("uname failed") }}
	if _, _, err := Standalone(Settings{NodeName: true}, broken, false); err == nil || !strings.Contains(err.Error(), "CSI_NODE_ID is not set and the hostname is unknown") {
		t.Errorf("no node name, no hostname: %v", err)
	}
}

func TestParseSettings(t *testing.T) {
	tests := []struct {
		yaml string
		keys []string
		ok   func(Settings) bool
	}{
		{"{}", nil, func(s Settings) bool { return s.NodeName && !s.NQN && s.IQNFile == IQNFile && s.NQNFile == NQNFile }},
		{"proxy:\n  nodeId:\n    parts: {nqn: true, hostname: true}\n    nqnFile: /host/nqn\n    nqnPrefix:\n    - {shortName: a1, prefix: 'nqn.x:'}\n", nil,
			func(s Settings) bool {
				return s.NodeName && s.NQN && s.Hostname && s.NQNFile == "/host/nqn" && len(s.NQNPrefixes) == 1 && s.NQNPrefixes[0] == Prefix{"a1", "nqn.x:"}
			}},
		{"proxy:\n  nodeId:\n    parts: {nodeName: false}\n", []string{"proxy.nodeId.parts"}, nil},
		{"proxy:\n  nodeId:\n    parts: {iqn: maybe}\n", []string{"proxy.nodeId.parts.iqn"}, nil},
		{"proxy:\n  nodeId:\n    iqnPrefix:\n    - {shortName: 'A!', prefix: iqn.}\n    - {shortName: b}\n", []string{"proxy.nodeId.iqnPrefix[0].shortName", "proxy.nodeId.iqnPrefix[1].prefix"}, nil},
		{"proxy:\n  nodeId:\n    nqnPrefix: nqn.\n", []string{"proxy.nodeId.nqnPrefix"}, nil},
	}
	for _, tt := range tests {
		tree, err := config.Parse([]byte(tt.yaml))
		if err != nil {
			t.Fatal(err)
		}
		s, ps := ParseSettings(tree, Settings{NodeName: true})
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
