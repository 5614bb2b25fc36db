package suites

// Per-volume encryption through the real csi-provisioner on the host node
// with the ZFS simulator (E2E_VM=0 is enough: no pod mounts anything). The
// simulator speaks OpenZFS's native encryption (simulators/zfsmodel
// crypt.go), so what these specs see on the storage is what a real host
// would show: the suite, the key format, the encryption root, whether the
// key is loaded.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/switchyard-csi/switchyard/e2e/framework"
)

var _ = Describe("per-volume encryption through the controller", Label("features"), func() {
	It("zfs-generic-nfs: a StorageClass whose provisioner secret holds the key makes an encrypted dataset with its key loaded; a restored snapshot shares it; a secret without a key is refused; the key is in no log", Label("zfs-generic-nfs", "encrypt", "controller"),
		func(ctx SpecContext) { controllerEncryption(ctx) }, NodeTimeout(15*time.Minute))
})

func controllerEncryption(ctx context.Context) {
	fam := zfsFamily()
	conn := ensureConnection(ctx, fam)
	ns := f.Namespace(ctx, "enc-ctl")
	var b [16]byte
	_, _ = rand.Read(b[:])
	key := "e2e-passphrase-" + hex.EncodeToString(b[:]) // fresh per run, so a log line with it can only come from this spec

	By("a provisioner secret with the key, readable by the controller's service account only through a Role in this namespace")
	secret(ctx, "enc-key", ns, map[string]string{"encryptionKey": key, "encryptionKeyFormat": "passphrase"})
	secret(ctx, "enc-nokey", ns, map[string]string{"encryptionKeyFormat": "hex"})
	allowSecrets(ctx, ns, "enc-key", "enc-nokey")

	class := func(prefix, secretName string) string {
		params := fam.StorageParameters(env, conn)
		params["encryption"] = "true"
		params["csi.storage.k8s.io/provisioner-secret-name"] = secretName
		params["csi.storage.k8s.io/provisioner-secret-namespace"] = ns
		return f.StorageClass(ctx, prefix, framework.Class{Driver: f.Config.DriverName, Parameters: params, Binding: storagev1.VolumeBindingImmediate}).Name
	}
	sc := class("enc-ctl", "enc-key")

	By("a PVC of the class binds; its dataset is encrypted with aes-256-gcm, is its own encryption root and has its key loaded")
	f.PVC(ctx, ns, "data", framework.Claim{Class: sc, Size: dataSize})
	_, pv := f.WaitPVCBound(ctx, ns, "data", 5*time.Minute)
	ds := zfsDataset(conn, strings.TrimPrefix(pv.Spec.CSI.VolumeHandle, "v:"+conn+"/"))
	expectZFSProp(ctx, ds, "encryption", "aes-256-gcm")
	expectZFSProp(ctx, ds, "keyformat", "passphrase")
	expectZFSProp(ctx, ds, "keylocation", "prompt")
	expectZFSProp(ctx, ds, "encryptionroot", ds)
	expectZFSProp(ctx, ds, "keystatus", "available")

	f.NeedSnapshots()
	By("a snapshot of it restores into a PVC of the same class whose dataset shares the encryption root and key")
	vsc := f.SnapshotClass(ctx, "enc-ctl", f.Config.DriverName, nil)
	f.Snapshot(ctx, ns, "snap", vsc, "data")
	f.WaitSnapshotReady(ctx, ns, "snap", 3*time.Minute)
	f.PVC(ctx, ns, "restored", framework.Claim{Class: sc, Size: dataSize, FromSnapshot: "snap"})
	_, rpv := f.WaitPVCBound(ctx, ns, "restored", 5*time.Minute)
	rds := zfsDataset(conn, strings.TrimPrefix(rpv.Spec.CSI.VolumeHandle, "v:"+conn+"/"))
	expectZFSProp(ctx, rds, "encryption", "aes-256-gcm")
	expectZFSProp(ctx, rds, "encryptionroot", ds)
	expectZFSProp(ctx, rds, "keystatus", "available")

	By("a class whose secret describes a key but holds none: the claim stays Pending with an event naming encryptionKey")
	bad := class("enc-nokey", "enc-nokey")
	f.PVC(ctx, ns, "nokey", framework.Claim{Class: bad, Size: dataSize})
	_, err := f.WaitEvent(ctx, ns, "nokey", 3*time.Minute, "encryptionKey")
	Expect(err).NotTo(HaveOccurred(), "an event on the PVC names the missing secret key")
	p, err := f.Kube.CoreV1().PersistentVolumeClaims(ns).Get(ctx, "nokey", metav1.GetOptions{})
	Expect(err).NotTo(HaveOccurred())
	Expect(p.Status.Phase).To(Equal(corev1.ClaimPending))

	By("the key is in none of the controller's logs (driver and csi-provisioner)")
	expectKeyNotLogged(ctx, key, pv.Name)
}

