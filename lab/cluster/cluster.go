package cluster

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
)

// KubernetesVersion is the release every provider runs: the binaries of
// lab/cluster/kubebuild and, for kind, the node image tag.
const KubernetesVersion = "v1.37.2"

// Cluster is a running cluster as a test sees it.
type Cluster interface {
	// Kubeconfig is the path of an admin kubeconfig (system:masters).
	Kubeconfig() string
	// Stop stops everything the provider started and removes what it
	// left on the host (the state directory's data stays for a warm start).
	Stop(ctx context.Context) error
}

// Provider makes clusters of one kind.
type Provider interface {
	Name() string
	// Available reports whether this machine can run the provider's
	// clusters, and if not, why (for testtier.Need).
	Available() (ok bool, reason string)
	Start(ctx context.Context, o Options) (Cluster, error)
}

// Options configure Start. The zero value is a local cluster in
// DefaultStateDir with one real node on the host.
type Options struct {
	// StateDir holds certificates, kubeconfigs, data, logs and pids
	// (default DefaultStateDir; a test passes t.TempDir()).
	StateDir string
	// BinDir has kube-apiserver, kube-controller-manager, kube-scheduler,
	// kubelet and kubectl (default: scripts/ensure-kube.sh builds them).
	BinDir string
	// RepoDir is the switchyard checkout (for scripts/ and the pause
	// image's source); found from the working directory when empty.
	RepoDir string
	// NoHostNode starts the control plane only.
	NoHostNode bool
	// Images are docker-archive tarballs imported into the host node's
	// containerd (pods use them with imagePullPolicy: Never).
	Images []string
	// PauseImage is a docker-archive tarball of the sandbox image; empty
	// builds the lab's own (a static Go binary that waits for SIGTERM).
	PauseImage string
	// ExtraNodes start more kubelet nodes once the control plane is ready
	// (the storage VM's node: lab/cluster/vmnode*.go).
	ExtraNodes []NodeStarter
	// Log gets one line per step with its duration (nil: discarded).
	Log io.Writer
	// WaitForMachine is how long Start waits while another local cluster
	// runs on this machine (one at a time: ports, cgroups, devices);
	// zero fails at once, naming it.
	WaitForMachine time.Duration
}

// NodeStarter starts one more real node for Start. Processes it starts
// through Local.Spawn are stopped by Stop (and by `switchyard-lab cluster
// down`, a different process), so the starter keeps no state of its own.
type NodeStarter interface {
	// NodeName is the Node object's name; Start waits until it is Ready.
	NodeName() string
	// StartNode starts the node's processes and returns; Local gives it
	// the bootstrap files (WriteNodeFiles), the binaries (BinDir) and Spawn.
	StartNode(ctx context.Context, c *Local) error
}

var providers = map[string]Provider{}

func register(p Provider) { providers[p.Name()] = p }

// Get returns the provider of that name ("local" or "kind").
func Get(name string) (Provider, error) {
	if p, ok := providers[name]; ok {
		return p, nil
	}
	names := make([]string, 0, len(providers))
	for n := range providers {
		names = append(names, n)
	}
	sort.Strings(names)
	return nil, fmt.Errorf("no cluster provider %q (have %s)", name, strings.Join(names, ", "))
}
