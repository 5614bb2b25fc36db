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

// KindNodeImage is the node image of KubernetesVersion.
const KindNodeImage = "kindest/node:" + KubernetesVersion

// KindClusterName is the kind cluster's name.
const KindClusterName = "switchyard-lab"

func (kindProvider) Name() string { return "kind" }

func (kindProvider) Available() (bool, string) {
	if _, err := exec.LookPath("kind"); err != nil {
		return false, "no kind command in PATH (go install sigs.k8s.io/kind@latest); the lab machines use the local provider"
	}
	if _, err := exec.LookPath("docker"); err != nil {
		return false, "no docker command in PATH"
	}
	if out, err := exec.Command("docker", "image", "inspect", "--format", "{{.Id}}", KindNodeImage).CombinedOutput(); err != nil {
		return false, "the node image " + KindNodeImage + " is not in Docker (docker pull it; the lab machines reach no registry): " + strings.TrimSpace(string(out))
	}
	return true, ""
}

// kindConfig is one control-plane node that also runs pods; the kubelet
// dir is the default, as a CSI node plugin's DaemonSet expects.
func kindConfig() string {
	return `kind: Cluster
apiVersion: kind.x-k8s.io/v1alpha4
name: ` + KindClusterName + `
nodes:
- role: control-plane
  image: ` + KindNodeImage + `
`
}

// kindCluster is a running kind cluster.
type kindCluster struct {
	kubeconfig string
}

func (k *kindCluster) Kubeconfig() string { return k.kubeconfig }

func (k *kindCluster) Stop(ctx context.Context) error {
	return runKind(ctx, "delete", "cluster", "--name", KindClusterName)
}

// Start creates the kind cluster (kind-config.yaml and the kubeconfig in
// the state dir) and loads Options.Images into its node.
func (kindProvider) Start(ctx context.Context, o Options) (Cluster, error) {
	if o.StateDir == "" {
		o.StateDir = DefaultStateDir + "-kind"
	}
	if err := os.MkdirAll(o.StateDir, 0o755); err != nil {
		return nil, err
	}
	cfg := filepath.Join(o.StateDir, "kind-config.yaml")
	if err := os.WriteFile(cfg, []byte(kindConfig()), 0o644); err != nil {
		return nil, err
	}
	k := &kindCluster{kubeconfig: filepath.Join(o.StateDir, "kubeconfig")}
	if err := runKind(ctx, "create", "cluster", "--config", cfg, "--kubeconfig", k.kubeconfig, "--wait", "3m"); err != nil {
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
