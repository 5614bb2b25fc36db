package nodeid

import (
	"errors"
	"strings"
	"testing"
)

// FuzzBuildParse: a node id Build returns is at most MaxLen bytes and
// Parse reads every enabled part back exactly; Parse of any text never
// panics.
func FuzzBuildParse(f *testing.F) {
	f.Add("node-1", "host-1", "InitiatorName=iqn.2005-03.org.open-iscsi:abc\n", "nqn.2014-08.org.nvmexpress:uuid:1234\n", uint8(15))
	f.Add("n", "h", "# comment\nInitiatorName= iqn.1993-08.org.debian:01:x \n", "x", uint8(4))
	f.Add("a/b", "h", "", "", uint8(1))
	f.Add("n", "h/x", "", "", uint8(2))
	f.Add("n", "h", "InitiatorName=iqn.2005-03.org.open-iscsi:a/b\n", "", uint8(4))
	f.Add("n", "h", "", "nqn.2014-08.org.nvmexpress:uuid:a/b", uint8(8))
	f.Add(strings.Repeat("n", 300), "h", "", "", uint8(1))
	s := Settings{
		IQNPrefixes: []Prefix{{ShortName: "1", Prefix: "iqn.2005-03.org.open-iscsi:"}, {ShortName: "d", Prefix: "iqn.1993-08.org.debian:01:"}},
		NQNPrefixes: []Prefix{{ShortName: "u", Prefix: "nqn.2014-08.org.nvmexpress:uuid:"}},
	}
	f.Fuzz(func(t *testing.T, node, host, iqnFile, nqnFile string, parts uint8) {
		s := s
		s.NodeName, s.Hostname, s.IQN, s.NQN = parts&1 != 0, parts&2 != 0, parts&4 != 0, parts&8 != 0
		facts := Facts{
			NodeName: node,
			Hostname: func() (string, error) { return host, nil },
			ReadFile: func(p string) ([]byte, error) {
				switch p {
				case IQNFile:
					return []byte(iqnFile), nil
				case NQNFile:
					return []byte(nqnFile), nil
				}
				return nil, errors.New("no such file")
			},
			Getenv: func(string) string { return "" },
		}
		_, _ = Parse(s, node) // any text: no panic
		id, err := Build(s, facts)
		if err != nil {
			return
		}
		if len(id) > MaxLen || id == "" {
			t.Fatalf("Build gave a %d-byte id %q", len(id), id)
		}
		got, err := Parse(s, id)
		if err != nil {
			t.Fatalf("Parse(Build()) = %v for id %q", err, id)
		}
		if s.NodeName && got.Name != node {
			t.Fatalf("id %q: node name %q read back as %q", id, node, got.Name)
		}
		if s.Hostname && got.Hostname != host {
			t.Fatalf("id %q: hostname %q read back as %q", id, host, got.Hostname)
		}
		if s.IQN && got.IQN != parseInitiatorName([]byte(iqnFile)) {
			t.Fatalf("id %q: iqn read back as %q", id, got.IQN)
		}
		if s.NQN && got.NQN != strings.TrimSpace(nqnFile) {
			t.Fatalf("id %q: nqn %q read back as %q", id, strings.TrimSpace(nqnFile), got.NQN)
		}
	})
}
