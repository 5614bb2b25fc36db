package cluster

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// kind cannot run on the lab machines (no kindest/node image can be
// pulled): these tests drive the provider through a fake kind and check
// what it would be given, and that e2e/run.sh's kind branch agrees.

func TestKindProviderAvailable(t *testing.T) {
	bin := t.TempDir()
	t.Setenv("PATH", bin)
	t.Setenv("KIND_NODE_IMAGE", "")
	kind, _ := Get("kind")
	if ok, why := kind.Available(); ok || !strings.Contains(why, "no kind command") {
		t.Errorf("without kind: Available = %v, %q", ok, why)
	}
	fakeTool(t, bin, "kind", "0")
	docker := fakeTool(t, bin, "docker", "1")
	if ok, why := kind.Available(); ok || !strings.Contains(why, KindNodeImage) || !strings.Contains(why, "KIND_NODE_IMAGE") {
		t.Errorf("without the node image: Available = %v, %q", ok, why)
	}
	fakeTool(t, bin, "docker", "0")
	if ok, why := kind.Available(); !ok {
		t.Errorf("with kind and the image: not available: %s", why)
	}
	// KIND_NODE_IMAGE is the image looked for.
	t.Setenv("KIND_NODE_IMAGE", "kindest/node:v1.36.0@sha256:abc")
	if ok, _ := kind.Available(); !ok {
		t.Error("with KIND_NODE_IMAGE: not available")
	}
	calls, _ := os.ReadFile(docker)
	if !strings.HasSuffix(strings.TrimSpace(string(calls)), "kindest/node:v1.36.0@sha256:abc") {
		t.Errorf("docker was asked about\n%s", calls)
	}
}

// fakeCheckout is a directory FindRepo accepts, with or without a
// kind-config.yaml.
func fakeCheckout(t *testing.T, kindConfig string) string {
	t.Helper()
	repo := t.TempDir()
	if err := os.MkdirAll(filepath.Join(repo, "scripts"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(repo, "scripts", "ensure-kube.sh"), nil, 0o755); err != nil {
		t.Fatal(err)
	}
	if kindConfig != "" {
		if err := os.WriteFile(filepath.Join(repo, KindConfigFile), []byte(kindConfig), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return repo
}

func TestKindProviderStart(t *testing.T) {
	bin := t.TempDir()
	t.Setenv("PATH", bin)
	t.Setenv("KIND_NODE_IMAGE", "")
	kindHostpath = filepath.Join(t.TempDir(), "e2e-hostpath")
	t.Cleanup(func() { kindHostpath = "/var/lib/switchyard-lab/e2e-hostpath" })
	kindCalls := fakeTool(t, bin, "kind", "0")
	kind, _ := Get("kind")

	// A checkout without kind-config.yaml: the generated one-node config.
	state := t.TempDir()
	c, err := kind.Start(context.Background(), Options{StateDir: state, RepoDir: fakeCheckout(t, ""), Images: []string{"/x/driver.tar"}})
	if err != nil {
		t.Fatal(err)
	}
	if c.Kubeconfig() != filepath.Join(state, "kubeconfig") {
		t.Errorf("kubeconfig %s", c.Kubeconfig())
	}
	if err := c.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	calls, _ := os.ReadFile(kindCalls)
	want := "create cluster --name switchyard-e2e --image " + KindNodeImage + " --config " + state + "/kind-config.yaml --kubeconfig " + state + "/kubeconfig --wait 3m\n" +
		"load image-archive /x/driver.tar --name switchyard-e2e\n" +
		"delete cluster --name switchyard-e2e\n"
	if string(calls) != want {
		t.Errorf("kind was called with\n%swant\n%s", calls, want)
	}
	cfg, _ := os.ReadFile(filepath.Join(state, "kind-config.yaml"))
	if !strings.Contains(string(cfg), "role: control-plane") {
		t.Errorf("kind-config.yaml:\n%s", cfg)
	}
	if _, err := os.Stat(kindHostpath); err == nil {
		t.Error("the generated config shares no folder, yet the hostpath folder was made")
	}

	// A checkout with kind-config.yaml: that file, KIND_NODE_IMAGE, and
	// the workers' shared folder made first.
	_ = os.Remove(kindCalls)
	t.Setenv("KIND_NODE_IMAGE", "kindest/node:v1.36.0")
	repo := fakeCheckout(t, "kind: Cluster\n")
	state = t.TempDir()
	if _, err := kind.Start(context.Background(), Options{StateDir: state, RepoDir: repo}); err != nil {
		t.Fatal(err)
	}
	calls, _ = os.ReadFile(kindCalls)
	want = "create cluster --name switchyard-e2e --image kindest/node:v1.36.0 --config " + repo + "/kind-config.yaml --kubeconfig " + state + "/kubeconfig --wait 3m\n"
	if string(calls) != want {
		t.Errorf("kind was called with\n%swant\n%s", calls, want)
	}
	if _, err := os.Stat(kindHostpath); err != nil {
		t.Errorf("the workers' shared folder was not made: %v", err)
	}

	// A failing kind is an error with its output.
	fakeTool(t, bin, "kind", "1")
	if _, err := kind.Start(context.Background(), Options{StateDir: state, RepoDir: repo}); err == nil {
		t.Error("Start succeeded although kind failed")
	}
}

// TestKindNamesAgreeWithRunSh: e2e/run.sh creates the kind cluster itself
// (it needs the kind network's gateway for the simulators); its cluster
// name, default node image, config and hostpath folder must be this
// provider's, and the driver's host node the config's first worker.
func TestKindNamesAgreeWithRunSh(t *testing.T) {
	repo, err := FindRepo("")
	if err != nil {
		t.Fatal(err)
	}
	run, err := os.ReadFile(filepath.Join(repo, "e2e", "run.sh"))
	if err != nil {
		t.Fatal(err)
	}
	sh := string(run)
	for _, want := range []string{
		"KIND_CLUSTER=" + KindClusterName + "\n",
		"KIND_NODE_IMAGE:-" + KindNodeImage + "}",
		"HOSTPATH=" + kindHostpath + " ",
		"HOST_NODE=$KIND_CLUSTER-worker\n",
		"--config " + KindConfigFile,
	} {
		if !strings.Contains(sh, want) {
			t.Errorf("e2e/run.sh does not contain %q", want)
		}
	}
	// Every kind command of run.sh names the cluster.
	for _, m := range regexp.MustCompile(`(?m)^\s*(kind (create|load|delete|get) [^\n]*)`).FindAllStringSubmatch(sh, -1) {
		if !strings.Contains(m[1], `--name "$KIND_CLUSTER"`) && !strings.Contains(m[1], "--name $KIND_CLUSTER") {
			t.Errorf("e2e/run.sh: %q does not name the cluster", m[1])
		}
	}
	cfg, err := os.ReadFile(filepath.Join(repo, KindConfigFile))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(cfg), "role: worker") || !strings.Contains(string(cfg), "hostPath: "+kindHostpath) {
		t.Errorf("%s has no worker sharing %s", KindConfigFile, kindHostpath)
	}
}
