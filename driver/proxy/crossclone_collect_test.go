package proxy

import (
	"context"
	"testing"
	"time"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
)

// A PVC deleted while its copy ran: the external-provisioner never
// retries CreateVolume, so no call collects the finished copy. Its volume
// is deleted after CollectTimeout instead of leaking; a copy that is
// collected in time is kept.
func TestUncollectedCopyIsDeleted(t *testing.T) {
	old := CollectTimeout
	CollectTimeout = 100 * time.Millisecond
	t.Cleanup(func() { CollectTimeout = old })
	r := newRig(t)
	r.fake("old", "  stream: zfs-filesystem", "  gate: "+t.Name())
	lnew := r.fake("new", "  stream: zfs-filesystem", `  capacity: "1073741824"`)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := r.ctl.CreateVolume(ctx, cloneReq("pvc-abandoned", "new", "v:old/pvc-1"))
	wantCode(t, "first call", err, codes.Aborted, "in progress")
	openGate(t.Name())
	deadline := time.Now().Add(5 * time.Second)
	made := false
	for time.Now().Before(deadline) {
		_, ok := fakeVolumes(lnew)["pvc-abandoned"]
		if ok {
			made = true
		} else if made {
			return // made by the copy, then deleted uncollected
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("volume made by the copy: %v; still there after CollectTimeout: %v", made, fakeVolumes(lnew))
}

// A DeleteVolume of the volume a running copy is making cancels the copy
// and removes what it had received; nothing appears afterwards.
func TestDeleteVolumeCancelsRunningCopy(t *testing.T) {
	r := newRig(t)
	r.fake("old", "  stream: zfs-filesystem", "  gate: "+t.Name())
	lnew := r.fake("new", "  stream: zfs-filesystem", `  capacity: "1073741824"`)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := r.ctl.CreateVolume(ctx, cloneReq("pvc-cancelled", "new", "v:old/pvc-1"))
	wantCode(t, "first call", err, codes.Aborted, "in progress")
	if _, err := r.ctl.DeleteVolume(context.Background(), &csipb.DeleteVolumeRequest{VolumeId: "v:new/pvc-cancelled"}); err != nil {
		t.Fatalf("DeleteVolume during the copy: %v", err)
	}
	openGate(t.Name()) // too late: the copy was stopped
	time.Sleep(100 * time.Millisecond)
	if _, ok := fakeVolumes(lnew)["pvc-cancelled"]; ok {
		t.Fatal("the cancelled copy made its volume")
	}
	if b := receivedBy(lnew, "pvc-cancelled"); b != nil {
		t.Fatalf("the cancelled copy left %d bytes on the target", len(b))
	}
	// A later CreateVolume of the name starts a new copy and completes.
	if _, err := r.ctl.CreateVolume(context.Background(), cloneReq("pvc-cancelled", "new", "v:old/pvc-1")); err != nil {
		t.Fatalf("a new create after the cancel: %v", err)
	}
}
