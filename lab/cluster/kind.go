package cluster

import (
	"context"
	"errors"
	"os/exec"
)

// kindProvider runs clusters with kind (Kubernetes in Docker), for
// laptops and GitHub Actions runners: it needs Docker with a full kernel
// and the kindest/node image, which the lab machines cannot pull (no
// registry is reachable from them).
type kindProvider struct{}

func init() { register(kindProvider{}) }

// KindNodeImage is the node image of KubernetesVersion.
const KindNodeImage = "kindest/node:" + KubernetesVersion

func (kindProvider) Name() string { return "kind" }

func (kindProvider) Available() (bool, string) {
	if _, err := exec.LookPath("kind"); err != nil {
		return false, "no kind command in PATH (go install sigs.k8s.io/kind@latest); the lab machines use the local provider"
	}
	if _, err := exec.LookPath("docker"); err != nil {
		return false, "no docker command in PATH"
	}
	if err := exec.Command("docker", "image", "inspect", KindNodeImage).Run(); err != nil {
		return false, "the node image " + KindNodeImage + " is not in Docker and no registry is reachable to pull it"
	}
	return false, "the kind provider's Start is not written yet (a later issue): use E2E_PROVIDER=local"
}

func (kindProvider) Start(context.Context, Options) (Cluster, error) {
	return nil, errors.New("cluster provider kind: not implemented yet (its Available says why); use the local provider")
}
