package suites

import (
	"context"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/switchyard-csi/switchyard/e2e/backends"
	"github.com/switchyard-csi/switchyard/e2e/framework"
)

// Live reload in the cluster: connection files change in the Secret the
// controller mounts, the kubelet refreshes the mounted Secret (about a
// minute), and the proxy picks the change up on the next call, without
// a restart (docs/proxy.md#live-reload). local-hostpath: the host node is
// enough.
var _ = Describe("live reload of connection files", Label("reload", "local-hostpath", "host"), func() {
	var fam backends.Family

	BeforeEach(func() {
		var err error
		fam, err = backends.Lookup("local-hostpath")
		Expect(err).NotTo(HaveOccurred())
	})

	It("serves a connection file added while the driver runs, for a new StorageClass, without a restart", func(ctx SpecContext) {
		before := driverPods(ctx)
		conn := framework.UniqueName("e2e-new")
		seen := putConnection(ctx, conn, backends.ConnectionFile(env, fam, conn))
		f.Timings.Record("local-hostpath", "reload", "Secret changed→file in the driver's pods", seen)
		ns := f.Namespace(ctx, "reload")
		start := time.Now()
		claimOn(ctx, ns, "data", conn)
		f.WaitPVCBound(ctx, ns, "data", 3*time.Minute)
		f.Timings.Since("local-hostpath", "reload", "new connection→PVC Bound", start)
		Expect(driverPods(ctx)).To(Equal(before), "no driver pod restarted or was replaced")
	}, NodeTimeout(10*time.Minute))

	It("fails only the PVCs of a broken connection file, with an event naming the file", func(ctx SpecContext) {
		broken := framework.UniqueName("e2e-broken")
		putConnection(ctx, broken, "driver: local-hostpath\nlocal-hostpath:\n  shareBasePath: data\n  controllerBasePath: /var/lib/csi-local-hostpath/x\n")
		healthy := ensureConnection(ctx, fam)
		ns := f.Namespace(ctx, "broken")
		claimOn(ctx, ns, "broken", broken)
		claimOn(ctx, ns, "healthy", healthy)
		msg, err := f.WaitEvent(ctx, ns, "broken", 5*time.Minute, broken+".yaml", "local-hostpath.shareBasePath")
		Expect(err).NotTo(HaveOccurred())
		GinkgoWriter.Printf("event: %s\n", msg)
		f.WaitPVCBound(ctx, ns, "healthy", 3*time.Minute)
		expectStillPending(ctx, ns, "broken")
	}, NodeTimeout(10*time.Minute))
})

// putConnection adds a connection file, waits until the driver's pods
// see it, and removes it when the spec ends, after the spec's volumes
// (cleanups run last-in, first-out).
func putConnection(ctx context.Context, conn, content string) time.Duration {
	GinkgoHelper()
	DeferCleanup(func(ctx SpecContext) { Expect(f.Conns.Delete(ctx, conn)).To(Succeed()) })
	return putAndWait(ctx, conn, content)
}

// claimOn makes a WaitForFirstConsumer claim on conn with a pod on the
// host node to consume it.
func claimOn(ctx context.Context, ns, name, conn string) {
	GinkgoHelper()
	sc := f.StorageClass(ctx, name, framework.Class{Driver: f.Config.DriverName, Parameters: map[string]string{"connection": conn},
		Binding: storagev1.VolumeBindingWaitForFirstConsumer})
	f.PVC(ctx, ns, name, framework.Claim{Class: sc.Name, Size: dataSize})
	f.Pod(ctx, ns, framework.Workload{Name: name, PVC: name, Script: "sleep 3600", Node: nodeFor(ctx, backends.Family{})})
}

// driverPods is the main release's pods on the real nodes by name with
// their UID and the restarts of the driver container.
//   - Only the main release: the topology specs roll the zones release's
//     controller in the same namespace, and a pod of it still terminating
//     is not a reload restart.
//   - Only pods on real nodes: the release's DaemonSets also place a pod
//     on each fake node a topology spec made (it never runs), and the pod
//     garbage collector deletes it some time after that spec removed its
//     node, which may be in the middle of this spec.
//   - Only the driver container: a sidecar that lost its lease on a loaded
//     machine and restarted says nothing about live reload.
func driverPods(ctx context.Context) map[string]string {
	GinkgoHelper()
	nodes, err := f.Kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: "!" + framework.FakeLabel})
	Expect(err).NotTo(HaveOccurred())
	realNode := map[string]bool{}
	for _, n := range nodes.Items {
		realNode[n.Name] = true
	}
	l, err := f.Kube.CoreV1().Pods(f.Config.DriverNamespace).List(ctx, metav1.ListOptions{
		LabelSelector: "app.kubernetes.io/instance=" + f.Config.Release})
	Expect(err).NotTo(HaveOccurred())
	out := map[string]string{}
	for _, p := range l.Items {
		if p.DeletionTimestamp != nil || (p.Spec.NodeName != "" && !realNode[p.Spec.NodeName]) {
			continue
		}
		state := "not started"
		for _, c := range p.Status.ContainerStatuses {
			if c.Name == driverContainer {
				state = fmt.Sprintf("restarts %d", c.RestartCount)
				if t := c.LastTerminationState.Terminated; t != nil {
					state += fmt.Sprintf(" (last exit %d %s at %s)", t.ExitCode, t.Reason, t.FinishedAt.Format(time.RFC3339))
				}
			}
		}
		out[p.Name] = fmt.Sprintf("%s %s", p.UID, state)
	}
	Expect(out).NotTo(BeEmpty(), "no pod of release %s in namespace %s", f.Config.Release, f.Config.DriverNamespace)
	return out
}

// driverContainer is the chart's name for the driver's container in the
// controller and node pods (deploy/charts/switchyard/templates).
const driverContainer = "switchyard"
