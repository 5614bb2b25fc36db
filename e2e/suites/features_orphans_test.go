package suites

// `switchyard orphans` and `switchyard connections` as an administrator
// runs them in a cluster: inside the controller's own container (its
// image has the binary, the main config and the connections), with the
// handles Kubernetes knows piped in from the API, as
//
//	kubectl get pv,volumesnapshotcontents ... | kubectl exec -i <controller> -c switchyard -- \
//	    switchyard orphans --driver-config-file /config/driver-config-file.yaml --handles -
//
// The orphans are made the way users get them (democratic-csi issue 549):
// a PV and a VolumeSnapshotContent switched to Retain and deleted, which
// leaves their dataset and snapshot on the storage; the reverse is a
// dataset destroyed behind the driver's back under a bound PV.

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"time"

	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/remotecommand"

	"github.com/switchyard-csi/switchyard/e2e/framework"
)

var _ = Describe("the orphan report and the connections list in the cluster", Label("features"), func() {
	It("zfs-generic-nfs: `switchyard orphans` in the controller lists a retained volume and snapshot no object names and a PV whose dataset is gone; --delete removes only the orphans; `switchyard connections` lists the connection", Label("zfs-generic-nfs", "orphans", "controller"),
		func(ctx SpecContext) { orphanReport(ctx) }, NodeTimeout(12*time.Minute))
})

// The chart's paths inside the controller's switchyard container.
const (
	controllerConfig = "/config/driver-config-file.yaml"
	controllerSocket = "unix:///csi-data/csi.sock"
)

