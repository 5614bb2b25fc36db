package zfsgeneric_test

import (
	"strings"
	"testing"

	csi "github.com/container-storage-interface/spec/lib/go/csi"

	"github.com/switchyard-csi/switchyard/lab/zfshost"
)

// A share property turned off behind the driver's back is
// INACCESSIBLE/ShareMissing naming the dataset and the property; turned
// back on, the volume is healthy again.
func TestPropertyShareHealth(t *testing.T) {
	h := startHost(t, zfshost.Options{})
	d := newDriver(t, genericConfig(h, "zfs-generic-nfs", ""))
	v, err := d.CreateVolume(ctx, createReq("pvc-health", 16<<20))
	if err != nil {
		t.Fatal(err)
	}
	id := v.GetVolume().GetVolumeId()
	ds := "tank/k8s/v/" + id
	get := func() []*csi.VolumeHealth_VolumeHealthEntry {
		t.Helper()
		r, err := d.ControllerGetVolumeHealth(ctx, &csi.ControllerGetVolumeHealthRequest{VolumeId: id})
		if err != nil {
			t.Fatal(err)
		}
		return r.GetVolumeHealth().GetHealthStatuses()
	}
	if e := get(); len(e) != 0 {
		t.Fatalf("a fresh volume: %v", e)
	}
	was := strings.Join(zfsLines(t, h, "get", "-H", "-o", "value", "sharenfs", ds), "")
	zfsLines(t, h, "set", "sharenfs=off", ds)
	e := get()
	if len(e) != 1 || e[0].GetReason() != "ShareMissing" || e[0].GetStatus() != csi.VolumeHealthErrorType_INACCESSIBLE ||
		!strings.Contains(e[0].GetMessage(), ds) || !strings.Contains(e[0].GetMessage(), `sharenfs is "off"`) {
		t.Fatalf("share off: %v", e)
	}
	zfsLines(t, h, "set", "sharenfs="+was, ds)
	if e := get(); len(e) != 0 {
		t.Fatalf("share back on (%s): %v", was, e)
	}
}
