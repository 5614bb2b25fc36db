package validate

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	yaml "go.yaml.in/yaml/v3"
	"sigs.k8s.io/kind/pkg/apis/config/v1alpha4"
)

// kindConfigPath is the repository's kind-config.yaml, read by e2e/run.sh
// (E2E_PROVIDER=kind).
var kindConfigPath = filepath.Join("..", "..", "..", "kind-config.yaml")

// e2eHostPath is e2e/run.sh's HOSTPATH: local-hostpath's folder, which the
// suites inspect from the machine, so every worker must share it.
const e2eHostPath = "/var/lib/switchyard-lab/e2e-hostpath"

// decodeKindConfig reads raw the way `kind create cluster --config` does
// (kind's internal encoding.Load: yaml v3 with unknown fields refused, into
// the v1alpha4 Cluster type, whose Mount and PortMapping check their enums).
func decodeKindConfig(raw []byte) (*v1alpha4.Cluster, error) {
	cfg := &v1alpha4.Cluster{}
	d := yaml.NewDecoder(bytes.NewReader(raw))
	d.KnownFields(true)
	if err := d.Decode(cfg); err != nil {
		return nil, err
	}
	return cfg, nil
}

func TestKindConfig(t *testing.T) {
	raw, err := os.ReadFile(kindConfigPath)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := decodeKindConfig(raw)
	if err != nil {
		t.Fatalf("kind-config.yaml does not decode as kind's v1alpha4 Cluster: %v", err)
	}
	if cfg.Kind != "Cluster" || cfg.APIVersion != "kind.x-k8s.io/v1alpha4" {
		t.Fatalf("kind/apiVersion = %q/%q, want Cluster/kind.x-k8s.io/v1alpha4", cfg.Kind, cfg.APIVersion)
	}
	if cfg.Name != "" {
		t.Errorf("name %q set: e2e/run.sh names the cluster with --name", cfg.Name)
	}
	var planes, workers int
	zones := map[string]int{}
	regions := map[string]bool{}
	for i, n := range cfg.Nodes {
		switch n.Role {
		case v1alpha4.ControlPlaneRole:
			planes++
			continue
		case v1alpha4.WorkerRole:
			workers++
		default:
			t.Fatalf("node %d: role %q", i, n.Role)
		}
		z, r := n.Labels["topology.kubernetes.io/zone"], n.Labels["topology.kubernetes.io/region"]
		if z == "" || r == "" {
			t.Errorf("worker %d lacks a zone or region label: %v", i, n.Labels)
		}
		zones[z]++
		regions[r] = true
		shared := false
		for _, m := range n.ExtraMounts {
			if m.HostPath == e2eHostPath && m.ContainerPath == e2eHostPath {
				shared = true
			}
		}
		if !shared {
			t.Errorf("worker %d does not share %s with the machine", i, e2eHostPath)
		}
	}
	if planes != 1 || workers != 3 {
		t.Errorf("%d control planes and %d workers, want 1 and 3", planes, workers)
	}
	if len(zones) != 2 || len(regions) != 1 {
		t.Errorf("zones %v, regions %v: want two zones in one region", zones, regions)
	}
	// kind applies its defaults after decoding; the config must stay valid
	// through them (an image or a role left empty would be filled here).
	v1alpha4.SetDefaultsCluster(cfg)
	for i, n := range cfg.Nodes {
		if n.Image == "" || n.Role == "" {
			t.Errorf("node %d after defaults: image %q role %q", i, n.Image, n.Role)
		}
	}
}

// TestKindConfigStrict proves the decoder above refuses what kind refuses:
// a misspelt key and an unknown mount propagation.
func TestKindConfigStrict(t *testing.T) {
	good := "kind: Cluster\napiVersion: kind.x-k8s.io/v1alpha4\nnodes:\n  - role: control-plane\n"
	if _, err := decodeKindConfig([]byte(good)); err != nil {
		t.Fatalf("minimal config refused: %v", err)
	}
	for name, bad := range map[string]string{
		"misspelt key": "kind: Cluster\napiVersion: kind.x-k8s.io/v1alpha4\nnodes:\n  - role: worker\n    label:\n      a: b\n",
		"propagation":  "kind: Cluster\napiVersion: kind.x-k8s.io/v1alpha4\nnodes:\n  - role: worker\n    extraMounts:\n      - hostPath: /a\n        containerPath: /a\n        propagation: Shared\n",
	} {
		_, err := decodeKindConfig([]byte(bad))
		if err == nil {
			t.Errorf("%s: accepted", name)
			continue
		}
		if !strings.Contains(err.Error(), "label") && !strings.Contains(err.Error(), "Propagation") {
			t.Errorf("%s: error does not name the problem: %v", name, err)
		}
	}
}