func orphanReport(ctx context.Context) {
	fam := zfsFamily()
	f.NeedSnapshots()
	conn, driver := zonesConnection(ctx, fam, "e2e-orph-")
	ns := f.Namespace(ctx, "orph")
	sc := f.StorageClass(ctx, "orph", framework.Class{Driver: driver, Parameters: fam.StorageParameters(env, conn), Binding: storagev1.VolumeBindingImmediate}).Name
	vsc := f.SnapshotClass(ctx, "orph", driver, nil)
	datasetOf := func(pv *corev1.PersistentVolume) string {
		return zfsDataset(conn, strings.TrimPrefix(pv.Spec.CSI.VolumeHandle, "v:"+conn+"/"))
	}

	By("three PVCs bind: kept, orphan, gone")
	pvs := map[string]*corev1.PersistentVolume{}
	for _, n := range []string{"kept", "orphan", "gone"} {
		f.PVC(ctx, ns, n, framework.Claim{Class: sc, Size: dataSize})
	}
	for _, n := range []string{"kept", "orphan", "gone"} {
		_, pvs[n] = f.WaitPVCBound(ctx, ns, n, 5*time.Minute)
	}

	By("a snapshot of kept whose content is retained and deleted: its zfs snapshot stays, no object names it")
	f.Snapshot(ctx, ns, "snap", vsc, "kept")
	snapHandle := f.WaitSnapshotReady(ctx, ns, "snap", 3*time.Minute)
	vs, err := f.Snap.SnapshotV1().VolumeSnapshots(ns).Get(ctx, "snap", metav1.GetOptions{})
	Expect(err).NotTo(HaveOccurred())
	Expect(vs.Status).NotTo(BeNil())
	Expect(vs.Status.BoundVolumeSnapshotContentName).NotTo(BeNil())
	content := *vs.Status.BoundVolumeSnapshotContentName
	_, err = f.Snap.SnapshotV1().VolumeSnapshotContents().Patch(ctx, content, types.MergePatchType,
		[]byte(`{"spec":{"deletionPolicy":"`+string(snapv1.VolumeSnapshotContentRetain)+`"}}`), metav1.PatchOptions{})
	Expect(err).NotTo(HaveOccurred())
	Expect(f.Snap.SnapshotV1().VolumeSnapshots(ns).Delete(ctx, "snap", metav1.DeleteOptions{})).To(Succeed())
	Expect(f.Snap.SnapshotV1().VolumeSnapshotContents().Delete(ctx, content, metav1.DeleteOptions{})).To(Succeed())
	waitGone(ctx, "VolumeSnapshotContent "+content, func(ctx context.Context) (string, error) {
		c, err := f.Snap.SnapshotV1().VolumeSnapshotContents().Get(ctx, content, metav1.GetOptions{})
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("finalizers %v", c.Finalizers), nil
	})
	_, snapName, _ := strings.Cut(snapHandle, "@")
	zfsSnap := datasetOf(pvs["kept"]) + "@" + snapName
	Expect(zfsSnapshots(ctx, datasetOf(pvs["kept"]))).To(ContainElement(zfsSnap), "the retained snapshot is still on the storage")

	By("orphan's PV is retained and deleted with its claim: its dataset stays, no PV names it")
	orphanPV := pvs["orphan"].Name
	_, err = f.Kube.CoreV1().PersistentVolumes().Patch(ctx, orphanPV, types.MergePatchType,
		[]byte(`{"spec":{"persistentVolumeReclaimPolicy":"Retain"}}`), metav1.PatchOptions{})
	Expect(err).NotTo(HaveOccurred())
	Expect(f.Kube.CoreV1().PersistentVolumeClaims(ns).Delete(ctx, "orphan", metav1.DeleteOptions{})).To(Succeed())
	waitGone(ctx, "PVC orphan", func(ctx context.Context) (string, error) {
		p, err := f.Kube.CoreV1().PersistentVolumeClaims(ns).Get(ctx, "orphan", metav1.GetOptions{})
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("finalizers %v", p.Finalizers), nil
	})
	Expect(f.Kube.CoreV1().PersistentVolumes().Delete(ctx, orphanPV, metav1.DeleteOptions{})).To(Succeed())
	waitGone(ctx, "PersistentVolume "+orphanPV, func(ctx context.Context) (string, error) {
		p, err := f.Kube.CoreV1().PersistentVolumes().Get(ctx, orphanPV, metav1.GetOptions{})
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("phase %s finalizers %v", p.Status.Phase, p.Finalizers), nil
	})
	orphanDS := datasetOf(pvs["orphan"])
	expectZFSProp(ctx, orphanDS, "name", orphanDS)

	By("gone's dataset is destroyed behind the driver's back; its PV stays")
	goneDS := datasetOf(pvs["gone"])
	zfsRun(ctx, "zfs destroy -r -f "+goneDS)

	pod := zonesControllerPod(ctx)
	handles := knownHandles(ctx, driver)
	Expect(handles).To(ContainSubstring(pvs["kept"].Spec.CSI.VolumeHandle))
	Expect(handles).NotTo(ContainSubstring(pvs["orphan"].Spec.CSI.VolumeHandle))
	orphans := []string{"/usr/local/bin/switchyard", "orphans", "--driver-config-file", controllerConfig, "--csi-name", driver, "--handles", "-"}

	By("`switchyard orphans` (read-only): the retained volume and snapshot, the PV whose dataset is gone; not the kept volume")
	out, stderr, err := execStdin(ctx, pod, "switchyard", handles, orphans...)
	GinkgoWriter.Printf("switchyard orphans:\n%s%s", out, stderr)
	Expect(err).NotTo(HaveOccurred(), "switchyard orphans: %s", stderr)
	r := parseOrphanReport(out)
	Expect(r["volumes on the backend with no PersistentVolume"]).To(ContainElement(pvs["orphan"].Spec.CSI.VolumeHandle))
	Expect(r["volumes on the backend with no PersistentVolume"]).NotTo(ContainElement(pvs["kept"].Spec.CSI.VolumeHandle))
	Expect(r["snapshots on the backend with no VolumeSnapshotContent"]).To(ContainElement(snapHandle))
	Expect(r["handles Kubernetes knows whose volume is gone from the backend"]).To(ContainElement(pvs["gone"].Spec.CSI.VolumeHandle))
	Expect(r["handles Kubernetes knows whose volume is gone from the backend"]).NotTo(ContainElement(pvs["kept"].Spec.CSI.VolumeHandle))
	Expect(out).To(ContainSubstring("read-only report: nothing was deleted"))
	expectZFSProp(ctx, orphanDS, "name", orphanDS)

	By("`switchyard orphans --delete --yes`: the orphans go, the kept volume and the PV whose dataset is gone stay")
	out, stderr, err = execStdin(ctx, pod, "switchyard", handles, append(orphans, "--delete", "--yes")...)
	GinkgoWriter.Printf("switchyard orphans --delete --yes:\n%s%s", out, stderr)
	Expect(err).NotTo(HaveOccurred(), "switchyard orphans --delete: %s", stderr)
	_, err = zfsGetProp(ctx, orphanDS, "name")
	Expect(err).To(MatchError(ContainSubstring("does not exist")), "the orphan dataset %s is deleted", orphanDS)
	Expect(zfsSnapshots(ctx, datasetOf(pvs["kept"]))).NotTo(ContainElement(zfsSnap), "the orphan snapshot is deleted")
	expectZFSProp(ctx, datasetOf(pvs["kept"]), "name", datasetOf(pvs["kept"]))
	_, err = f.Kube.CoreV1().PersistentVolumes().Get(ctx, pvs["gone"].Name, metav1.GetOptions{})
	Expect(err).NotTo(HaveOccurred(), "a PV whose dataset is gone is reported, never deleted")
	out, _, err = execStdin(ctx, pod, "switchyard", handles, orphans...)
	Expect(err).NotTo(HaveOccurred())
	r = parseOrphanReport(out)
	Expect(r["volumes on the backend with no PersistentVolume"]).NotTo(ContainElement(pvs["orphan"].Spec.CSI.VolumeHandle))
	Expect(r["snapshots on the backend with no VolumeSnapshotContent"]).NotTo(ContainElement(snapHandle))

	By("`switchyard connections`: from the files, the connection loaded with its type, zfs version and volume count; over the socket, its volumes counted")
	out, stderr, err = execStdin(ctx, pod, "switchyard", "", "/usr/local/bin/switchyard", "connections", "--driver-config-file", controllerConfig)
	GinkgoWriter.Printf("switchyard connections:\n%s%s", out, stderr)
	if err != nil { // exit 1: some connection of the release did not load; not this spec's
		Expect(out).NotTo(ContainSubstring(conn+": "), "switchyard connections: %v", err)
	}
	row := connectionsRow(out, conn)
	Expect(row).To(HaveLen(6), "a row for %s in:\n%s%s", conn, out, stderr)
	Expect(row[1]).To(Equal("loaded"))
	Expect(row[2]).To(Equal(fam.Name))
	Expect(row[4]).NotTo(Equal("-"), "the backend's zfs version")
	Expect(row[5]).To(Equal("1"), "kept is the one volume left on the connection")
	out, stderr, err = execStdin(ctx, pod, "switchyard", "", "/usr/local/bin/switchyard", "connections", "--endpoint", controllerSocket)
	GinkgoWriter.Printf("switchyard connections --endpoint:\n%s%s", out, stderr)
	Expect(err).NotTo(HaveOccurred(), "switchyard connections --endpoint: %s", stderr)
	Expect(out).To(ContainSubstring("controller " + driver))
	row = connectionsRow(out, conn)
	Expect(row).To(HaveLen(6), "a row for %s in:\n%s", conn, out)
	Expect(row[5]).To(Equal("1"))
}

