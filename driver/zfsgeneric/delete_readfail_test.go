package zfsgeneric_test

import (
	"strings"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"

	"github.com/switchyard-csi/switchyard/driver/zfsgeneric"
	"github.com/switchyard-csi/switchyard/lab/zfshost"
)

// A DeleteVolume whose one-exec program cannot read the volume for another
// reason than "dataset does not exist" (here every zfs command fails, as
// the fault soak's error rate makes them) must fail, not answer "deleted
// already": the volume is still there, and the CO, believing it gone,
// would never delete it again. This is the fault soak's leak (lab/soak,
// seed 1: soak-1-28-src with its snapshot and clone), which needed a failed
// read and a refused destroy in one program; it is not a matter of the
// transport, so both the exec and the shell-session transports are tried.
func TestDeleteVolumeReadFailureIsNotGone(t *testing.T) {
	for _, session := range []bool{false, true} {
		name := "exec"
		if session {
			name = "shell-session"
		}
		t.Run(name, func(t *testing.T) {
			h := startHost(t, zfshost.Options{})
			cfg := genericConfig(h, zfsgeneric.DriverNFS, "")
			if session {
				cfg = strings.Replace(cfg, "sshConnection:\n", "sshConnection:\n  shellSession: true\n", 1)
			} else {
				cfg = strings.Replace(cfg, "sshConnection:\n", "sshConnection:\n  shellSession: false\n", 1)
			}
			d := newDriver(t, cfg)
			if _, err := d.GetCapacity(ctx, &csi.GetCapacityRequest{}); err != nil {
				t.Fatal(err)
			}
			r, err := d.CreateVolume(ctx, createReq("pvc-readfail", 1<<30))
			if err != nil {
				t.Fatal(err)
			}
			id := r.GetVolume().GetVolumeId()
			const ds = "tank/k8s/v/pvc-readfail"

			h.Server.Faults().SetErrorRate("zfs", 1)
			_, err = d.DeleteVolume(ctx, &csi.DeleteVolumeRequest{VolumeId: id})
			h.Server.Faults().SetErrorRate("zfs", 0)
			wantStatus(t, "DeleteVolume while zfs fails", err, codes.Internal, "injected fault")
			if got := zfsLines(t, h, "list", "-H", "-o", "name", ds); len(got) != 1 {
				t.Fatalf("after the failed delete: %v, want the volume still there", got)
			}

			if _, err := d.DeleteVolume(ctx, &csi.DeleteVolumeRequest{VolumeId: id}); err != nil {
				t.Fatalf("DeleteVolume retried: %v", err)
			}
			if got := zfsLines(t, h, "list", "-H", "-o", "name", ds); len(got) != 0 {
				t.Fatalf("after the retry: %v, want the volume gone", got)
			}
			// Deleting it once more: "does not exist" is success.
			if _, err := d.DeleteVolume(ctx, &csi.DeleteVolumeRequest{VolumeId: id}); err != nil {
				t.Fatalf("DeleteVolume of a deleted volume: %v", err)
			}
		})
	}
}