// secret creates an Opaque Secret in ns (deleted with the namespace).
func secret(ctx context.Context, name, ns string, data map[string]string) {
	GinkgoHelper()
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{framework.LabelKey: "true"}},
		Type: corev1.SecretTypeOpaque, StringData: data}
	_, err := f.Kube.CoreV1().Secrets(ns).Create(ctx, s, metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred())
}

// provisionerPods are the driver's running pods that run csi-provisioner
// (the controller Deployment, or with strategy node the node DaemonSet).
// A DaemonSet pod bound to a stand-in Node of another zone (the topology
// specs make them) stays Pending and has no logs: it provisions nothing.
func provisionerPods(ctx context.Context) []corev1.Pod {
	GinkgoHelper()
	pods, err := f.Kube.CoreV1().Pods(f.Config.DriverNamespace).List(ctx, metav1.ListOptions{})
	Expect(err).NotTo(HaveOccurred())
	var out []corev1.Pod
	for _, p := range pods.Items {
		if p.Status.Phase != corev1.PodRunning {
			continue
		}
		for _, c := range p.Spec.Containers {
			if c.Name == "csi-provisioner" {
				out = append(out, p)
				break
			}
		}
	}
	Expect(out).NotTo(BeEmpty(), "no pod in %s runs csi-provisioner", f.Config.DriverNamespace)
	return out
}

// allowSecrets lets the service accounts of the provisioner's pods get the
// named secrets of ns. The chart grants no Secret access of its own: a
// class that uses a provisioner secret needs a Role like this one (least
// privilege: these secrets, this namespace), docs/features.md.
func allowSecrets(ctx context.Context, ns string, names ...string) {
	GinkgoHelper()
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "provisioner-secrets", Namespace: ns},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, ResourceNames: names, Verbs: []string{"get"}}}}
	_, err := f.Kube.RbacV1().Roles(ns).Create(ctx, role, metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred())
	seen := map[string]bool{}
	var subjects []rbacv1.Subject
	for _, p := range provisionerPods(ctx) {
		sa := p.Spec.ServiceAccountName
		if sa == "" {
			sa = "default"
		}
		if !seen[sa] {
			seen[sa] = true
			subjects = append(subjects, rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: sa, Namespace: f.Config.DriverNamespace})
		}
	}
	rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "provisioner-secrets", Namespace: ns},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
		Subjects: subjects}
	_, err = f.Kube.RbacV1().RoleBindings(ns).Create(ctx, rb, metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred())
}

// expectKeyNotLogged reads the driver's and csi-provisioner's logs in every
// provisioner pod: the PersistentVolume's name must be there (so the logs
// are the ones that made it) and the key nowhere.
func expectKeyNotLogged(ctx context.Context, key, pvName string) {
	GinkgoHelper()
	sawPV := false
	for _, p := range provisionerPods(ctx) {
		for _, c := range []string{"switchyard", "csi-provisioner"} {
			b, err := f.Kube.CoreV1().Pods(p.Namespace).GetLogs(p.Name, &corev1.PodLogOptions{Container: c}).DoRaw(ctx)
			Expect(err).NotTo(HaveOccurred(), "logs of %s/%s", p.Name, c)
			Expect(string(b)).NotTo(ContainSubstring(key), "the key is in the log of %s/%s", p.Name, c)
			if strings.Contains(string(b), pvName) {
				sawPV = true
			}
		}
	}
	Expect(sawPV).To(BeTrue(), "no controller log mentions %s: the logs read are not the ones that provisioned it", pvName)
}

