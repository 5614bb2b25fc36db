package suites

// Specs of issue 19's features on the zfs-generic-nfs family: a
// VolumeGroupSnapshot of two PVCs restored both, and a PVC whose
// VolumeAttributesClass changes a ZFS property on the storage.
//
// What the cluster needs (docs/features.md, "Cluster pieces"):
//   - the groupsnapshot.storage.k8s.io/v1 CRDs (VolumeGroupSnapshot,
//     -Class, -Content) and the snapshot-controller with
//     --feature-gates=CSIVolumeGroupSnapshot=true; the csi-snapshotter
//     sidecar with --feature-gates=CSIVolumeGroupSnapshot=true;
//   - VolumeAttributesClass served (storage.k8s.io/v1, GA in 1.34; the
//     VolumeAttributesClass feature gate on older clusters) and the
//     csi-resizer sidecar with --feature-gates=VolumeAttributesClass=true
//     (it calls ControllerModifyVolume), csi-provisioner likewise (it
//     passes mutable_parameters to CreateVolume);
//   - switchyard with the GroupController service and MODIFY_VOLUME
//     (the hooks named in docs/features.md).

import (
	"context"
	"fmt"
	"strings"
	"time"

	groupv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumegroupsnapshot/v1"
	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/switchyard-csi/switchyard/e2e/backends"
	"github.com/switchyard-csi/switchyard/e2e/framework"
)

// Both run on the features release (features_release_test.go): a
// Deployment-mode controller on the host, its node plugin on the storage
// VM's node, the main release's connection. Ordered so the release is
// installed once for both; ContinueOnFailure so one failing does not skip
// the other.
var _ = Describe("group snapshots and volume attributes", Label("features"), Ordered, ContinueOnFailure, func() {
	var conn, node string
	BeforeAll(func(ctx SpecContext) {
		fam := zfsFamily()
		node = nodeFor(ctx, fam)
		conn = ensureConnection(ctx, fam)
		installFeaturesRelease(ctx, node)
	}, NodeTimeout(20*time.Minute))
	AfterAll(func(ctx SpecContext) { featuresRel.uninstall(ctx) }, NodeTimeout(6*time.Minute))

	It("zfs-generic-nfs: a VolumeGroupSnapshot of two PVCs written at one instant restores both", Label("zfs-generic-nfs", "vm", "groupsnapshot"),
		func(ctx SpecContext) { groupSnapshot(ctx, conn, node) }, NodeTimeout(20*time.Minute))
	It("zfs-generic-nfs: changing a PVC's VolumeAttributesClass changes the ZFS property; an immutable key is refused", Label("zfs-generic-nfs", "vm", "vac"),
		func(ctx SpecContext) { volumeAttributesClass(ctx, conn, node) }, NodeTimeout(15*time.Minute))
	It("zfs-generic-nfs: after the storage host lost an encrypted volume's key, a pod starts once its class names the controller-publish secret; without it the attach fails naming the dataset", Label("zfs-generic-nfs", "vm", "encrypt"),
		func(ctx SpecContext) { encryptedPublish(ctx, conn, node) }, NodeTimeout(15*time.Minute))
})

func zfsFamily() backends.Family {
	GinkgoHelper()
	fam, err := backends.Lookup("zfs-generic-nfs")
	Expect(err).NotTo(HaveOccurred())
	if ok, why := fam.Available(env); !ok {
		skipOrFail(why)
	}
	return fam
}

// needGroupSnapshots skips unless the cluster serves the v1 group snapshot API.
func needGroupSnapshots(ctx context.Context) {
	GinkgoHelper()
	f.NeedSnapshots()
	if _, err := f.Snap.GroupsnapshotV1().VolumeGroupSnapshotClasses().List(ctx, metav1.ListOptions{Limit: 1}); err != nil {
		skipOrFail("the cluster does not serve groupsnapshot.storage.k8s.io/v1 (install the VolumeGroupSnapshot CRDs and run the snapshot-controller with --feature-gates=CSIVolumeGroupSnapshot=true): " + err.Error())
	}
}

