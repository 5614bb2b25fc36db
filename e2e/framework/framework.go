package framework

import (
	"context"
	"fmt"
	"time"

	snapclient "github.com/kubernetes-csi/external-snapshotter/client/v8/clientset/versioned"
	"github.com/onsi/ginkgo/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// F holds the clients and settings of one run.
type F struct {
	Config Config
	Rest   *rest.Config
	Kube   kubernetes.Interface
	Snap   snapclient.Interface
	// Conns and ZoneConns are the two releases' connection folders
	// (ZoneConns is nil without a zones release).
	Conns     Store
	ZoneConns Store
	Timings   *Timings
	// SnapshotAPI is empty when the cluster serves VolumeSnapshots, else
	// why not (the snapshot CRDs or the snapshot-controller are missing).
	SnapshotAPI string

	specNamespaces []string
}

// New connects to the cluster of c and checks that the API answers.
func New(ctx context.Context, c Config) (*F, error) {
	rc, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("KUBECONFIG=%s: %w", c.Kubeconfig, err)
	}
	rc.QPS, rc.Burst = 50, 100
	kube, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, err
	}
	snap, err := snapclient.NewForConfig(rc)
	if err != nil {
		return nil, err
	}
	f := &F{Config: c, Rest: rc, Kube: kube, Snap: snap, Timings: NewTimings()}
	// The first call has a deadline of its own: a cluster that is not up
	// fails the suite at once instead of at every spec's first wait.
	probe := rest.CopyConfig(rc)
	probe.Timeout = 30 * time.Second
	if pk, err := kubernetes.NewForConfig(probe); err != nil {
		return nil, err
	} else if _, err := pk.CoreV1().Namespaces().List(ctx, metav1.ListOptions{Limit: 1}); err != nil {
		return nil, fmt.Errorf("the cluster of KUBECONFIG=%s does not answer: %w", c.Kubeconfig, err)
	}
	f.SnapshotAPI = snapshotAPIMissing(kube)
	if f.Conns, err = NewStore(c.Connections, kube, c.DriverNamespace); err != nil {
		return nil, err
	}
	if c.ZonesDriverName != "" {
		if f.ZoneConns, err = NewStore(c.ZonesConnections, kube, c.DriverNamespace); err != nil {
			return nil, fmt.Errorf("E2E_ZONES_CONNECTIONS: %w", err)
		}
	}
	return f, nil
}

// snapshotAPIMissing says why the cluster cannot take VolumeSnapshots,
// or "" when it can.
func snapshotAPIMissing(kube kubernetes.Interface) string {
	if _, err := kube.Discovery().ServerResourcesForGroupVersion("snapshot.storage.k8s.io/v1"); err != nil {
		return "the cluster serves no snapshot.storage.k8s.io/v1 (install the snapshot CRDs and run snapshot-controller): " + err.Error()
	}
	return ""
}

// NeedSnapshots fails the spec when the cluster cannot take snapshots.
func (f *F) NeedSnapshots() {
	ginkgo.GinkgoHelper()
	if f.SnapshotAPI != "" {
		ginkgo.Fail(f.SnapshotAPI)
	}
}
