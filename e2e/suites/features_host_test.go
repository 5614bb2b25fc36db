package suites

// The controller-level proof of issue 19's features on the host node, with
// the ZFS simulator that make e2e starts on the host when there is no
// storage VM (E2E_VM=0): no pod mounts anything (the host has no NFS
// client), so these specs check what the real sidecars ask of the driver
// and what the storage then holds. The data-path versions (pods writing
// at one instant, a class changed under a mounted volume) are the specs
// labelled vm in features_test.go.

import (
	"context"
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/switchyard-csi/switchyard/e2e/backends"
	"github.com/switchyard-csi/switchyard/e2e/framework"
)

var _ = Describe("group snapshots and volume attributes through the controller", Label("features"), func() {
	It("zfs-generic-nfs: a PVC made with a VolumeAttributesClass has its ZFS properties, a new class changes them, an immutable key is refused", Label("zfs-generic-nfs", "vac", "controller"),
		func(ctx SpecContext) { controllerVAC(ctx) }, NodeTimeout(12*time.Minute))
	It("zfs-generic-nfs: a VolumeGroupSnapshot of two Immediate PVCs is one snapshot name on both datasets and restores into two PVCs that bind", Label("zfs-generic-nfs", "groupsnapshot", "controller"),
		func(ctx SpecContext) { controllerGroupSnapshot(ctx) }, NodeTimeout(15*time.Minute))
})

// needVAC skips unless the cluster serves storage.k8s.io/v1 VolumeAttributesClass.
func needVAC(ctx context.Context) {
	GinkgoHelper()
	if _, err := f.Kube.StorageV1().VolumeAttributesClasses().List(ctx, metav1.ListOptions{Limit: 1}); err != nil {
		skipOrFail("the cluster does not serve storage.k8s.io/v1 VolumeAttributesClass: " + err.Error())
	}
}

// pvcWithVAC creates a labelled claim that names a VolumeAttributesClass
// from the start, so CreateVolume carries its mutable_parameters (an
// Immediate claim would be provisioned before a later patch).
func pvcWithVAC(ctx context.Context, ns, name, class, vac string) {
	GinkgoHelper()
	mode := corev1.PersistentVolumeFilesystem
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{framework.LabelKey: "true"}},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes:               []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			StorageClassName:          &class,
			VolumeAttributesClassName: &vac,
			VolumeMode:                &mode,
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceStorage: resource.MustParse(dataSize),
			}},
		},
	}
	_, err := f.Kube.CoreV1().PersistentVolumeClaims(ns).Create(ctx, pvc, metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func(ctx context.Context) { f.DeletePVC(ctx, ns, name) }, NodeTimeout(5*time.Minute))
}

// controllerVAC runs on the zones release too (a Deployment on the host):
// with the storage VM, the main release's connection pins its volumes to
// the VM's node, whose per-node csi-provisioner takes Immediate claims only
// slowly or not at all (the first VM run: Pending for 5 minutes while the
// VM's driver pod restarted), and this spec is about the controller.
func controllerVAC(ctx context.Context) {
	fam := zfsFamily()
	needVAC(ctx)
	conn, driver := zonesConnection(ctx, fam, "e2e-vac-")
	ns := f.Namespace(ctx, "vac-ctl")
	sc := f.StorageClass(ctx, "vac-ctl", framework.Class{Driver: driver, Parameters: fam.StorageParameters(env, conn),
		Binding: storagev1.VolumeBindingImmediate}).Name
	lz4 := attributesClass(ctx, driver, map[string]string{"compression": "lz4", "atime": "off"})
	zstd := attributesClass(ctx, driver, map[string]string{"compression": "zstd", "atime": "on", "recordsize": "16K"})
	fixed := attributesClass(ctx, driver, map[string]string{"volblocksize": "8K"})

	By("a PVC made with the lz4 class: CreateVolume sets its properties")
	pvcWithVAC(ctx, ns, "data", sc, lz4)
	_, pv := f.WaitPVCBound(ctx, ns, "data", 5*time.Minute)
	ds := zfsDataset(conn, strings.TrimPrefix(pv.Spec.CSI.VolumeHandle, "v:"+conn+"/"))
	waitVAC(ctx, ns, "data", lz4)
	expectZFSProp(ctx, ds, "compression", "lz4")
	expectZFSProp(ctx, ds, "atime", "off")

	By("the zstd class: csi-resizer's ControllerModifyVolume changes them on the storage")
	patchVAC(ctx, ns, "data", zstd)
	waitVAC(ctx, ns, "data", zstd)
	expectZFSProp(ctx, ds, "compression", "zstd")
	expectZFSProp(ctx, ds, "atime", "on")
	expectZFSProp(ctx, ds, "recordsize", "16K")

	By("a class with a key fixed at creation is refused with an event naming it; nothing changes")
	patchVAC(ctx, ns, "data", fixed)
	_, err := f.WaitEvent(ctx, ns, "data", 3*time.Minute, "volblocksize")
	Expect(err).NotTo(HaveOccurred(), "an event on the PVC names the refused key")
	expectZFSProp(ctx, ds, "compression", "zstd")
	p, err := f.Kube.CoreV1().PersistentVolumeClaims(ns).Get(ctx, "data", metav1.GetOptions{})
	Expect(err).NotTo(HaveOccurred())
	Expect(p.Status.CurrentVolumeAttributesClassName).NotTo(BeNil())
	Expect(*p.Status.CurrentVolumeAttributesClassName).To(Equal(zstd), "the refused class is not current "+modifyStatus(p))
	patchVAC(ctx, ns, "data", zstd) // let the PVC settle before cleanup
}