// encryptedPublish is the storage host's reboot in the cluster: every key
// unloaded behind the driver's back (zfs unload-key over SSH on the
// storage host), then a pod on each of two encrypted PVCs. The class that
// names the secret as csi.storage.k8s.io/controller-publish-secret-name
// gets its key loaded by ControllerPublishVolume (the external-attacher
// passes the secret; the features release has attachRequired: true) and
// its pod runs and writes; the class that names none leaves its
// VolumeAttachment failing with the driver's FAILED_PRECONDITION naming
// the dataset and the parameters, and its key unloaded. The key is in no
// controller log.
func encryptedPublish(ctx context.Context, conn, node string) {
	fam := zfsFamily()
	ns := f.Namespace(ctx, "enc-pub")
	var b [16]byte
	_, _ = rand.Read(b[:])
	key := "e2e-passphrase-" + hex.EncodeToString(b[:])
	secret(ctx, "enc-key", ns, map[string]string{"encryptionKey": key})
	allowSecrets(ctx, ns, "enc-key")
	class := func(prefix string, publish bool) string {
		params := fam.StorageParameters(env, conn)
		params["encryption"] = "true"
		params["csi.storage.k8s.io/provisioner-secret-name"] = "enc-key"
		params["csi.storage.k8s.io/provisioner-secret-namespace"] = ns
		if publish {
			params["csi.storage.k8s.io/controller-publish-secret-name"] = "enc-key"
			params["csi.storage.k8s.io/controller-publish-secret-namespace"] = ns
		}
		return f.StorageClass(ctx, prefix, framework.Class{Driver: featuresDriver, Parameters: params, Binding: storagev1.VolumeBindingImmediate}).Name
	}

	By("two encrypted PVCs, one of a class naming the publish secret, bind with their keys loaded")
	f.PVC(ctx, ns, "data", framework.Claim{Class: class("enc-pub", true), Size: dataSize})
	f.PVC(ctx, ns, "bare", framework.Claim{Class: class("enc-nopub", false), Size: dataSize})
	_, pv := f.WaitPVCBound(ctx, ns, "data", 5*time.Minute)
	_, bpv := f.WaitPVCBound(ctx, ns, "bare", 5*time.Minute)
	ds := zfsDataset(conn, strings.TrimPrefix(pv.Spec.CSI.VolumeHandle, "v:"+conn+"/"))
	bds := zfsDataset(conn, strings.TrimPrefix(bpv.Spec.CSI.VolumeHandle, "v:"+conn+"/"))
	expectZFSProp(ctx, ds, "keystatus", "available")
	expectZFSProp(ctx, bds, "keystatus", "available")

	By("the storage host reboots: every key unloaded behind the driver's back")
	for _, d := range []string{ds, bds} {
		zfsRun(ctx, "zfs unload-key "+d)
		expectZFSProp(ctx, d, "keystatus", "unavailable")
		expectZFSProp(ctx, d, "mounted", "no")
	}

	By("a pod on the PVC whose class names the publish secret starts: ControllerPublishVolume loaded the key")
	start := time.Now()
	podEnv := map[string]string{"PATTERN": "enc-pub " + ns, "BYTES": "4096", "TARGET_KIB": "0"}
	f.Pod(ctx, ns, framework.Workload{Name: "writer", PVC: "data", Script: framework.WriterScript, Node: node, Env: podEnv})
	f.WaitPodReady(ctx, ns, "writer", 6*time.Minute)
	GinkgoWriter.Printf("pod on the encrypted PVC Ready %s after the key was unloaded\n", time.Since(start).Round(time.Second))
	expectZFSProp(ctx, ds, "keystatus", "available")
	expectZFSProp(ctx, ds, "mounted", "yes")

	By("a pod on the PVC whose class names none does not attach: FAILED_PRECONDITION naming the dataset and the parameters; the key stays unloaded")
	f.Pod(ctx, ns, framework.Workload{Name: "stuck", PVC: "bare", Script: framework.WriterScript, Node: node, Env: podEnv})
	Expect(f.Wait(ctx, "the VolumeAttachment of "+bpv.Name+" to fail with the driver's reason", 4*time.Minute, func(ctx context.Context) (bool, string, error) {
		vas, err := f.Kube.StorageV1().VolumeAttachments().List(ctx, metav1.ListOptions{})
		if err != nil {
			return framework.Retry(err)
		}
		for _, va := range vas.Items {
			if va.Spec.Source.PersistentVolumeName == nil || *va.Spec.Source.PersistentVolumeName != bpv.Name {
				continue
			}
			if e := va.Status.AttachError; e != nil {
				ok := strings.Contains(e.Message, bds) && strings.Contains(e.Message, "controller-publish-secret-name") && strings.Contains(e.Message, "FailedPrecondition")
				return ok, e.Message, nil
			}
			return false, fmt.Sprintf("attached=%v, no error yet", va.Status.Attached), nil
		}
		return false, "no VolumeAttachment yet", nil
	})).To(Succeed())
	expectZFSProp(ctx, bds, "keystatus", "unavailable")

	By("the key is in none of the controller's logs")
	expectKeyNotLogged(ctx, key, pv.Name)

	// A user's cleanup, checked here rather than left to DeferCleanup: a
	// failure in a cleanup comes after the failure dump (suite_test.go's
	// JustAfterEach), and the second VM run's cleanup of this spec overran
	// with nothing to read but the kubelet logs.
	By("a user's cleanup: both pods and both claims delete, their VolumeAttachments and datasets go")
	logAttachments(ctx, "before the cleanup", pv.Name, bpv.Name)
	DeferCleanup(func(ctx context.Context) {
		if CurrentSpecReport().Failed() {
			logAttachments(ctx, "after a failure", pv.Name, bpv.Name)
		}
	})
	for _, step := range []struct{ what, name string }{{"pod", "stuck"}, {"pod", "writer"}, {"claim", "bare"}, {"claim", "data"}} {
		t := time.Now()
		if step.what == "pod" {
			f.DeletePod(ctx, ns, step.name)
		} else {
			f.DeletePVC(ctx, ns, step.name)
		}
		GinkgoWriter.Printf("%s %s deleted in %s\n", step.what, step.name, time.Since(t).Round(100*time.Millisecond))
	}
	for _, d := range []string{ds, bds} {
		out, err := zfsGetProp(ctx, d, "name")
		Expect(err).To(HaveOccurred(), "%s is still on the storage host after its PV was deleted (%s)", d, out)
		Expect(err.Error()).To(ContainSubstring("does not exist"), "zfs get of %s", d)
	}
}

// logAttachments prints the VolumeAttachments of the named PVs (attached,
// errors, deletion) to the spec's log.
func logAttachments(ctx context.Context, when string, pvs ...string) {
	vas, err := f.Kube.StorageV1().VolumeAttachments().List(ctx, metav1.ListOptions{})
	if err != nil {
		GinkgoWriter.Printf("VolumeAttachments %s: %v\n", when, err)
		return
	}
	for _, va := range vas.Items {
		src := va.Spec.Source.PersistentVolumeName
		if src == nil || !slices.Contains(pvs, *src) {
			continue
		}
		line := fmt.Sprintf("VolumeAttachment %s %s: pv %s node %s attached=%v finalizers=%v", when, va.Name, *src, va.Spec.NodeName, va.Status.Attached, va.Finalizers)
		if va.DeletionTimestamp != nil {
			line += " deleting since " + va.DeletionTimestamp.UTC().Format(time.TimeOnly)
		}
		if e := va.Status.AttachError; e != nil {
			line += " attachError: " + e.Message
		}
		if e := va.Status.DetachError; e != nil {
			line += " detachError: " + e.Message
		}
		GinkgoWriter.Println(line)
	}
}
