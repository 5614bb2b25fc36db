package suites

import (
	"context"
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	storagev1 "k8s.io/api/storage/v1"

	"github.com/switchyard-csi/switchyard/e2e/backends"
	"github.com/switchyard-csi/switchyard/e2e/framework"
)

// docs/migrating-between-connections.md, run as written: a PVC on
// connection "old" is snapshotted, and the snapshot is restored into a PVC
// whose StorageClass names connection "new". Both connections are
// zfs-generic-nfs on the lab's ZFS host with their own parent datasets:
// to the driver they are two NAS boxes, and the restore is a zfs send on
// one streamed through the controller into a zfs receive on the other.
// The PVCs bind at once (Immediate) and no pod mounts them: the data is
// written and read on the ZFS host itself, so the spec runs on the host's
// node without the storage VM (the host has no NFS client).
const (
	migrateFam = "zfs-generic-nfs"
	migrateOld = "e2e-mig-old"
	migrateNew = "e2e-mig-new"
)

var _ = Describe("migrating a PVC between connections with a VolumeSnapshot and a restore", Ordered, Label("migrate"), func() {
	var fam backends.Family

	BeforeAll(func(ctx SpecContext) {
		var err error
		fam, err = backends.Lookup(migrateFam)
		Expect(err).NotTo(HaveOccurred())
		if ok, why := fam.Available(env); !ok {
			skipOrFail(why)
		}
		for _, conn := range []string{migrateOld, migrateNew} {
			putAndWait(ctx, conn, backends.ConnectionFile(env, fam, conn))
		}
	}, NodeTimeout(10*time.Minute))

	It("restores a snapshot made on one connection into a PVC on another: the data arrives, the volume is the new connection's, nothing is left behind", func(ctx SpecContext) {
		ns := f.Namespace(ctx, "migrate")
		pool := "tank"
		if env.Lab.ZFS.Pool != "" {
			pool = env.Lab.ZFS.Pool
		}
		// 1. The workload's PVC on the old NAS, with data in it.
		oldSC := f.StorageClass(ctx, "mig-old", framework.Class{Driver: f.Config.DriverName, Parameters: fam.StorageParameters(env, migrateOld), Binding: storagev1.VolumeBindingImmediate})
		f.PVC(ctx, ns, "data", framework.Claim{Class: oldSC.Name, Size: dataSize})
		_, oldPV := f.WaitPVCBound(ctx, ns, "data", 5*time.Minute)
		oldID := strings.TrimPrefix(oldPV.Spec.CSI.VolumeHandle, "v:"+migrateOld+"/")
		Expect(oldPV.Spec.CSI.VolumeHandle).To(HavePrefix("v:" + migrateOld + "/"))
		oldDS := pool + "/k8s/" + migrateOld + "/" + oldID
		marker := "migrated " + string(oldPV.UID)
		mp := zfsRun(ctx, "zfs get -H -o value mountpoint "+oldDS)
		zfsRun(ctx, fmt.Sprintf("echo '%s' > %s/marker", marker, mp))

		// 2. A VolumeSnapshot of it (on the old NAS).
		vsc := f.SnapshotClass(ctx, "mig", f.Config.DriverName, nil)
		f.Snapshot(ctx, ns, "move", vsc, "data")
		sh := f.WaitSnapshotReady(ctx, ns, "move", 3*time.Minute)
		Expect(sh).To(HavePrefix("s:" + migrateOld + "/"))

		// 3. The restore into a StorageClass of the new NAS.
		newSC := f.StorageClass(ctx, "mig-new", framework.Class{Driver: f.Config.DriverName, Parameters: fam.StorageParameters(env, migrateNew), Binding: storagev1.VolumeBindingImmediate})
		start := time.Now()
		f.PVC(ctx, ns, "data-new", framework.Claim{Class: newSC.Name, Size: dataSize, FromSnapshot: "move"})
		_, newPV := f.WaitPVCBound(ctx, ns, "data-new", 6*time.Minute)
		f.Timings.Since(migrateFam, "restore across connections", framework.PVCToBound, start)
		Expect(newPV.Spec.CSI.VolumeHandle).To(HavePrefix("v:"+migrateNew+"/"), "the restored volume lives on the new connection")
		newID := strings.TrimPrefix(newPV.Spec.CSI.VolumeHandle, "v:"+migrateNew+"/")
		newDS := pool + "/k8s/" + migrateNew + "/" + newID

		// The received dataset is a volume of the new connection, as a
		// fresh one would be: its data, its size, its share, and no
		// snapshot it arrived with.
		newMP := zfsRun(ctx, "zfs get -H -o value mountpoint "+newDS)
		Expect(zfsRun(ctx, "cat "+newMP+"/marker")).To(Equal(marker))
		Expect(zfsRun(ctx, "zfs get -Hp -o value refquota "+newDS)).To(Equal("1073741824"))
		Expect(zfsRun(ctx, "zfs get -H -o value sharenfs "+newDS)).To(ContainSubstring("rw"))
		Expect(zfsRun(ctx, "zfs list -H -o name -t snapshot -r "+newDS)).NotTo(ContainSubstring("@"), "the snapshot the copy arrived with is removed")
		Expect(zfsRun(ctx, "zfs list -H -o name -t snapshot -r "+oldDS)).NotTo(ContainSubstring("@xfer-"), "no temporary send snapshot left on the source")

		// 4. The old NAS is emptied: the snapshot and the old PVC go, the
		// new one stays whole.
		f.DeleteSnapshot(ctx, ns, "move")
		f.DeletePVC(ctx, ns, "data")
		expectNothingLeft(ctx, fam, migrateOld, nil)
		Expect(zfsRun(ctx, "cat "+newMP+"/marker")).To(Equal(marker), "the new volume does not depend on the old one")
		f.DeletePVC(ctx, ns, "data-new")
		expectNothingLeft(ctx, fam, migrateNew, nil)
	}, NodeTimeout(15*time.Minute))
})

// zfsRun runs a command on the lab's ZFS host and returns its trimmed output.
func zfsRun(ctx context.Context, cmd string) string {
	GinkgoHelper()
	out, err := storageHostRun(ctx, cmd)
	Expect(err).NotTo(HaveOccurred())
	return out
}

// storageHostRun runs a command over SSH on the lab's ZFS host itself (its
// check address when it has one), behind the driver's back, and returns its
// trimmed output.
func storageHostRun(ctx context.Context, cmd string) (string, error) {
	z := env.Lab.ZFS
	addr := z.CheckSSH
	if addr == "" {
		addr = z.SSH
	}
	out, err := backends.SSHRun(ctx, addr, z.User, z.Password, cmd)
	if err != nil {
		return "", fmt.Errorf("%s on %s: %v: %s", cmd, addr, err, out)
	}
	return strings.TrimSpace(out), nil
}