// controllerGroupSnapshot runs on the zones release, whose controller is a
// Deployment: the main release's controller runs per node (strategy
// node) with csi-snapshotter --node-deployment, and that sidecar (v8.7)
// watches only the VolumeGroupSnapshotContents labelled with its node,
// a label the snapshot-controller puts on VolumeSnapshotContents only; a
// group would wait there forever (docs/features.md, "Cluster pieces").
func controllerGroupSnapshot(ctx context.Context) {
	fam := zfsFamily()
	needGroupSnapshots(ctx)
	conn, driver := zonesConnection(ctx, fam, "e2e-grp-")
	ns := f.Namespace(ctx, "grp-ctl")
	sc := f.StorageClass(ctx, "grp-ctl", framework.Class{Driver: driver, Parameters: fam.StorageParameters(env, conn),
		Binding: storagev1.VolumeBindingImmediate}).Name

	By("two Immediate PVCs")
	datasets := map[string]string{}
	for _, n := range []string{"a", "b"} {
		f.PVC(ctx, ns, "data-"+n, framework.Claim{Class: sc, Size: dataSize})
	}
	for _, n := range []string{"a", "b"} {
		_, pv := f.WaitPVCBound(ctx, ns, "data-"+n, 5*time.Minute)
		datasets[n] = zfsDataset(conn, strings.TrimPrefix(pv.Spec.CSI.VolumeHandle, "v:"+conn+"/"))
	}

	By("a VolumeGroupSnapshot of both: one zfs snapshot name on both datasets")
	gid := takeGroupSnapshot(ctx, driver, ns, "group", conn)
	for _, ds := range datasets {
		Expect(zfsSnapshots(ctx, ds)).To(ContainElement(ds+"@"+gid), "the group's snapshot of "+ds)
	}

	By("the member VolumeSnapshots restore into two PVCs that bind")
	members := groupMembers(ctx, ns, "group")
	Expect(members).To(HaveLen(2), "one VolumeSnapshot per PVC")
	for i, m := range members {
		f.WaitSnapshotReady(ctx, ns, m, 3*time.Minute)
		f.PVC(ctx, ns, fmt.Sprintf("restored-%d", i), framework.Claim{Class: sc, Size: dataSize, FromSnapshot: m})
	}
	for i := range members {
		_, pv := f.WaitPVCBound(ctx, ns, fmt.Sprintf("restored-%d", i), 5*time.Minute)
		Expect(pv.Spec.CSI.VolumeHandle).To(HavePrefix("v:"+conn+"/"), "restored on the group's connection")
	}
}

// restartZonesController rolls the zones release's controller Deployment
// (E2E_ZONES_PROVISIONER is <deployment>/csi-provisioner) and waits for it.
func restartZonesController(ctx context.Context) {
	GinkgoHelper()
	dep, _, _ := strings.Cut(f.Config.ZonesProvisioner, "/")
	patch := fmt.Sprintf(`{"spec":{"template":{"metadata":{"annotations":{"e2e.switchyard.lab/restarted-at":%q}}}}}`, time.Now().UTC().Format(time.RFC3339Nano))
	_, err := f.Kube.AppsV1().Deployments(f.Config.DriverNamespace).Patch(ctx, dep, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
	Expect(err).NotTo(HaveOccurred())
	f.WaitRollout(ctx, dep, 4*time.Minute)
}

// zfsSnapshots lists a dataset's snapshots on the storage host itself.
func zfsSnapshots(ctx context.Context, ds string) []string {
	GinkgoHelper()
	return strings.Fields(zfsRun(ctx, "zfs list -H -t snapshot -o name -r "+ds))
}

// zonesConnection writes fam's connection (no topology: the zones
// controller runs on the host and reaches the ZFS host from there) into the
// zones release's Secret as <prefix><family>, restarts its controller so
// it reads it, and returns the connection and the zones driver's name.
// Without a zones release the spec skips.
func zonesConnection(ctx context.Context, fam backends.Family, prefix string) (string, string) {
	GinkgoHelper()
	if f.Config.ZonesDriverName == "" || f.ZoneConns == nil {
		skipOrFail("no zones release (a controller Deployment on the host): set E2E_ZONES_DRIVER_NAME and E2E_ZONES_CONNECTIONS (make e2e installs it)")
	}
	conn := prefix + fam.Short
	Expect(f.ZoneConns.Put(ctx, conn, fam.Connection(env, conn))).To(Succeed())
	DeferCleanup(func(ctx context.Context) { _ = f.ZoneConns.Delete(ctx, conn) })
	// The zones controller's image has no cat for WaitConnectionFile: a
	// new pod mounts the Secret as it is now instead.
	restartZonesController(ctx)
	return conn, f.Config.ZonesDriverName
}
