package framework

import (
	"context"
	"time"

	"github.com/onsi/ginkgo/v2"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
)

// FakeLabel marks the Node objects that stand in for nodes of other
// zones: no kubelet runs them, so pods bound there never start, but the
// scheduler and the external-provisioner treat them as nodes.
const FakeLabel = "switchyard-e2e/fake-node"

// FakeNode creates a Node with labels and a CSINode registering driver
// with topologyKeys, as node-driver-registrar would on a real node. Both
// are removed when the spec ends.
func (f *F) FakeNode(ctx context.Context, name string, labels map[string]string, driver string, topologyKeys []string) {
	ginkgo.GinkgoHelper()
	l := map[string]string{"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", FakeLabel: "true", LabelKey: "true"}
	for k, v := range labels {
		l[k] = v
	}
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: l}}
	n, err := f.Kube.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{})
	must(err)
	ginkgo.DeferCleanup(func(ctx context.Context) {
		err := f.Kube.CoreV1().Nodes().Delete(ctx, name, metav1.DeleteOptions{})
		if !apierrors.IsNotFound(err) {
			must(err)
		}
	})
	// Ready with room for pods, so the scheduler considers it until the
	// node lifecycle controller notices that no kubelet reports (the test
	// pods tolerate the taints it adds then).
	// The node lifecycle controller writes to a new node at once: retry
	// on its conflicts.
	must(retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := f.Kube.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		cur.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "SwitchyardE2EFake",
			LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()}}
		room := corev1.ResourceList{corev1.ResourcePods: resource.MustParse("10"), corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("4Gi")}
		cur.Status.Capacity, cur.Status.Allocatable = room, room
		_, err = f.Kube.CoreV1().Nodes().UpdateStatus(ctx, cur, metav1.UpdateOptions{})
		return err
	}))
	owner := metav1.OwnerReference{APIVersion: "v1", Kind: "Node", Name: name, UID: n.UID}
	cn := &storagev1.CSINode{
		ObjectMeta: metav1.ObjectMeta{Name: name, OwnerReferences: []metav1.OwnerReference{owner}, Labels: map[string]string{LabelKey: "true"}},
		Spec:       storagev1.CSINodeSpec{Drivers: []storagev1.CSINodeDriver{{Name: driver, NodeID: "n=" + name, TopologyKeys: topologyKeys}}},
	}
	_, err = f.Kube.StorageV1().CSINodes().Create(ctx, cn, metav1.CreateOptions{})
	must(err)
	ginkgo.DeferCleanup(func(ctx context.Context) {
		err := f.Kube.StorageV1().CSINodes().Delete(ctx, name, metav1.DeleteOptions{})
		if !apierrors.IsNotFound(err) {
			must(err)
		}
	})
}

// RealNodes are the Ready nodes that a kubelet runs (not FakeNode's).
func (f *F) RealNodes(ctx context.Context) []corev1.Node {
	ginkgo.GinkgoHelper()
	l, err := f.Kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: "!" + FakeLabel})
	must(err)
	var out []corev1.Node
	for _, n := range l.Items {
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
				out = append(out, n)
			}
		}
	}
	return out
}

// WaitCSINodeDriver waits until node has registered driver and returns
// its topology keys (node-driver-registrar has run NodeGetInfo).
func (f *F) WaitCSINodeDriver(ctx context.Context, node, driver string, timeout time.Duration) storagev1.CSINodeDriver {
	ginkgo.GinkgoHelper()
	var d storagev1.CSINodeDriver
	must(f.Wait(ctx, "driver "+driver+" registered on node "+node, timeout, func(ctx context.Context) (bool, string, error) {
		cn, err := f.Kube.StorageV1().CSINodes().Get(ctx, node, metav1.GetOptions{})
		if err != nil {
			return Retry(err)
		}
		for _, x := range cn.Spec.Drivers {
			if x.Name == driver {
				d = x
				return true, "", nil
			}
		}
		var names []string
		for _, x := range cn.Spec.Drivers {
			names = append(names, x.Name)
		}
		return false, "registered: " + join(names), nil
	}))
	return d
}

func join(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	out := s[0]
	for _, x := range s[1:] {
		out += ", " + x
	}
	return out
}
