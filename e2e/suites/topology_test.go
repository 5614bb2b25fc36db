package suites

import (
	"context"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/switchyard-csi/switchyard/e2e/backends"
	"github.com/switchyard-csi/switchyard/e2e/framework"
)

// The zones release (e2e/deploy/zones-values.yaml) reports topology from
// these proxy.nodeTopology.fromRegexp rules: every node's zone is
// "zone-<node name>", and the region rule matches no lab node, so it is
// skipped. The fake node of another zone is labelled as such a node would be.
const (
	extraKey  = "e2e.switchyard.io/extra"
	fakeNode  = "e2e-fake-zone-b"
	fakeZone  = "zone-b"
	zoneTypeA = "zt-a" // serves the real host node's zone, with an extra label
	zoneTypeB = "zt-b" // serves the fake node's zone only
	zonesFam  = "zfs-generic-nfs"
	timingFam = zonesFam + " (zones release)"
)

func zoneOf(node string) string { return "zone-" + node }

var _ = Describe("topology: the three StorageClass modes through the real external-provisioner and scheduler", Ordered, ContinueOnFailure, Label("topology"), func() {
	var (
		fam       backends.Family
		host      string
		zoneKey   string
		regionKey string
	)

	BeforeAll(func(ctx SpecContext) {
		if f.Config.ZonesDriverName == "" || f.Config.ZonesProvisioner == "" {
			skipOrFail("no zones release: set E2E_ZONES_DRIVER_NAME and E2E_ZONES_PROVISIONER (make e2e installs it)")
		}
		var err error
		fam, err = backends.Lookup(zonesFam)
		Expect(err).NotTo(HaveOccurred())
		if ok, why := fam.Available(env); !ok {
			skipOrFail("the zones release's connections are " + zonesFam + ": " + why)
		}
		zoneKey = f.Config.TopologyPrefix + "/zone"
		regionKey = f.Config.TopologyPrefix + "/region"
		host = nodeFor(ctx, backends.Family{})
		f.FakeNode(ctx, fakeNode, map[string]string{zoneKey: fakeZone}, f.Config.ZonesDriverName, []string{zoneKey})
		for conn, zone := range map[string]string{zoneTypeA: zoneOf(host), zoneTypeB: fakeZone} {
			content := fam.Connection(env, conn) + "proxy:\n  perDriver:\n    topology:\n    - requirements:\n        zone: " + zone + "\n"
			if conn == zoneTypeA {
				content += "      extra:\n        " + extraKey + ": \"yes\"\n"
			}
			Expect(f.ZoneConns.Put(ctx, conn, content)).To(Succeed())
		}
		// Each mode rolls the controller out with its flags: the new pod
		// mounts the connection files as they are now. The release's own
		// flags come back at the end.
		old := f.SetProvisionerFlags(ctx, f.Config.ZonesProvisioner, []string{"--immediate-topology=false"})
		DeferCleanup(func(ctx SpecContext) {
			f.RestoreProvisionerArgs(ctx, f.Config.ZonesProvisioner, old)
			for _, conn := range []string{zoneTypeA, zoneTypeB} {
				expectNothingLeft(ctx, fam, conn, nil)
			}
		}, NodeTimeout(8*time.Minute))
	}, NodeTimeout(10*time.Minute))

	It("reports the zone of the real node from the fromRegexp rules (a rule that does not match is skipped)", func(ctx SpecContext) {
		d := f.WaitCSINodeDriver(ctx, host, f.Config.ZonesDriverName, 2*time.Minute)
		Expect(d.TopologyKeys).To(ContainElement(zoneKey))
		Expect(d.TopologyKeys).NotTo(ContainElement(regionKey), "the region rule matches no lab node")
		n, err := f.Kube.CoreV1().Nodes().Get(ctx, host, metav1.GetOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(n.Labels).To(HaveKeyWithValue(zoneKey, zoneOf(host)))
	}, NodeTimeout(3*time.Minute))

	Context("mode 1: Immediate, no allowedTopologies, --immediate-topology=false", Ordered, func() {
		It("binds, with the connection's topology and its extra labels as the PV's node affinity", func(ctx SpecContext) {
			pv := bindImmediate(ctx, "mode 1", zoneTypeA, nil)
			Expect(framework.AffinityTerms(pv)).To(Equal([]string{extraKey + "=yes," + zoneKey + "=" + zoneOf(host)}))
		}, NodeTimeout(6*time.Minute))
		It("never fails on topology: a connection that serves only another zone binds too", func(ctx SpecContext) {
			pv := bindImmediate(ctx, "mode 1", zoneTypeB, nil)
			Expect(framework.AffinityTerms(pv)).To(Equal([]string{zoneKey + "=" + fakeZone}))
		}, NodeTimeout(6*time.Minute))
	})

	Context("mode 2: allowedTopologies, --strict-topology=false", Ordered, func() {
		BeforeAll(func(ctx SpecContext) {
			f.SetProvisionerFlags(ctx, f.Config.ZonesProvisioner, []string{"--strict-topology=false", "--immediate-topology=true"})
		}, NodeTimeout(5*time.Minute))
		It("binds when the connection serves an allowed zone", func(ctx SpecContext) {
			pv := bindImmediate(ctx, "mode 2", zoneTypeB, map[string][]string{zoneKey: {fakeZone}})
			Expect(framework.AffinityTerms(pv)).To(Equal([]string{zoneKey + "=" + fakeZone}))
		}, NodeTimeout(6*time.Minute))
		It("stays Pending with the driver's message as an event when no allowed zone is served", func(ctx SpecContext) {
			expectPending(ctx, zoneTypeA, map[string][]string{zoneKey: {fakeZone}}, "connection "+zoneTypeA+" serves none of the requested topologies")
		}, NodeTimeout(5*time.Minute))
		It("refuses a topology key without the prefix, naming it (bad input)", Label("badinput"), func(ctx SpecContext) {
			expectPending(ctx, zoneTypeA, map[string][]string{"zone": {zoneOf(host)}}, `topology key "zone" does not carry the prefix`)
		}, NodeTimeout(5*time.Minute))
	})

	Context("mode 3: WaitForFirstConsumer, --strict-topology=true", Ordered, func() {
		BeforeAll(func(ctx SpecContext) {
			f.SetProvisionerFlags(ctx, f.Config.ZonesProvisioner, []string{"--strict-topology=true"})
		}, NodeTimeout(5*time.Minute))
		It("makes the volume for the zone of the node the scheduler picked (a node of another zone)", func(ctx SpecContext) {
			pv := bindForPod(ctx, zoneTypeB, fakeNode)
			Expect(framework.AffinityTerms(pv)).To(Equal([]string{zoneKey + "=" + fakeZone}))
		}, NodeTimeout(6*time.Minute))
		It("makes the volume for the real node's zone, from its fromRegexp rule", func(ctx SpecContext) {
			pv := bindForPod(ctx, zoneTypeA, host)
			Expect(framework.AffinityTerms(pv)).To(Equal([]string{extraKey + "=yes," + zoneKey + "=" + zoneOf(host)}))
		}, NodeTimeout(6*time.Minute))
		It("leaves the PVC Pending with the driver's message when the pod's zone is not served", func(ctx SpecContext) {
			ns := f.Namespace(ctx, "mode3-fail")
			sc := f.StorageClass(ctx, "mode3", framework.Class{Driver: f.Config.ZonesDriverName, Parameters: map[string]string{"connection": zoneTypeA},
				Binding: storagev1.VolumeBindingWaitForFirstConsumer})
			f.PVC(ctx, ns, "data", framework.Claim{Class: sc.Name, Size: dataSize})
			f.Pod(ctx, ns, framework.Workload{Name: "consumer", PVC: "data", Script: "sleep 3600", Node: fakeNode, TolerateAll: true})
			_, err := f.WaitEvent(ctx, ns, "data", 3*time.Minute, "connection "+zoneTypeA+" serves none of the requested topologies", fakeZone)
			Expect(err).NotTo(HaveOccurred())
			expectStillPending(ctx, ns, "data")
		}, NodeTimeout(5*time.Minute))
	})
})

// bindImmediate makes an Immediate PVC on a zones connection and returns
// its PV once bound.
func bindImmediate(ctx context.Context, mode, conn string, allowed map[string][]string) *corev1.PersistentVolume {
	GinkgoHelper()
	ns := f.Namespace(ctx, "topo")
	sc := f.StorageClass(ctx, "topo", framework.Class{Driver: f.Config.ZonesDriverName, Parameters: map[string]string{"connection": conn}, Allowed: allowed})
	start := time.Now()
	f.PVC(ctx, ns, "data", framework.Claim{Class: sc.Name, Size: dataSize})
	_, pv := f.WaitPVCBound(ctx, ns, "data", 3*time.Minute)
	f.Timings.Since(timingFam, mode, framework.PVCToBound, start)
	return pv
}

// bindForPod makes a WaitForFirstConsumer PVC and a pod pinned to node,
// and returns the PV once the provisioner made it for that node's zone.
// The pod need not run (a fake node runs nothing; the host node has no
// NFS client).
func bindForPod(ctx context.Context, conn, node string) *corev1.PersistentVolume {
	GinkgoHelper()
	ns := f.Namespace(ctx, "mode3")
	sc := f.StorageClass(ctx, "mode3", framework.Class{Driver: f.Config.ZonesDriverName, Parameters: map[string]string{"connection": conn},
		Binding: storagev1.VolumeBindingWaitForFirstConsumer})
	start := time.Now()
	f.PVC(ctx, ns, "data", framework.Claim{Class: sc.Name, Size: dataSize})
	f.Pod(ctx, ns, framework.Workload{Name: "consumer", PVC: "data", Script: "sleep 3600", Node: node, TolerateAll: true})
	_, pv := f.WaitPVCBound(ctx, ns, "data", 3*time.Minute)
	f.Timings.Since(timingFam, "mode 3", framework.PVCToBound, start)
	return pv
}

// expectPending makes an Immediate PVC that must fail with want.
func expectPending(ctx context.Context, conn string, allowed map[string][]string, want ...string) {
	GinkgoHelper()
	ns := f.Namespace(ctx, "topo-fail")
	sc := f.StorageClass(ctx, "topo", framework.Class{Driver: f.Config.ZonesDriverName, Parameters: map[string]string{"connection": conn}, Allowed: allowed})
	f.PVC(ctx, ns, "data", framework.Claim{Class: sc.Name, Size: dataSize})
	msg, err := f.WaitEvent(ctx, ns, "data", 3*time.Minute, want...)
	Expect(err).NotTo(HaveOccurred())
	GinkgoWriter.Printf("event: %s\n", msg)
	expectStillPending(ctx, ns, "data")
}

func expectStillPending(ctx context.Context, ns, name string) {
	GinkgoHelper()
	p, err := f.Kube.CoreV1().PersistentVolumeClaims(ns).Get(ctx, name, metav1.GetOptions{})
	Expect(err).NotTo(HaveOccurred())
	Expect(string(p.Status.Phase)).To(Equal("Pending"), fmt.Sprintf("PVC %s/%s", ns, name))
	Expect(p.Spec.VolumeName).To(BeEmpty(), "no volume was made")
}