func groupSnapshot(ctx context.Context, conn, node string) {
	fam := zfsFamily()
	needGroupSnapshots(ctx)
	ns := f.Namespace(ctx, "grp")
	sc := f.StorageClass(ctx, "grp", framework.Class{Driver: featuresDriver, Parameters: fam.StorageParameters(env, conn), Binding: storagev1.VolumeBindingWaitForFirstConsumer})
	// One pattern for both volumes, written before the group is taken:
	// a group snapshot is one instant, so both members hold it.
	pattern := "switchyard-e2e group " + ns + " " + time.Now().UTC().Format(time.RFC3339Nano)
	podEnv := map[string]string{"PATTERN": pattern, "BYTES": fmt.Sprint(1 << 20), "TARGET_KIB": "0"}

	By("two PVCs with a writer pod each")
	for _, n := range []string{"a", "b"} {
		f.PVC(ctx, ns, "data-"+n, framework.Claim{Class: sc.Name, Size: dataSize})
		f.Pod(ctx, ns, framework.Workload{Name: "writer-" + n, PVC: "data-" + n, Script: framework.WriterScript, Node: node, Env: podEnv})
	}
	for _, n := range []string{"a", "b"} {
		f.WaitPVCBound(ctx, ns, "data-"+n, 5*time.Minute)
		f.WaitPodReady(ctx, ns, "writer-"+n, 5*time.Minute)
	}

	By("a VolumeGroupSnapshot of both (label selector)")
	takeGroupSnapshot(ctx, featuresDriver, ns, "group", conn)

	By("the member VolumeSnapshots restore both volumes with the pattern")
	members := groupMembers(ctx, ns, "group")
	Expect(members).To(HaveLen(2), "one VolumeSnapshot per PVC")
	for i, m := range members {
		f.WaitSnapshotReady(ctx, ns, m, 3*time.Minute)
		name := fmt.Sprintf("restored-%d", i)
		f.PVC(ctx, ns, name, framework.Claim{Class: sc.Name, Size: dataSize, FromSnapshot: m})
		f.Pod(ctx, ns, framework.Workload{Name: "reader-" + name, PVC: name, Script: framework.ReaderScript, Node: node, Env: podEnv})
	}
	for i := range members {
		msg := f.WaitPodSucceeded(ctx, ns, fmt.Sprintf("reader-restored-%d", i), 5*time.Minute)
		Expect(msg).To(HavePrefix("pattern ok"), "a restored member holds what its writer wrote")
	}
}

// takeGroupSnapshot makes a VolumeGroupSnapshotClass and a
// VolumeGroupSnapshot of every labelled PVC in ns, waits until it is
// ready and checks its content: the proxy's group handle on connection
// conn and one member per PVC. It returns the group id (the handle
// without g:<conn>/).
func takeGroupSnapshot(ctx context.Context, driver, ns, name, conn string) string {
	GinkgoHelper()
	gclass := &groupv1.VolumeGroupSnapshotClass{
		ObjectMeta:     metav1.ObjectMeta{Name: framework.UniqueName("e2e-grp"), Labels: map[string]string{framework.LabelKey: "true"}},
		Driver:         driver,
		DeletionPolicy: snapv1.VolumeSnapshotContentDelete,
	}
	_, err := f.Snap.GroupsnapshotV1().VolumeGroupSnapshotClasses().Create(ctx, gclass, metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func(ctx context.Context) {
		_ = f.Snap.GroupsnapshotV1().VolumeGroupSnapshotClasses().Delete(ctx, gclass.Name, metav1.DeleteOptions{})
	})
	vgs := &groupv1.VolumeGroupSnapshot{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: groupv1.VolumeGroupSnapshotSpec{
			Source:                       groupv1.VolumeGroupSnapshotSource{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{framework.LabelKey: "true"}}},
			VolumeGroupSnapshotClassName: &gclass.Name,
		},
	}
	_, err = f.Snap.GroupsnapshotV1().VolumeGroupSnapshots(ns).Create(ctx, vgs, metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func(ctx context.Context) { deleteGroupSnapshot(ctx, ns, name) }, NodeTimeout(5*time.Minute))

	var content string
	Expect(f.Wait(ctx, "the VolumeGroupSnapshot to be ready", 5*time.Minute, func(ctx context.Context) (bool, string, error) {
		g, err := f.Snap.GroupsnapshotV1().VolumeGroupSnapshots(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return framework.Retry(err)
		}
		if e := g.Status; e != nil && e.Error != nil && e.Error.Message != nil {
			return false, "error: " + *e.Error.Message, nil
		}
		if g.Status != nil && g.Status.BoundVolumeGroupSnapshotContentName != nil {
			content = *g.Status.BoundVolumeGroupSnapshotContentName
		}
		ready := g.Status != nil && g.Status.ReadyToUse != nil && *g.Status.ReadyToUse
		return ready, fmt.Sprintf("ready=%v content=%s", ready, content), nil
	})).To(Succeed())
	gc, err := f.Snap.GroupsnapshotV1().VolumeGroupSnapshotContents().Get(ctx, content, metav1.GetOptions{})
	Expect(err).NotTo(HaveOccurred())
	Expect(gc.Status).NotTo(BeNil())
	Expect(gc.Status.VolumeGroupSnapshotHandle).NotTo(BeNil())
	Expect(*gc.Status.VolumeGroupSnapshotHandle).To(HavePrefix("g:"+conn+"/"), "the proxy's group handle names the connection")
	Expect(gc.Status.VolumeSnapshotInfoList).To(HaveLen(2))
	return strings.TrimPrefix(*gc.Status.VolumeGroupSnapshotHandle, "g:"+conn+"/")
}

