package cluster

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// kindProvider runs clusters with kind (Kubernetes in Docker), for
// laptops and GitHub Actions runners: it needs Docker with a full kernel
// and the kindest/node image, which the lab machines cannot pull (no
// registry is reachable from them).
type kindProvider struct{}

func init() { register(kindProvider{}) }

// KindNodeImage is the node image of KubernetesVersion; KIND_NODE_IMAGE
// overrides it (a runner that tests another Kubernetes release, or a
// digest-pinned image).
const KindNodeImage = "kindest/node:" + KubernetesVersion

// KindClusterName is the kind cluster's name. e2e/run.sh's kind branch
// uses the same name (kind_test.go checks it): the driver's host-side
// pods run on <name>-worker, and the two must agree on it.
const KindClusterName = "switchyard-e2e"

// KindConfigFile is the repository's kind config (three workers in two
// zones, the e2e hostpath shared with the machine); Start uses it when
// the checkout has one.
const KindConfigFile = "kind-config.yaml"

// kindHostpath is the folder kind-config.yaml shares with every worker
// (e2e/deploy/main-values.yaml's local-hostpath base); a variable for
// the tests.
var kindHostpath = "/var/lib/switchyard-lab/e2e-hostpath"

// kindNodeImage is the image every kind node boots: KIND_NODE_IMAGE or
// KindNodeImage.
func kindNodeImage() string {
	if img := strings.TrimSpace(os.Getenv("KIND_NODE_IMAGE")); img != "" {
		return img
	}
	return KindNodeImage
}

func (kindProvider) Name() string { return "kind" }

func (kindProvider) Available() (bool, string) {
	if _, err := exec.LookPath("kind"); err != nil {
		return false, "no kind command in PATH (go install sigs.k8s.io/kind@latest); the lab machines use the local provider"
	}
	if _, err := exec.LookPath("docker"); err != nil {
		return false, "no docker command in PATH"
	}
	img := kindNodeImage()
	if out, err := exec.Command("docker", "image", "inspect", "--format", "{{.Id}}", img).CombinedOutput(); err != nil {
		return false, "the node image " + img + " is not in Docker (docker pull it, or name another with KIND_NODE_IMAGE; the lab machines reach no registry): " + strings.TrimSpace(string(out))
	}
	return true, ""
}

// kindConfig is the fallback when the checkout has no kind-config.yaml:
// one control-plane node that also runs pods; the kubelet dir is the
// default, as a CSI node plugin's DaemonSet expects. The node image is
// not written here: `kind create cluster --image` sets it for every node
// of either config.
func kindConfig() string {
	return `kind: Cluster
apiVersion: kind.x-k8s.io/v1alpha4
nodes:
- role: control-plane
`
}

// kindConfigPath is the config Start passes to kind: the checkout's
// kind-config.yaml (fromRepo), else kindConfig written to the state dir.
func kindConfigPath(o Options) (path string, fromRepo bool, err error) {
	if repo, err := FindRepo(o.RepoDir); err == nil {
		p := filepath.Join(repo, KindConfigFile)
		if _, err := os.Stat(p); err == nil {
			return p, true, nil
		}
	}
	p := filepath.Join(o.StateDir, "kind-config.yaml")
	return p, false, os.WriteFile(p, []byte(kindConfig()), 0o644)
}

// kindCreateArgs are the arguments of `kind create cluster`.
func kindCreateArgs(config, kubeconfig string) []string {
	return []string{"create", "cluster", "--name", KindClusterName, "--image", kindNodeImage(),
		"--config", config, "--kubeconfig", kubeconfig, "--wait", "3m"}
}

// kindCluster is a running kind cluster.
type kindCluster struct {
	kubeconfig string
}

func (k *kindCluster) Kubeconfig() string { return k.kubeconfig }

func (k *kindCluster) Stop(ctx context.Context) error {
	return runKind(ctx, "delete", "cluster", "--name", KindClusterName)
}

// Start creates the kind cluster (the kubeconfig in the state dir) and
// loads Options.Images into its nodes.
func (kindProvider) Start(ctx context.Context, o Options) (Cluster, error) {
	if o.StateDir == "" {
		o.StateDir = DefaultStateDir + "-kind"
	}
	if err := os.MkdirAll(o.StateDir, 0o755); err != nil {
		return nil, err
	}
	cfg, fromRepo, err := kindConfigPath(o)
	if err != nil {
		return nil, err
	}
	// The root config shares e2e's hostpath folder with every worker:
	// kind refuses a missing extraMounts source, so make it first (as
	// e2e/run.sh does).
	if fromRepo {
		if err := os.MkdirAll(kindHostpath, 0o755); err != nil {
			return nil, fmt.Errorf("kind: the workers' shared folder %s: %w", kindHostpath, err)
		}
	}
	k := &kindCluster{kubeconfig: filepath.Join(o.StateDir, "kubeconfig")}
	if err := runKind(ctx, kindCreateArgs(cfg, k.kubeconfig)...); err != nil {
		return nil, err
	}
	for _, img := range o.Images {
		if err := runKind(ctx, "load", "image-archive", img, "--name", KindClusterName); err != nil {
			_ = k.Stop(context.WithoutCancel(ctx))
			return nil, err
		}
	}
	return k, nil
}

func runKind(ctx context.Context, args ...string) error {
	out, err := exec.CommandContext(ctx, "kind", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("kind %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}
