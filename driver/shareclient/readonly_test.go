package shareclient

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/lab/testtier"
)

// TestShareMountedReadOnly: the share is mounted on the controller but
// read-only (a real read-only bind mount, which even root cannot write);
// CreateVolume and GetCapacity are FAILED_PRECONDITION naming server and
// share and saying it is not writable, and nothing is created.
func TestShareMountedReadOnly(t *testing.T) {
	testtier.NeedRoot(t)
	for _, k := range kinds[:2] { // nfs-client, smb-client
		t.Run(k.name, func(t *testing.T) {
			d, base := newTestDriver(t, k)
			if err := syscall.Mount(base, base, "", syscall.MS_BIND, ""); err != nil {
				t.Fatalf("bind mount: %v", err)
			}
			t.Cleanup(func() { _ = syscall.Unmount(base, syscall.MNT_DETACH) })
			if err := syscall.Mount("", base, "", syscall.MS_BIND|syscall.MS_REMOUNT|syscall.MS_RDONLY, ""); err != nil {
				t.Fatalf("remount read-only: %v", err)
			}
			_, err := d.CreateVolume(context.Background(), &csi.CreateVolumeRequest{Name: "pvc-1", VolumeCapabilities: rwx()})
			if code(err) != codes.FailedPrecondition {
				t.Fatalf("got %v, want FAILED_PRECONDITION", err)
			}
			msg := status.Convert(err).Message()
			for _, want := range []string{"nas.example:/export/k8s", "not writable", "read-only file system"} {
				if !strings.Contains(msg, want) {
					t.Errorf("message %q does not say %q", msg, want)
				}
			}
			if _, err := os.Stat(filepath.Join(base, "v", "pvc-1")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("volume directory made anyway: %v", err)
			}
			if _, err := d.GetCapacity(context.Background(), &csi.GetCapacityRequest{}); code(err) != codes.FailedPrecondition {
				t.Errorf("GetCapacity: got %v, want FAILED_PRECONDITION", err)
			}
		})
	}
}