// waitGone waits until get answers NotFound; get's string is the progress.
func waitGone(ctx context.Context, what string, get func(context.Context) (string, error)) {
	GinkgoHelper()
	Expect(f.Wait(ctx, what+" to be deleted", 2*time.Minute, func(ctx context.Context) (bool, string, error) {
		st, err := get(ctx)
		if apierrors.IsNotFound(err) {
			return true, "", nil
		}
		if err != nil {
			return framework.Retry(err)
		}
		return false, st, nil
	})).To(Succeed())
}

// knownHandles is what an administrator pipes in: every PV's volumeHandle
// and every VolumeSnapshotContent's snapshotHandle of the driver.
func knownHandles(ctx context.Context, driver string) string {
	GinkgoHelper()
	var b strings.Builder
	pvs, err := f.Kube.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{})
	Expect(err).NotTo(HaveOccurred())
	for _, pv := range pvs.Items {
		if pv.Spec.CSI != nil && pv.Spec.CSI.Driver == driver {
			b.WriteString(pv.Spec.CSI.VolumeHandle + "\n")
		}
	}
	contents, err := f.Snap.SnapshotV1().VolumeSnapshotContents().List(ctx, metav1.ListOptions{})
	Expect(err).NotTo(HaveOccurred())
	for _, c := range contents.Items {
		if c.Spec.Driver == driver && c.Status != nil && c.Status.SnapshotHandle != nil {
			b.WriteString(*c.Status.SnapshotHandle + "\n")
		}
	}
	return b.String()
}

