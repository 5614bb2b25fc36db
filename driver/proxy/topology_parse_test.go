package proxy

import (
	"strings"
	"testing"

	"github.com/switchyard-csi/switchyard/driver/config"
	"sigs.k8s.io/yaml"
)

func parseTopologyYAML(t *testing.T, doc string) ([]TopologyEntry, config.Problems) {
	t.Helper()
	var m map[string]any
	if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
		t.Fatal(err)
	}
	return parsePerDriverTopology(config.Tree(m))
}

// Extra label keys carry dots (topology.kubernetes.io/zone); the cluster
// tier found them reaching the PV with empty values.
func TestPerDriverTopologyExtraKeysWithDots(t *testing.T) {
	entries, ps := parseTopologyYAML(t, `
proxy:
  perDriver:
    topology:
    - requirements: {zone: a}
      extra:
        custom.prefix/custom.name: v1
        example.com/rack: 7
`)
	if len(ps) != 0 {
		t.Fatalf("problems: %v", ps)
	}
	if got := entries[0].Extra["custom.prefix/custom.name"]; got != "v1" {
		t.Errorf("extra custom.prefix/custom.name = %q, want v1", got)
	}
	if got := entries[0].Extra["example.com/rack"]; got != "7" {
		t.Errorf("extra example.com/rack = %q, want 7", got)
	}
}

func TestPerDriverTopologyEntryNeedsRequirements(t *testing.T) {
	_, ps := parseTopologyYAML(t, `
proxy:
  perDriver:
    topology:
    - extra: {example.com/rack: r1}
`)
	if len(ps) != 1 || ps[0].Key != "proxy.perDriver.topology[0].requirements" || !strings.Contains(ps[0].Msg, "required") {
		t.Fatalf("problems = %v, want one naming proxy.perDriver.topology[0].requirements", ps)
	}
}

func TestPerDriverTopologyValueMustBeScalar(t *testing.T) {
	_, ps := parseTopologyYAML(t, `
proxy:
  perDriver:
    topology:
    - requirements: {zone: [a, b]}
`)
	if len(ps) == 0 || ps[0].Key != "proxy.perDriver.topology[0].requirements.zone" {
		t.Fatalf("problems = %v, want one naming requirements.zone", ps)
	}
}
