package framework

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// must fails the spec on err, from the caller's line.
func must(err error) {
	ginkgo.GinkgoHelper()
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
}

// Class is what a spec asks of a StorageClass.
type Class struct {
	Driver     string
	Parameters map[string]string
	Binding    storagev1.VolumeBindingMode // default Immediate
	// Allowed is allowedTopologies as key -> values, one term.
	Allowed map[string][]string
	// MountOptions become the PVs' mountOptions (the node's mount flags).
	MountOptions []string
}

// StorageClass creates a StorageClass (reclaim Delete, expansion
// allowed), removed when the spec ends.
func (f *F) StorageClass(ctx context.Context, prefix string, c Class) *storagev1.StorageClass {
	ginkgo.GinkgoHelper()
	binding := c.Binding
	if binding == "" {
		binding = storagev1.VolumeBindingImmediate
	}
	reclaim := corev1.PersistentVolumeReclaimDelete
	expand := true
	sc := &storagev1.StorageClass{
		ObjectMeta:           metav1.ObjectMeta{Name: UniqueName("e2e-" + prefix), Labels: map[string]string{LabelKey: "true"}},
		Provisioner:          c.Driver,
		Parameters:           c.Parameters,
		ReclaimPolicy:        &reclaim,
		AllowVolumeExpansion: &expand,
		VolumeBindingMode:    &binding,
		MountOptions:         c.MountOptions,
	}
	if len(c.Allowed) > 0 {
		var term corev1.TopologySelectorTerm
		for k, v := range c.Allowed {
			term.MatchLabelExpressions = append(term.MatchLabelExpressions, corev1.TopologySelectorLabelRequirement{Key: k, Values: v})
		}
		sc.AllowedTopologies = []corev1.TopologySelectorTerm{term}
	}
	sc, err := f.Kube.StorageV1().StorageClasses().Create(ctx, sc, metav1.CreateOptions{})
	must(err)
	ginkgo.DeferCleanup(func(ctx context.Context) {
		err := f.Kube.StorageV1().StorageClasses().Delete(ctx, sc.Name, metav1.DeleteOptions{})
		if !apierrors.IsNotFound(err) {
			must(err)
		}
	})
	return sc
}

// Claim is what a spec asks of a PVC.
type Claim struct {
	Class string
	Size  string // "1Gi"
	Block bool
	// FromSnapshot restores the named VolumeSnapshot.
	FromSnapshot string
	// SelectedNode sets the scheduler's annotation by hand, as the
	// scheduler does for WaitForFirstConsumer: for nodes that run no
	// pods (the fake nodes of other zones).
	SelectedNode string
}

// PVC creates a claim in ns. When the spec ends it is deleted and its
// PersistentVolume is waited for until it is gone: a volume the driver
// failed to delete fails the spec.
func (f *F) PVC(ctx context.Context, ns, name string, c Claim) *corev1.PersistentVolumeClaim {
	ginkgo.GinkgoHelper()
	mode := corev1.PersistentVolumeFilesystem
	if c.Block {
		mode = corev1.PersistentVolumeBlock
	}
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{LabelKey: "true"}},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			StorageClassName: &c.Class,
			VolumeMode:       &mode,
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceStorage: resource.MustParse(c.Size),
			}},
		},
	}
	if c.FromSnapshot != "" {
		group := "snapshot.storage.k8s.io"
		pvc.Spec.DataSource = &corev1.TypedLocalObjectReference{APIGroup: &group, Kind: "VolumeSnapshot", Name: c.FromSnapshot}
	}
	if c.SelectedNode != "" {
		pvc.Annotations = map[string]string{"volume.kubernetes.io/selected-node": c.SelectedNode}
	}
	pvc, err := f.Kube.CoreV1().PersistentVolumeClaims(ns).Create(ctx, pvc, metav1.CreateOptions{})
	must(err)
	ginkgo.DeferCleanup(func(ctx context.Context) { f.DeletePVC(ctx, ns, name) }, ginkgo.NodeTimeout(f.Config.Scale(5*time.Minute)))
	return pvc
}