// zonesControllerPod is the running pod of the zones release's controller.
func zonesControllerPod(ctx context.Context) *corev1.Pod {
	GinkgoHelper()
	pods, err := f.Kube.CoreV1().Pods(f.Config.DriverNamespace).List(ctx, metav1.ListOptions{
		LabelSelector: "app.kubernetes.io/instance=switchyard-zones,app.kubernetes.io/component=controller"})
	Expect(err).NotTo(HaveOccurred())
	for i := range pods.Items {
		if p := &pods.Items[i]; p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
			return p
		}
	}
	Fail("no running controller pod of the zones release")
	return nil
}

// execStdin runs cmd in a container with stdin, as `kubectl exec -i`.
func execStdin(ctx context.Context, pod *corev1.Pod, container, stdin string, cmd ...string) (string, string, error) {
	req := f.Kube.CoreV1().RESTClient().Post().Resource("pods").Namespace(pod.Namespace).Name(pod.Name).SubResource("exec").
		VersionedParams(&corev1.PodExecOptions{Container: container, Command: cmd, Stdin: stdin != "", Stdout: true, Stderr: true}, scheme.ParameterCodec)
	ex, err := remotecommand.NewSPDYExecutor(f.Rest, "POST", req.URL())
	if err != nil {
		return "", "", err
	}
	var out, errb bytes.Buffer
	opts := remotecommand.StreamOptions{Stdout: &out, Stderr: &errb}
	if stdin != "" {
		opts.Stdin = strings.NewReader(stdin)
	}
	err = ex.StreamWithContext(ctx, opts)
	return out.String(), errb.String(), err
}

// parseOrphanReport reads `switchyard orphans`' sections: a title line
// "<title>: <count>", then its handles indented by two spaces.
func parseOrphanReport(out string) map[string][]string {
	r := map[string][]string{}
	title := ""
	for _, line := range strings.Split(out, "\n") {
		if h, ok := strings.CutPrefix(line, "  "); ok && title != "" {
			r[title] = append(r[title], strings.TrimSpace(h))
			continue
		}
		if t, _, ok := strings.Cut(line, ": "); ok {
			title = t
		}
	}
	return r
}

// connectionsRow is the whitespace-split row of conn in `switchyard
// connections`' table (CONNECTION STATE TYPE FAMILY VERSION VOLUMES), or
// nil. FAMILY may hold ", ": it is joined back into one field.
func connectionsRow(out, conn string) []string {
	for _, line := range strings.Split(out, "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 || fields[0] != conn {
			continue
		}
		for i := 0; i < len(fields)-1; i++ {
			if strings.HasSuffix(fields[i], ",") {
				fields = append(fields[:i], append([]string{fields[i] + " " + fields[i+1]}, fields[i+2:]...)...)
				i--
			}
		}
		return fields
	}
	return nil
}
