package suites

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/switchyard-csi/switchyard/e2e/backends"
	"github.com/switchyard-csi/switchyard/e2e/framework"
)

// CSI allows 128 bytes for a volume or snapshot id; the proxy's handles
// add "v:<connection>/" (docs/proxy.md#handle-length-128-bytes).
var _ = Describe("handle limits", Label("limits"), func() {
	for _, fam := range backends.Families() {
		It(fmt.Sprintf("%s: a connection name of the documented safe length (%d characters) works for volumes and snapshots", fam.Name, fam.SafeConnectionLen()),
			Label(fam.Name, placeLabel(fam)), func(ctx SpecContext) { safeLength(ctx, fam) }, NodeTimeout(12*time.Minute))
		if fam.OverLimit == "" {
			continue
		}
		It(fmt.Sprintf("%s: a 63-character connection name pushes the %s handle over 128 bytes: it fails with the clear message and nothing is left", fam.Name, fam.OverLimit),
			Label(fam.Name, placeLabel(fam)), func(ctx SpecContext) { overLimit(ctx, fam) }, NodeTimeout(12*time.Minute))
	}
})

// limitClaim makes a claim on connection conn and waits for it to bind,
// through a pod on the family's node for local-hostpath (its volumes are
// made where the pod is scheduled); other families bind at once.
func limitClaim(ctx context.Context, fam backends.Family, ns, conn string) (class string) {
	GinkgoHelper()
	driver, release := releaseOf(ctx, fam)
	putAndWaitIn(ctx, release, conn, backends.ConnectionFile(env, fam, conn))
	binding := storagev1.VolumeBindingImmediate
	if !fam.NeedsVM {
		binding = storagev1.VolumeBindingWaitForFirstConsumer
	}
	sc := f.StorageClass(ctx, "limit", framework.Class{Driver: driver, Parameters: fam.StorageParameters(env, conn), Binding: binding, MountOptions: fam.MountOptions})
	f.PVC(ctx, ns, "data", framework.Claim{Class: sc.Name, Size: dataSize})
	if binding == storagev1.VolumeBindingWaitForFirstConsumer {
		f.Pod(ctx, ns, framework.Workload{Name: "consumer", PVC: "data", Script: "sleep 3600", Node: nodeFor(ctx, fam)})
	}
	return sc.Name
}

func safeLength(ctx context.Context, fam backends.Family) {
	if ok, why := fam.Available(env); !ok {
		skipOrFail(why)
	}
	// No pod: a network family binds at once, so a ZFS simulator on the
	// host serves these specs even without the storage VM.
	conn := fam.SafeName()
	ns := f.Namespace(ctx, "limit-"+fam.Short)
	limitClaim(ctx, fam, ns, conn)
	_, pv := f.WaitPVCBound(ctx, ns, "data", 5*time.Minute)
	h := pv.Spec.CSI.VolumeHandle
	Expect(len(h)).To(BeNumerically("<=", 128), h)
	Expect(h).To(HavePrefix("v:" + conn + "/"))
	made := []string{strings.TrimPrefix(h, "v:"+conn+"/")}
	if fam.Snapshots {
		driver, _ := releaseOf(ctx, fam)
		vsc := f.SnapshotClass(ctx, "limit", driver, nil)
		f.Snapshot(ctx, ns, "snap", vsc, "data")
		sh := f.WaitSnapshotReady(ctx, ns, "snap", 3*time.Minute)
		Expect(len(sh)).To(BeNumerically("<=", 128), sh)
		Expect(sh).To(HavePrefix("s:" + conn + "/"))
		GinkgoWriter.Printf("handles: %s (%d bytes), %s (%d bytes)\n", h, len(h), sh, len(sh))
		made = append(made, strings.TrimPrefix(sh, "s:"+conn+"/"))
		f.DeleteSnapshot(ctx, ns, "snap")
	}
	f.DeletePod(ctx, ns, "consumer")
	f.DeletePVC(ctx, ns, "data")
	expectNothingLeft(ctx, fam, conn, made)
}

func overLimit(ctx context.Context, fam backends.Family) {
	if ok, why := fam.Available(env); !ok {
		skipOrFail(why)
	}
	conn := fam.LongName()
	ns := f.Namespace(ctx, "overlimit-"+fam.Short)
	limitClaim(ctx, fam, ns, conn)
	want := []string{"connection " + conn, "CSI allows 128", "shorter connection name"}
	switch fam.OverLimit {
	case "volume":
		msg, err := f.WaitEvent(ctx, ns, "data", 4*time.Minute, want...)
		Expect(err).NotTo(HaveOccurred())
		GinkgoWriter.Printf("event: %s\n", msg)
		expectStillPending(ctx, ns, "data")
		pvc, err := f.Kube.CoreV1().PersistentVolumeClaims(ns).Get(ctx, "data", metav1.GetOptions{})
		Expect(err).NotTo(HaveOccurred())
		// The backend volume the proxy removed again is named after the
		// claim (the provisioner's pvc-<uid>).
		expectNothingLeft(ctx, fam, conn, []string{"pvc-" + string(pvc.UID)})
	case "snapshot":
		_, pv := f.WaitPVCBound(ctx, ns, "data", 5*time.Minute)
		driver, _ := releaseOf(ctx, fam)
		vsc := f.SnapshotClass(ctx, "limit", driver, nil)
		f.Snapshot(ctx, ns, "snap", vsc, "data")
		msg, err := f.SnapshotError(ctx, ns, "snap", 4*time.Minute, want...)
		Expect(err).NotTo(HaveOccurred())
		GinkgoWriter.Printf("snapshot error: %s\n", msg)
		Expect(msg).To(MatchRegexp(`would be 1[2-9][0-9] bytes`), "the message states the length")
		// Only the volume is on the storage: the proxy deleted the
		// snapshot the backend made.
		left, err := fam.Leftovers(ctx, env, conn, nil)
		Expect(err).NotTo(HaveOccurred())
		for _, l := range left {
			Expect(l).NotTo(ContainSubstring("@"), "a snapshot is left on the storage")
			Expect(l).NotTo(ContainSubstring(conn+"-snapshots/"), "a detached snapshot is left on the storage")
		}
		f.DeleteSnapshot(ctx, ns, "snap")
		f.DeletePVC(ctx, ns, "data")
		expectNothingLeft(ctx, fam, conn, []string{strings.TrimPrefix(pv.Spec.CSI.VolumeHandle, "v:"+conn+"/")})
	default:
		Fail("unknown OverLimit " + strconv.Quote(fam.OverLimit))
	}
}
