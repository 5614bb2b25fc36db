package suites

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/switchyard-csi/switchyard/e2e/backends"
	"github.com/switchyard-csi/switchyard/e2e/framework"
)

// Sizes of the data path: a volume is made at dataSize and grown to
// grownSize while the writer pod has it mounted.
const (
	dataSize  = "1Gi"
	grownSize = "2Gi"
	// patternBytes of the spec's pattern are written and read back.
	patternBytes = 4 << 20
)

var _ = Describe("data path", Label("datapath"), func() {
	for _, fam := range backends.Families() {
		for _, mode := range fam.Modes() {
			labels := Label(fam.Name, mode, placeLabel(fam))
			It(fmt.Sprintf("%s, volumeMode %s: write, snapshot, restore, read back, expand while mounted, delete, nothing left on the storage", fam.Name, mode),
				labels, func(ctx SpecContext) { dataPath(ctx, fam, mode == "Block") }, NodeTimeout(25*time.Minute))
		}
	}
})

// placeLabel says where a family's pods run: "host" or "vm".
func placeLabel(fam backends.Family) string {
	if fam.NeedsVM {
		return "vm"
	}
	return "host"
}

func dataPath(ctx context.Context, fam backends.Family, block bool) {
	if ok, why := fam.Available(env); !ok {
		skipOrFail(why)
	}
	mode := "Filesystem"
	if block {
		mode = "Block"
	}
	node := nodeFor(ctx, fam)
	driver, _ := releaseOf(ctx, fam)
	conn := ensureConnection(ctx, fam)
	ns := f.Namespace(ctx, fam.Short)
	params := fam.StorageParameters(env, conn)
	if block {
		delete(params, "csi.storage.k8s.io/fstype")
	}
	if fam.NodeStageSecret != nil {
		sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "node-stage", Namespace: ns}, StringData: fam.NodeStageSecret(env)}
		_, err := f.Kube.CoreV1().Secrets(ns).Create(ctx, sec, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		params["csi.storage.k8s.io/node-stage-secret-name"] = "node-stage"
		params["csi.storage.k8s.io/node-stage-secret-namespace"] = ns
	}
	sc := f.StorageClass(ctx, fam.Short, framework.Class{Driver: driver, Parameters: params, Binding: storagev1.VolumeBindingWaitForFirstConsumer, MountOptions: fam.MountOptions})
	vsc := ""
	if fam.Snapshots {
		vsc = f.SnapshotClass(ctx, fam.Short, driver, nil)
	}
	pattern := "switchyard-e2e " + ns + " " + time.Now().UTC().Format(time.RFC3339Nano)
	podEnv := map[string]string{"PATTERN": pattern, "BYTES": strconv.Itoa(patternBytes)}

	By("a PVC and a writer pod on " + node)
	grown := resource.MustParse(grownSize)
	target := "0" // keep running: the size cannot be seen in the pod
	if fam.ExpandVisible {
		target = framework.KiB(grown.Value() * 85 / 100) // a filesystem keeps some of it for itself
		if block {
			target = framework.KiB(grown.Value())
		}
	}
	start := time.Now()
	f.PVC(ctx, ns, "data", framework.Claim{Class: sc.Name, Size: dataSize, Block: block})
	// The writer stays with its volume until the PVC reports the new
	// size: a block device grows before the kubelet's NodeExpandVolume,
	// which the kubelet calls only for a running pod.
	f.Pod(ctx, ns, framework.Workload{Name: "writer", PVC: "data", Block: block, Script: framework.WriterScript, Node: node,
		Env: merge(podEnv, map[string]string{"TARGET_KIB": target}), Stop: fam.ExpandVisible})
	_, pv := f.WaitPVCBound(ctx, ns, "data", 5*time.Minute)
	f.Timings.Since(fam.Name, mode, framework.PVCToBound, start)
	Expect(pv.Spec.CSI).NotTo(BeNil())
	Expect(pv.Spec.CSI.VolumeHandle).To(HavePrefix("v:"+conn+"/"), "the proxy's handle names the connection")
	made := []string{strings.TrimPrefix(pv.Spec.CSI.VolumeHandle, "v:"+conn+"/")}
	f.WaitPodRunning(ctx, ns, "writer", 5*time.Minute)
	f.Timings.Since(fam.Name, mode, framework.PVCToPodRunning, start)
	f.WaitPodReady(ctx, ns, "writer", 3*time.Minute)

	if fam.Snapshots {
		By("a VolumeSnapshot of the mounted volume")
		start = time.Now()
		f.Snapshot(ctx, ns, "snap", vsc, "data")
		snapHandle := f.WaitSnapshotReady(ctx, ns, "snap", 3*time.Minute)
		f.Timings.Since(fam.Name, mode, framework.SnapshotReady, start)
		Expect(snapHandle).To(HavePrefix("s:"+conn+"/"), "the proxy's snapshot handle names the connection")
		made = append(made, strings.TrimPrefix(snapHandle, "s:"+conn+"/"))

		By("a PVC restored from the snapshot, read back by a second pod")
		start = time.Now()
		f.PVC(ctx, ns, "restored", framework.Claim{Class: sc.Name, Size: dataSize, Block: block, FromSnapshot: "snap"})
		f.Pod(ctx, ns, framework.Workload{Name: "reader", PVC: "restored", Block: block, Script: framework.ReaderScript, Node: node, Env: podEnv})
		_, rpv := f.WaitPVCBound(ctx, ns, "restored", 5*time.Minute)
		f.Timings.Since(fam.Name, mode, framework.RestoreToBound, start)
		made = append(made, strings.TrimPrefix(rpv.Spec.CSI.VolumeHandle, "v:"+conn+"/"))
		msg := f.WaitPodSucceeded(ctx, ns, "reader", 5*time.Minute)
		Expect(msg).To(HavePrefix("pattern ok"), "the restored volume holds what the writer wrote")
	}

	By("expanding the mounted volume to " + grownSize)
	start = time.Now()
	f.ExpandPVC(ctx, ns, "data", grownSize)
	f.WaitPVCCapacity(ctx, ns, "data", grownSize, 5*time.Minute)
	f.Timings.Since(fam.Name, mode, framework.ExpandCapacity, start)
	if fam.ExpandVisible {
		f.StopPod(ctx, ns, "writer")
		msg := f.WaitPodSucceeded(ctx, ns, "writer", 5*time.Minute)
		f.Timings.Since(fam.Name, mode, framework.ExpandInPod, start)
		Expect(msg).To(HavePrefix("size_kib="), "the writer saw the volume grow")
		kib, err := strconv.ParseInt(strings.TrimPrefix(msg, "size_kib="), 10, 64)
		Expect(err).NotTo(HaveOccurred())
		Expect(kib).To(BeNumerically(">=", grown.Value()*85/100/1024))
	} else {
		if fam.StorageSize != nil {
			Expect(f.Wait(ctx, "the volume to be "+grownSize+" on the storage", time.Minute, func(ctx context.Context) (bool, string, error) {
				n, err := fam.StorageSize(ctx, env, conn, made[0])
				if err != nil {
					return framework.Retry(err)
				}
				return n >= grown.Value(), fmt.Sprintf("%d bytes", n), nil
			})).To(Succeed())
		}
		// The size is recorded, not visible in the pod; the pod keeps
		// its volume.
		p, err := f.Kube.CoreV1().Pods(ns).Get(ctx, "writer", metav1.GetOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(p.Status.Phase).To(Equal(corev1.PodRunning), "the writer still runs after the expansion")
	}

	if !fam.Snapshots {
		// No snapshot to restore: the second pod reads the volume itself
		// back after the writer let go of it (unpublished, unstaged and,
		// for Infinia, unpublished from the node).
		By("a second pod reads the volume back after the writer is gone (" + fam.Name + " offers no snapshots)")
		f.DeletePod(ctx, ns, "writer")
		f.Pod(ctx, ns, framework.Workload{Name: "reader", PVC: "data", Block: block, Script: framework.ReaderScript, Node: node, Env: podEnv})
		Expect(f.WaitPodSucceeded(ctx, ns, "reader", 5*time.Minute)).To(HavePrefix("pattern ok"), "the volume kept what the writer wrote")
	}

	By("deleting everything: pods, restored PVC, snapshot, PVC")
	f.DeletePod(ctx, ns, "reader")
	f.DeletePod(ctx, ns, "writer")
	if fam.Snapshots {
		f.DeletePVC(ctx, ns, "restored")
		f.DeleteSnapshot(ctx, ns, "snap")
	}
	f.DeletePVC(ctx, ns, "data")
	expectNothingLeft(ctx, fam, conn, made)
}

// expectNothingLeft asks the storage system (not the driver) what the
// connection still holds. With made, only what the spec made counts
// (objects whose names contain one of its ids: a volume, its snapshots,
// its detached copies): other specs may share the connection. Without,
// the connection must be empty.
func expectNothingLeft(ctx context.Context, fam backends.Family, conn string, made []string) {
	GinkgoHelper()
	Expect(f.Wait(ctx, "nothing of connection "+conn+" left on the "+fam.Name+" storage", time.Minute, func(ctx context.Context) (bool, string, error) {
		left, err := fam.Leftovers(ctx, env, conn, made)
		if err != nil {
			return framework.Retry(err)
		}
		left = ours(left, made)
		return len(left) == 0, fmt.Sprintf("left: %v", left), nil
	})).To(Succeed())
}

// ours keeps the entries that name one of the ids (all, without ids).
func ours(entries, ids []string) []string {
	if len(ids) == 0 {
		return entries
	}
	var out []string
	for _, e := range entries {
		for _, id := range ids {
			if id != "" && strings.Contains(e, id) {
				out = append(out, e)
				break
			}
		}
	}
	return out
}

func merge(a, b map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}
