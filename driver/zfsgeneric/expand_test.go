package zfsgeneric_test

import (
	"strconv"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"

	"github.com/switchyard-csi/switchyard/driver/zfsgeneric"
	"github.com/switchyard-csi/switchyard/lab/zfshost"
)

// ControllerExpandVolume is one exec whether it grows the volume or finds
// it large enough, and never shrinks it: the comparison runs on the host
// (zfs get | xargs test && zfs set), so a smaller request leaves the size
// alone and is answered with the size the volume has.
func TestExpandOneExec(t *testing.T) {
	for _, c := range []struct {
		driver string
		prop   string
		create *csi.CreateVolumeRequest
	}{
		{zfsgeneric.DriverNFS, "refquota", createReq("pvc-grow", 1<<30)},
		{zfsgeneric.DriverISCSI, "volsize", &csi.CreateVolumeRequest{Name: "pvc-grow", VolumeCapabilities: blockCaps(), CapacityRange: &csi.CapacityRange{RequiredBytes: 1 << 30}}},
	} {
		t.Run(c.driver, func(t *testing.T) {
			h := startHost(t, zfshost.Options{})
			d := newDriver(t, genericConfig(h, c.driver, ""))
			if _, err := d.GetCapacity(ctx, &csi.GetCapacityRequest{}); err != nil {
				t.Fatal(err)
			}
			r, err := d.CreateVolume(ctx, c.create)
			if err != nil {
				t.Fatal(err)
			}
			id := r.GetVolume().GetVolumeId()
			ds := "tank/k8s/v/" + id
			size := func() int64 {
				t.Helper()
				v := zfsLines(t, h, "get", "-Hp", "-o", "value", c.prop, ds)
				n, err := strconv.ParseInt(v[0], 10, 64)
				if err != nil {
					t.Fatalf("%s of %s: %v", c.prop, ds, v)
				}
				return n
			}
			steps := []struct {
				name     string
				required int64
				want     int64 // the size on the host and in the answer
			}{
				{"grow", 2 << 30, 2 << 30},
				{"same size again", 2 << 30, 2 << 30},
				{"smaller: no shrink", 1 << 30, 2 << 30},
				{"grow unaligned", 3<<30 + 1000, 3<<30 + 16<<10}, // rounded to 16 KiB (zvols) or kept (quotas)
			}
			for _, s := range steps {
				want := s.want
				if c.prop == "refquota" && s.name == "grow unaligned" {
					want = s.required
				}
				h.Server.ResetCommands()
				resp, err := d.ControllerExpandVolume(ctx, &csi.ControllerExpandVolumeRequest{VolumeId: id, CapacityRange: &csi.CapacityRange{RequiredBytes: s.required}})
				if err != nil {
					t.Fatalf("%s: %v", s.name, err)
				}
				if n, _ := execs(h.Server.Commands()); n != 1 {
					t.Errorf("%s: %d execs, want 1: %v", s.name, n, h.Server.Commands())
				}
				if got := size(); got != want || resp.GetCapacityBytes() != want {
					t.Errorf("%s: %s %d on the host, answered %d; want %d", s.name, c.prop, got, resp.GetCapacityBytes(), want)
				}
				if resp.GetNodeExpansionRequired() != (c.prop == "volsize") {
					t.Errorf("%s: node_expansion_required %v", s.name, resp.GetNodeExpansionRequired())
				}
			}
			h.Server.ResetCommands()
			_, err = d.ControllerExpandVolume(ctx, &csi.ControllerExpandVolumeRequest{VolumeId: "pvc-missing", CapacityRange: &csi.CapacityRange{RequiredBytes: 2 << 30}})
			wantStatus(t, "expand a missing volume", err, codes.NotFound, "pvc-missing")
			if n, _ := execs(h.Server.Commands()); n != 1 {
				t.Errorf("missing volume: %d execs, want 1", n)
			}
		})
	}
}

// A zvol whose block size is not the configured one (made before the
// setting changed) is rounded to its own: the one-exec guess is refused by
// zfs ("must be a multiple of volume block size") and the step-by-step path
// grows it correctly.
func TestExpandZvolOfAnotherBlockSize(t *testing.T) {
	h := startHost(t, zfshost.Options{})
	d := newDriver(t, genericConfig(h, zfsgeneric.DriverISCSI, ""))
	zfsLines(t, h, "create", "-p", "-V", strconv.Itoa(1<<30), "-o", "volblocksize=65536", "tank/k8s/v/pvc-big-blocks")
	resp, err := d.ControllerExpandVolume(ctx, &csi.ControllerExpandVolumeRequest{VolumeId: "pvc-big-blocks", CapacityRange: &csi.CapacityRange{RequiredBytes: 2<<30 + 1}})
	if err != nil {
		t.Fatal(err)
	}
	want := int64(2<<30 + 64<<10)
	got := zfsLines(t, h, "get", "-Hp", "-o", "value", "volsize", "tank/k8s/v/pvc-big-blocks")
	if got[0] != strconv.FormatInt(want, 10) || resp.GetCapacityBytes() != want {
		t.Fatalf("volsize %v, answered %d; want %d", got, resp.GetCapacityBytes(), want)
	}
}
