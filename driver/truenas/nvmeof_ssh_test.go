package truenas_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/driver/backend"
	"github.com/switchyard-csi/switchyard/driver/config"
	"github.com/switchyard-csi/switchyard/lab/truenashost"
)

// TestNVMeoFOverSSH: freenas-nvmeof and truenas-nvmeof make their zvols
// with zfs over SSH (the SSH endpoint's zfs commands are counted) and the
// subsystem and namespace through the nvmet API, with democratic-csi's
// volume_context; delete leaves nothing.
func TestNVMeoFOverSSH(t *testing.T) {
	for _, c := range []struct{ version, driver string }{{"25.10", "freenas-nvmeof"}, {"26.04", "truenas-nvmeof"}} {
		t.Run(c.version+"/"+c.driver, func(t *testing.T) {
			ctx := context.Background()
			h := startHost(t, truenashost.Options{Version: c.version, SSH: true})
			d := newDriver(t, h.DriverConfig(c.driver, "vols", ""))
			// A latency of 1ns on zfs marks each zfs command that arrives over SSH.
			h.Server.SSHFaults().SetLatency("zfs", time.Nanosecond)
			vol, err := d.CreateVolume(ctx, &csi.CreateVolumeRequest{Name: "pvc-1", VolumeCapabilities: caps(true),
				CapacityRange: &csi.CapacityRange{RequiredBytes: 1 << 30}})
			if err != nil {
				t.Fatalf("create: %v", err)
			}
			if n := h.Server.SSHFaults().Counts().Delayed; n == 0 {
				t.Error("no zfs command reached the SSH endpoint: the zvol was not made over SSH")
			}
			vc := vol.GetVolume().GetVolumeContext()
			if vc["node_attach_driver"] != "nvmeof" || vc["provisioner_driver"] != c.driver || vc["nqn"] == "" || vc["nsid"] == "" ||
				!strings.Contains(vc["transports"]+vc["transport"], "tcp://127.0.0.1:4420") {
				t.Fatalf("volume_context %v", vc)
			}
			st := h.Server.Sharing().State()
			if len(st.NVMetSubsystems) != 1 || len(st.NVMetNamespaces) != 1 {
				t.Fatalf("nvmet state after create: %+v", st)
			}
			snap, err := d.CreateSnapshot(ctx, &csi.CreateSnapshotRequest{Name: "snap-1", SourceVolumeId: vol.GetVolume().GetVolumeId()})
			if err != nil {
				t.Fatalf("snapshot: %v", err)
			}
			if _, err := d.ControllerExpandVolume(ctx, &csi.ControllerExpandVolumeRequest{VolumeId: vol.GetVolume().GetVolumeId(), CapacityRange: &csi.CapacityRange{RequiredBytes: 2 << 30}}); err != nil {
				t.Fatalf("expand: %v", err)
			}
			if _, err := d.DeleteSnapshot(ctx, &csi.DeleteSnapshotRequest{SnapshotId: snap.GetSnapshot().GetSnapshotId()}); err != nil {
				t.Fatal(err)
			}
			if _, err := d.DeleteVolume(ctx, &csi.DeleteVolumeRequest{VolumeId: vol.GetVolume().GetVolumeId()}); err != nil {
				t.Fatal(err)
			}
			if n := shareObjects(h); n != 0 {
				t.Errorf("%d share objects left: %+v", n, h.Server.Sharing().State())
			}
			for _, r := range datasets(h) {
				if strings.HasPrefix(r, "tank/k8s/vols/") {
					t.Errorf("dataset %s left behind", r)
				}
			}
		})
	}
}

// TestNVMeoFOverSSHBeforeNVMet: a release without nvmet (25.04) is refused
// with FAILED_PRECONDITION naming the versions, and nothing is left.
func TestNVMeoFOverSSHBeforeNVMet(t *testing.T) {
	h := startHost(t, truenashost.Options{Version: "25.04", SSH: true})
	d := newDriver(t, h.DriverConfig("freenas-nvmeof", "vols", ""))
	_, err := d.CreateVolume(context.Background(), &csi.CreateVolumeRequest{Name: "pvc-1", VolumeCapabilities: caps(true)})
	if status.Code(err) != codes.FailedPrecondition || !strings.Contains(err.Error(), "25.10") {
		t.Fatalf("got %v, want FAILED_PRECONDITION naming 25.10", err)
	}
	for _, r := range datasets(h) {
		if strings.HasPrefix(r, "tank/k8s/vols/") {
			t.Errorf("dataset %s left behind", r)
		}
	}
}

// TestNVMeoFOverSSHNeedsSSH: the SSH driver without sshConnection is a
// config problem naming the key, not "unknown driver".
func TestNVMeoFOverSSHNeedsSSH(t *testing.T) {
	ty, ok := backend.Lookup("truenas-nvmeof")
	if !ok {
		t.Fatal("truenas-nvmeof is not registered")
	}
	tree := config.Tree{"driver": "freenas-nvmeof", "httpConnection": map[string]any{"host": "nas", "apiKey": "k"},
		"zfs": map[string]any{"datasetParentName": "tank/v"}, "nvmeof": map[string]any{"transports": []any{"tcp://10.0.0.5:4420"}}}
	ps := ty.Validate(tree)
	found := false
	for _, p := range ps {
		found = found || p.Key == "sshConnection"
	}
	if !found {
		t.Errorf("problems %v, want one naming sshConnection", ps)
	}
}
