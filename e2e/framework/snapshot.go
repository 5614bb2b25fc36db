package framework

import (
	"context"
	"fmt"
	"strings"
	"time"

	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	"github.com/onsi/ginkgo/v2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// SnapshotClass creates a VolumeSnapshotClass (deletion policy Delete)
// for driver, removed when the spec ends.
func (f *F) SnapshotClass(ctx context.Context, prefix, driver string, params map[string]string) string {
	ginkgo.GinkgoHelper()
	f.NeedSnapshots()
	vsc := &snapv1.VolumeSnapshotClass{
		ObjectMeta:     metav1.ObjectMeta{Name: UniqueName("e2e-" + prefix), Labels: map[string]string{LabelKey: "true"}},
		Driver:         driver,
		Parameters:     params,
		DeletionPolicy: snapv1.VolumeSnapshotContentDelete,
	}
	vsc, err := f.Snap.SnapshotV1().VolumeSnapshotClasses().Create(ctx, vsc, metav1.CreateOptions{})
	must(err)
	ginkgo.DeferCleanup(func(ctx context.Context) {
		err := f.Snap.SnapshotV1().VolumeSnapshotClasses().Delete(ctx, vsc.Name, metav1.DeleteOptions{})
		if !apierrors.IsNotFound(err) {
			must(err)
		}
	})
	return vsc.Name
}

// Snapshot creates a VolumeSnapshot of a claim. When the spec ends it is
// deleted and its content waited for until the driver has deleted it.
func (f *F) Snapshot(ctx context.Context, ns, name, class, pvc string) {
	ginkgo.GinkgoHelper()
	vs := &snapv1.VolumeSnapshot{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{LabelKey: "true"}},
		Spec: snapv1.VolumeSnapshotSpec{
			Source:                  snapv1.VolumeSnapshotSource{PersistentVolumeClaimName: &pvc},
			VolumeSnapshotClassName: &class,
		},
	}
	_, err := f.Snap.SnapshotV1().VolumeSnapshots(ns).Create(ctx, vs, metav1.CreateOptions{})
	must(err)
	ginkgo.DeferCleanup(func(ctx context.Context) { f.DeleteSnapshot(ctx, ns, name) }, ginkgo.NodeTimeout(f.Config.Scale(4*time.Minute)))
}

// DeleteSnapshot deletes a VolumeSnapshot and waits until its content is
// gone (DeleteSnapshot succeeded).
func (f *F) DeleteSnapshot(ctx context.Context, ns, name string) {
	ginkgo.GinkgoHelper()
	vs, err := f.Snap.SnapshotV1().VolumeSnapshots(ns).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return
	}
	must(err)
	content := ""
	if vs.Status != nil && vs.Status.BoundVolumeSnapshotContentName != nil {
		content = *vs.Status.BoundVolumeSnapshotContentName
	}
	err = f.Snap.SnapshotV1().VolumeSnapshots(ns).Delete(ctx, name, metav1.DeleteOptions{})
	if !apierrors.IsNotFound(err) {
		must(err)
	}
	must(f.Wait(ctx, "VolumeSnapshot "+ns+"/"+name+" to be deleted", 2*time.Minute, func(ctx context.Context) (bool, string, error) {
		_, err := f.Snap.SnapshotV1().VolumeSnapshots(ns).Get(ctx, name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), fmt.Sprint(err), nil
	}))
	if content == "" {
		return
	}
	must(f.Wait(ctx, "VolumeSnapshotContent "+content+" to be deleted (DeleteSnapshot)", 3*time.Minute, func(ctx context.Context) (bool, string, error) {
		c, err := f.Snap.SnapshotV1().VolumeSnapshotContents().Get(ctx, content, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, "", nil
		}
		if err != nil {
			return Retry(err)
		}
		return false, contentStatus(c), nil
	}))
}

func contentStatus(c *snapv1.VolumeSnapshotContent) string {
	if c.Status == nil {
		return "no status"
	}
	s := fmt.Sprintf("readyToUse %v", c.Status.ReadyToUse != nil && *c.Status.ReadyToUse)
	if c.Status.Error != nil && c.Status.Error.Message != nil {
		s += ", error: " + *c.Status.Error.Message
	}
	return s
}

// WaitSnapshotReady waits for readyToUse and returns the snapshot handle.
func (f *F) WaitSnapshotReady(ctx context.Context, ns, name string, timeout time.Duration) string {
	ginkgo.GinkgoHelper()
	handle := ""
	must(f.Wait(ctx, "VolumeSnapshot "+ns+"/"+name+" to be ready", timeout, func(ctx context.Context) (bool, string, error) {
		vs, err := f.Snap.SnapshotV1().VolumeSnapshots(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return Retry(err)
		}
		st := snapshotStatus(vs)
		if vs.Status == nil || vs.Status.ReadyToUse == nil || !*vs.Status.ReadyToUse || vs.Status.BoundVolumeSnapshotContentName == nil {
			return false, st, nil
		}
		c, err := f.Snap.SnapshotV1().VolumeSnapshotContents().Get(ctx, *vs.Status.BoundVolumeSnapshotContentName, metav1.GetOptions{})
		if err != nil {
			return Retry(err)
		}
		if c.Status != nil && c.Status.SnapshotHandle != nil {
			handle = *c.Status.SnapshotHandle
		}
		return true, "", nil
	}))
	return handle
}

// SnapshotError waits for the snapshot (or its content) to report an
// error containing every one of want, and returns it.
func (f *F) SnapshotError(ctx context.Context, ns, name string, timeout time.Duration, want ...string) (string, error) {
	var msg string
	err := f.Wait(ctx, "VolumeSnapshot "+ns+"/"+name+" to fail with "+strings.Join(want, " … "), timeout, func(ctx context.Context) (bool, string, error) {
		vs, err := f.Snap.SnapshotV1().VolumeSnapshots(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return Retry(err)
		}
		var msgs []string
		if vs.Status != nil && vs.Status.Error != nil && vs.Status.Error.Message != nil {
			msgs = append(msgs, *vs.Status.Error.Message)
		}
		if vs.Status != nil && vs.Status.BoundVolumeSnapshotContentName != nil {
			if c, err := f.Snap.SnapshotV1().VolumeSnapshotContents().Get(ctx, *vs.Status.BoundVolumeSnapshotContentName, metav1.GetOptions{}); err == nil &&
				c.Status != nil && c.Status.Error != nil && c.Status.Error.Message != nil {
				msgs = append(msgs, *c.Status.Error.Message)
			}
		}
		for _, m := range msgs {
			if containsAll(m, want) {
				msg = m
				return true, "", nil
			}
		}
		return false, snapshotStatus(vs), nil
	})
	return msg, err
}

func snapshotStatus(vs *snapv1.VolumeSnapshot) string {
	if vs.Status == nil {
		return "no status yet"
	}
	s := fmt.Sprintf("readyToUse %v", vs.Status.ReadyToUse != nil && *vs.Status.ReadyToUse)
	if vs.Status.Error != nil && vs.Status.Error.Message != nil {
		s += ", error: " + *vs.Status.Error.Message
	}
	return s
}