// groupMembers are the VolumeSnapshots the snapshot-controller made for a
// group (owned by it).
func groupMembers(ctx context.Context, ns, group string) []string {
	GinkgoHelper()
	var out []string
	Expect(f.Wait(ctx, "the group's member VolumeSnapshots", 2*time.Minute, func(ctx context.Context) (bool, string, error) {
		list, err := f.Snap.SnapshotV1().VolumeSnapshots(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return framework.Retry(err)
		}
		out = nil
		for _, vs := range list.Items {
			for _, o := range vs.OwnerReferences {
				if o.Kind == "VolumeGroupSnapshot" && o.Name == group {
					out = append(out, vs.Name)
				}
			}
		}
		return len(out) >= 2, fmt.Sprintf("%d members", len(out)), nil
	})).To(Succeed())
	return out
}

func deleteGroupSnapshot(ctx context.Context, ns, name string) {
	err := f.Snap.GroupsnapshotV1().VolumeGroupSnapshots(ns).Delete(ctx, name, metav1.DeleteOptions{})
	if apierrors.IsNotFound(err) {
		return
	}
	Expect(err).NotTo(HaveOccurred())
	Expect(f.Wait(ctx, "VolumeGroupSnapshot "+name+" gone", 4*time.Minute, func(ctx context.Context) (bool, string, error) {
		_, err := f.Snap.GroupsnapshotV1().VolumeGroupSnapshots(ns).Get(ctx, name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), fmt.Sprint(err), nil
	})).To(Succeed())
}

func volumeAttributesClass(ctx context.Context, conn, node string) {
	fam := zfsFamily()
	needVAC(ctx)
	ns := f.Namespace(ctx, "vac")
	sc := f.StorageClass(ctx, "vac", framework.Class{Driver: featuresDriver, Parameters: fam.StorageParameters(env, conn), Binding: storagev1.VolumeBindingWaitForFirstConsumer})
	lz4 := attributesClass(ctx, featuresDriver, map[string]string{"compression": "lz4", "atime": "off"})
	zstd := attributesClass(ctx, featuresDriver, map[string]string{"compression": "zstd", "atime": "on"})
	fixed := attributesClass(ctx, featuresDriver, map[string]string{"volblocksize": "8K"})

	By("a PVC made with the lz4 class")
	// The class is in the claim from its creation (Kubernetes refuses to
	// add one to a claim that is not bound yet), so CreateVolume carries
	// its mutable_parameters.
	pvcWithVAC(ctx, ns, "data", sc.Name, lz4)
	f.Pod(ctx, ns, framework.Workload{Name: "writer", PVC: "data", Script: framework.WriterScript, Node: node,
		Env: map[string]string{"PATTERN": "vac " + ns, "BYTES": "4096", "TARGET_KIB": "0"}})
	_, pv := f.WaitPVCBound(ctx, ns, "data", 5*time.Minute)
	ds := zfsDataset(conn, strings.TrimPrefix(pv.Spec.CSI.VolumeHandle, "v:"+conn+"/"))
	waitVAC(ctx, ns, "data", lz4)
	expectZFSProp(ctx, ds, "compression", "lz4")
	expectZFSProp(ctx, ds, "atime", "off")

	By("switching the PVC to the zstd class while it is mounted")
	patchVAC(ctx, ns, "data", zstd)
	waitVAC(ctx, ns, "data", zstd)
	expectZFSProp(ctx, ds, "compression", "zstd")
	expectZFSProp(ctx, ds, "atime", "on")

	By("a class with an immutable key is refused, naming it; the volume keeps its properties")
	patchVAC(ctx, ns, "data", fixed)
	_, err := f.WaitEvent(ctx, ns, "data", 3*time.Minute, "volblocksize")
	Expect(err).NotTo(HaveOccurred(), "an event on the PVC names the refused key")
	expectZFSProp(ctx, ds, "compression", "zstd")
	patchVAC(ctx, ns, "data", zstd) // let the PVC settle before cleanup
}

