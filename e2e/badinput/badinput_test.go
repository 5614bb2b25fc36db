// Package badinput holds the bad-input cases of issue 12 that the driver
// binary decides on its own, before any cluster: `switchyard config check`
// and the node plugin's start-up, run as a user runs them. The cases
// that need a cluster are in e2e/suites (label badinput).
package badinput

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-csi/switchyard/e2e/internal/driverbin"
)

// setup writes main.yaml (with nodeTopology) and the connection files.
func setup(t *testing.T, nodeTopology string, conns map[string]string) (dir, main string) {
	t.Helper()
	dir = t.TempDir()
	folder := filepath.Join(dir, "connections")
	if err := os.MkdirAll(folder, 0o755); err != nil {
		t.Fatal(err)
	}
	main = filepath.Join(dir, "main.yaml")
	cfg := "driver: proxy\nproxy:\n  configFolder: " + folder + "\n" + nodeTopology
	if err := os.WriteFile(main, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	for n, c := range conns {
		if err := os.WriteFile(filepath.Join(folder, n+".yaml"), []byte(c), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir, main
}

func configCheck(t *testing.T, main string) (string, int) {
	t.Helper()
	out, err := exec.Command(driverbin.Path(t), "config", "check", main).CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return string(out), code
}

// startNode starts the node plugin as the chart does and returns its
// output once it exits; one that is still serving after 15 s failed the
// test (it should have refused to start).
func startNode(t *testing.T, dir, main, nodeID string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, driverbin.Path(t), "--driver-config-file", main, "--csi-name", "e2e.switchyard.test",
		"--csi-mode", "node", "--server-socket", filepath.Join(dir, "csi.sock"), "--node-state-dir", filepath.Join(dir, "state"))
	cmd.Env = append(os.Environ(), "CSI_NODE_ID="+nodeID)
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("the node plugin started and served; want it to refuse to start. Output:\n%s", out)
	}
	if err == nil {
		t.Fatalf("the node plugin exited 0; want a failure. Output:\n%s", out)
	}
	return string(out)
}

func wantAll(t *testing.T, what, out string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("%s does not say %q:\n%s", what, w, out)
		}
	}
}

const zoneRule = "  nodeTopology:\n    type: zone\n    fromRegexp:\n    - topologyKey: zone\n"

func TestFromRegexpRuleThatDoesNotCompile(t *testing.T) {
	dir, main := setup(t, zoneRule+"      regex: 'node-(.*'\n", nil)
	out, code := configCheck(t, main)
	if code != 1 {
		t.Errorf("config check exited %d, want 1", code)
	}
	wantAll(t, "config check", out, "proxy.nodeTopology.fromRegexp[0].regex", "invalid regular expression")
	wantAll(t, "the node plugin's start", startNode(t, dir, main, "node-a"), "proxy.nodeTopology.fromRegexp[0].regex")
}

func TestFileSourceThatDoesNotExist(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-such-zone-file")
	dir, main := setup(t, zoneRule+"      source: file\n      file: "+missing+"\n", nil)
	wantAll(t, "the node plugin's start", startNode(t, dir, main, "node-a"), "nodeTopology rule zone", missing)
}

func TestNodeIDOver256Bytes(t *testing.T) {
	dir, main := setup(t, "", nil)
	wantAll(t, "the node plugin's start", startNode(t, dir, main, strings.Repeat("n", 300)), "CSI allows 256")
}

// An entry without requirements would serve every requested topology
// (its keys are what a term is checked against): a connection file that
// says so by omission is refused, naming the entry.
func TestPerDriverTopologyEntryWithoutRequirements(t *testing.T) {
	_, main := setup(t, "  nodeTopology:\n    type: zone\n    fromRegexp:\n    - topologyKey: zone\n", map[string]string{
		"nas": "driver: zfs-generic-nfs\nsshConnection:\n  host: 127.0.0.1\n  username: root\n  password: pw\nzfs:\n  datasetParentName: tank/k8s/nas\n" +
			"nfs:\n  shareStrategy: setDatasetProperties\n  shareStrategySetDatasetProperties:\n    properties:\n      sharenfs: \"on\"\n  shareHost: 127.0.0.1\nproxy:\n  perDriver:\n    topology:\n    - extra:\n        example.com/rack: r1\n",
	})
	out, code := configCheck(t, main)
	if code != 1 {
		t.Errorf("config check exited %d, want 1: an entry without requirements must be refused", code)
	}
	wantAll(t, "config check", out, "nas.yaml", "proxy.perDriver.topology[0].requirements")
}
