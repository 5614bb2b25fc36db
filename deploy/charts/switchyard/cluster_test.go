package chart_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-csi/switchyard/lab/testtier"
)

// The cluster tests install the chart for real: what helm template cannot
// show (lookup against the cluster, the pods becoming Ready). They run only
// when CHART_KUBECONFIG names a cluster to install into, so that a KUBECONFIG
// of a developer's own cluster is never written to by accident.
// `make chart-cluster-test` (cluster-test.sh) brings the local cluster up
// with the lab's images, runs them and stops it (docs/install.md, "Measured").
func clusterHelm(t *testing.T) func(args ...string) (string, error) {
	t.Helper()
	kc := os.Getenv("CHART_KUBECONFIG")
	if kc == "" {
		// Not a tier skip: `go test ./...` reaches these tests without a
		// cluster, and the tier runs them through make chart-cluster-test
		// (which make test calls as root), where a missing cluster fails
		// under LAB_REQUIRE.
		t.Skip("CHART_KUBECONFIG is unset: make chart-cluster-test (part of make test as root) runs these on the local cluster")
	}
	_, statErr := os.Stat(kc)
	testtier.Need(t, testtier.Cluster, statErr == nil,
		"CHART_KUBECONFIG="+kc+" does not name a kubeconfig file: the chart's cluster tests install into that cluster only "+
			"(make chart-cluster-test brings up the local cluster and sets it)")
	bin := helmBin(t)
	home := t.TempDir()
	return func(args ...string) (string, error) {
		cmd := exec.Command(bin, args...)
		// The cluster's addresses are local: a proxy named in the
		// environment would refuse them (e2e/run.sh says more).
		var env []string
		for _, e := range os.Environ() {
			k, _, _ := strings.Cut(e, "=")
			switch strings.ToLower(k) {
			case "http_proxy", "https_proxy", "all_proxy", "no_proxy", "kubeconfig":
				continue
			}
			env = append(env, e)
		}
		env = append(env, "KUBECONFIG="+kc, "HELM_CACHE_HOME="+home, "HELM_CONFIG_HOME="+home, "HELM_DATA_HOME="+home)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
}

// TestClusterDuplicateDriverName: a second release with a driver name that
// another release serves is refused, with a message naming that release
// and what to change, also when it would not create the CSIDriver; the
// first release still upgrades, and another name installs beside it.
func TestClusterDuplicateDriverName(t *testing.T) {
	h := clusterHelm(t)
	const name = "dup.chart-test.switchyard.lab"
	// No pods: the CSIDriver, RBAC and Secrets are what the check is about.
	base := []string{"-f", "testdata/values/minimal.yaml", "--set", "controller.enabled=false,node.enabled=false,storageClasses=null",
		"--create-namespace", "--timeout", "2m"}
	install := func(rel, ns string, extra ...string) (string, error) {
		return h(append(append([]string{"upgrade", "--install", rel, ".", "-n", ns, "--set", "csiDriver.name=" + name}, base...), extra...)...)
	}
	t.Cleanup(func() {
		for _, r := range [][2]string{{"chart-test-b", "chart-test-b"}, {"chart-test-b2", "chart-test-b"}, {"chart-test-a", "chart-test-a"}} {
			if out, err := h("uninstall", r[0], "-n", r[1], "--ignore-not-found", "--wait", "--timeout", "2m"); err != nil {
				t.Errorf("helm uninstall %s: %v\n%s", r[0], err, out)
			}
		}
	})
	if out, err := install("chart-test-a", "chart-test-a"); err != nil {
		t.Fatalf("first install: %v\n%s", err, out)
	}
	want := "csiDriver.name " + name + " is already installed by release chart-test-a in namespace chart-test-a: choose another csiDriver.name"
	for _, extra := range [][]string{nil, {"--set", "csiDriver.enabled=false"}} {
		out, err := install("chart-test-b", "chart-test-b", extra...)
		if err == nil {
			t.Errorf("a second release with driver name %s (%v) installed:\n%s", name, extra, out)
			continue
		}
		if !strings.Contains(out, want) {
			t.Errorf("second install (%v) refused with\n%s\nwant a message containing %q", extra, out, want)
		}
		t.Logf("refused (%v): %s", extra, strings.TrimSpace(out))
	}
	if out, err := install("chart-test-a", "chart-test-a", "--set", "csiDriver.podInfoOnMount=false"); err != nil {
		t.Errorf("upgrading the release that owns the name was refused: %v\n%s", err, out)
	}
	if out, err := h(append([]string{"install", "chart-test-b2", ".", "-n", "chart-test-b", "--set", "csiDriver.name=other.chart-test.switchyard.lab"}, base...)...); err != nil {
		t.Errorf("another driver name beside the first was refused: %v\n%s", err, out)
	}
}

// TestClusterInstallReady installs the chart with the lab's images
// (CHART_LAB_VALUES: the lab-values.yaml scripts/images.sh writes) and
// waits for the driver to be Ready on the cluster's nodes: the number
// docs/install.md quotes as "helm install to driver Ready".
func TestClusterInstallReady(t *testing.T) {
	h := clusterHelm(t)
	lab := os.Getenv("CHART_LAB_VALUES")
	testtier.Need(t, testtier.Cluster, lab != "", "CHART_LAB_VALUES does not name scripts/images.sh's lab-values.yaml (the images the nodes hold)")
	dir := t.TempDir()
	base := filepath.Join(dir, "ready")
	if err := os.MkdirAll(base, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if out, err := h("uninstall", "chart-test-ready", "-n", "chart-test-ready", "--ignore-not-found", "--wait", "--timeout", "3m"); err != nil {
			t.Errorf("helm uninstall: %v\n%s", err, out)
		}
	})
	start := time.Now()
	out, err := h("install", "chart-test-ready", ".", "-n", "chart-test-ready", "--create-namespace", "-f", lab,
		"--set", "csiDriver.name=ready.chart-test.switchyard.lab",
		"--set", "driver.config.proxy.nodeTopology.type=node",
		"--set-json", `connections={"fast.yaml":{"driver":"local-hostpath","local-hostpath":{"shareBasePath":"`+base+`","controllerBasePath":"`+base+`"}}}`,
		"--wait", "--timeout", "5m")
	took := time.Since(start)
	if err != nil {
		t.Fatalf("helm install --wait: %v\n%s", err, out)
	}
	t.Logf("helm install --wait returned (controller Deployment and node DaemonSet available): %s", took.Round(100*time.Millisecond))

	// Ready for volumes: the node-driver-registrar has registered the
	// driver with every node's kubelet, which lists it in the node's CSINode.
	kubectl := os.Getenv("KUBECTL")
	testtier.Need(t, testtier.Cluster, kubectl != "", "KUBECTL does not name a kubectl (cluster-test.sh sets it)")
	const driver = "ready.chart-test.switchyard.lab"
	deadline := time.Now().Add(2 * time.Minute)
	for {
		nodes, err1 := exec.Command(kubectl, "--kubeconfig", os.Getenv("CHART_KUBECONFIG"), "get", "nodes", "-o", "jsonpath={.items[*].metadata.name}").Output()
		drivers, err2 := exec.Command(kubectl, "--kubeconfig", os.Getenv("CHART_KUBECONFIG"), "get", "csinodes", "-o",
			`jsonpath={range .items[*]}{.metadata.name}={.spec.drivers[*].name}{"\n"}{end}`).Output()
		registered := 0
		if err1 == nil && err2 == nil {
			for _, l := range strings.Split(string(drivers), "\n") {
				if _, names, ok := strings.Cut(l, "="); ok && has(strings.Fields(names), driver) {
					registered++
				}
			}
		}
		if n := len(strings.Fields(string(nodes))); n > 0 && registered == n {
			t.Logf("helm install to driver Ready (registered in the CSINode of all %d node(s)): %s", n, time.Since(start).Round(100*time.Millisecond))
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("driver %s not registered on every node 2 minutes after helm --wait (CSINodes: %q, %v %v)", driver, drivers, err1, err2)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