func attributesClass(ctx context.Context, driver string, params map[string]string) string {
	GinkgoHelper()
	vac := &storagev1.VolumeAttributesClass{
		ObjectMeta: metav1.ObjectMeta{Name: framework.UniqueName("e2e-vac"), Labels: map[string]string{framework.LabelKey: "true"}},
		DriverName: driver,
		Parameters: params,
	}
	_, err := f.Kube.StorageV1().VolumeAttributesClasses().Create(ctx, vac, metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func(ctx context.Context) {
		_ = f.Kube.StorageV1().VolumeAttributesClasses().Delete(ctx, vac.Name, metav1.DeleteOptions{})
	})
	return vac.Name
}

func patchVAC(ctx context.Context, ns, pvc, class string) {
	GinkgoHelper()
	_, err := f.Kube.CoreV1().PersistentVolumeClaims(ns).Patch(ctx, pvc, types.MergePatchType,
		[]byte(`{"spec":{"volumeAttributesClassName":"`+class+`"}}`), metav1.PatchOptions{})
	Expect(err).NotTo(HaveOccurred())
}

// waitVAC waits until the PVC's current class is class (the resizer
// called ControllerModifyVolume and it succeeded).
func waitVAC(ctx context.Context, ns, pvc, class string) {
	GinkgoHelper()
	Expect(f.Wait(ctx, "PVC "+pvc+" to run with VolumeAttributesClass "+class, 5*time.Minute, func(ctx context.Context) (bool, string, error) {
		p, err := f.Kube.CoreV1().PersistentVolumeClaims(ns).Get(ctx, pvc, metav1.GetOptions{})
		if err != nil {
			return framework.Retry(err)
		}
		cur := ""
		if p.Status.CurrentVolumeAttributesClassName != nil {
			cur = *p.Status.CurrentVolumeAttributesClassName
		}
		return cur == class, "current " + cur + " " + modifyStatus(p), nil
	})).To(Succeed())
}

func modifyStatus(p *corev1.PersistentVolumeClaim) string {
	if s := p.Status.ModifyVolumeStatus; s != nil {
		return fmt.Sprintf("(modify %s to %s)", s.Status, s.TargetVolumeAttributesClassName)
	}
	return ""
}

func zfsDataset(conn, id string) string {
	pool := env.Lab.ZFS.Pool
	if pool == "" {
		pool = "tank"
	}
	return pool + "/k8s/" + conn + "/" + id
}

// expectZFSProp asks the storage host itself (not the driver).
func expectZFSProp(ctx context.Context, ds, prop, want string) {
	GinkgoHelper()
	Expect(f.Wait(ctx, prop+" of "+ds+" to be "+want, time.Minute, func(ctx context.Context) (bool, string, error) {
		got, err := zfsGetProp(ctx, ds, prop)
		if err != nil {
			return framework.Retry(err)
		}
		return got == want, got, nil
	})).To(Succeed())
}

func zfsGetProp(ctx context.Context, ds, prop string) (string, error) {
	return storageHostRun(ctx, "zfs get -H -o value "+prop+" "+ds)
}