// DeletePVC deletes a claim and waits until it and its volume are gone.
func (f *F) DeletePVC(ctx context.Context, ns, name string) {
	ginkgo.GinkgoHelper()
	pvc, err := f.Kube.CoreV1().PersistentVolumeClaims(ns).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return
	}
	must(err)
	pv := pvc.Spec.VolumeName
	err = f.Kube.CoreV1().PersistentVolumeClaims(ns).Delete(ctx, name, metav1.DeleteOptions{})
	if !apierrors.IsNotFound(err) {
		must(err)
	}
	must(f.Wait(ctx, "PVC "+ns+"/"+name+" to be deleted", 2*time.Minute, func(ctx context.Context) (bool, string, error) {
		p, err := f.Kube.CoreV1().PersistentVolumeClaims(ns).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, "", nil
		}
		if err != nil {
			return Retry(err)
		}
		return false, fmt.Sprintf("finalizers %v", p.Finalizers), nil
	}))
	if pv != "" {
		must(f.WaitPVGone(ctx, pv))
	}
}

// WaitPVGone waits until the driver has deleted a PersistentVolume (its
// DeleteVolume succeeded); the PV's last event is in the timeout error.
func (f *F) WaitPVGone(ctx context.Context, pv string) error {
	return f.Wait(ctx, "PersistentVolume "+pv+" to be deleted (DeleteVolume)", 3*time.Minute, func(ctx context.Context) (bool, string, error) {
		p, err := f.Kube.CoreV1().PersistentVolumes().Get(ctx, pv, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, "", nil
		}
		if err != nil {
			return Retry(err)
		}
		return false, "phase " + string(p.Status.Phase) + f.lastEvent(ctx, "", pv), nil
	})
}

// WaitPVCBound waits for the claim to bind and returns it with its PV.
func (f *F) WaitPVCBound(ctx context.Context, ns, name string, timeout time.Duration) (*corev1.PersistentVolumeClaim, *corev1.PersistentVolume) {
	ginkgo.GinkgoHelper()
	var pvc *corev1.PersistentVolumeClaim
	must(f.Wait(ctx, "PVC "+ns+"/"+name+" to be Bound", timeout, func(ctx context.Context) (bool, string, error) {
		p, err := f.Kube.CoreV1().PersistentVolumeClaims(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return Retry(err)
		}
		pvc = p
		return p.Status.Phase == corev1.ClaimBound, "phase " + string(p.Status.Phase) + f.lastEvent(ctx, ns, name), nil
	}))
	pv, err := f.Kube.CoreV1().PersistentVolumes().Get(ctx, pvc.Spec.VolumeName, metav1.GetOptions{})
	must(err)
	return pvc, pv
}

// ExpandPVC asks for a larger size.
func (f *F) ExpandPVC(ctx context.Context, ns, name, size string) {
	ginkgo.GinkgoHelper()
	patch := fmt.Sprintf(`{"spec":{"resources":{"requests":{"storage":%q}}}}`, size)
	_, err := f.Kube.CoreV1().PersistentVolumeClaims(ns).Patch(ctx, name, "application/merge-patch+json", []byte(patch), metav1.PatchOptions{})
	must(err)
}

// WaitPVCCapacity waits until the claim's status reports at least size
// (the resizer and, for an online expansion, the kubelet are done).
func (f *F) WaitPVCCapacity(ctx context.Context, ns, name, size string, timeout time.Duration) {
	ginkgo.GinkgoHelper()
	want := resource.MustParse(size)
	must(f.Wait(ctx, "PVC "+ns+"/"+name+" to report capacity "+size, timeout, func(ctx context.Context) (bool, string, error) {
		p, err := f.Kube.CoreV1().PersistentVolumeClaims(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return Retry(err)
		}
		got := p.Status.Capacity[corev1.ResourceStorage]
		var conds []string
		for _, c := range p.Status.Conditions {
			conds = append(conds, string(c.Type)+": "+c.Message)
		}
		return got.Cmp(want) >= 0, fmt.Sprintf("capacity %s, conditions [%s]%s", got.String(), strings.Join(conds, "; "), f.lastEvent(ctx, ns, name)), nil
	}))
}
