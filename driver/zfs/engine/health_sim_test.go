package engine_test

import (
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
)

// Over the simulated host: healthy volumes list with no health entries,
// one per volume and page; a dataset removed behind the driver's back is
// NOT_FOUND naming it.
func TestSimVolumeHealth(t *testing.T) {
	h := startHost(t)
	s := newSimEngine(t, h, "zfs-generic-nfs", "health", nil)
	a := s.mustCreateVolume(t, "pvc-a", 16*mib, nil)
	b := s.mustCreateVolume(t, "pvc-b", 16*mib, nil)
	page, err := s.ControllerListVolumeHealth(ctx, &csi.ControllerListVolumeHealthRequest{MaxEntries: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.GetEntries()) != 1 || page.GetNextToken() == "" || len(page.GetEntries()[0].GetHealthStatuses()) != 0 {
		t.Fatalf("first page %v", page)
	}
	rest, err := s.ControllerListVolumeHealth(ctx, &csi.ControllerListVolumeHealthRequest{StartingToken: page.GetNextToken()})
	if err != nil || len(rest.GetEntries()) != 1 || rest.GetEntries()[0].GetVolumeId() == page.GetEntries()[0].GetVolumeId() {
		t.Fatalf("second page %v %v", rest, err)
	}
	got, err := s.ControllerGetVolumeHealth(ctx, &csi.ControllerGetVolumeHealthRequest{VolumeId: a.GetVolumeId()})
	if err != nil || got.GetVolumeHealth().GetVolumeId() != a.GetVolumeId() || len(got.GetVolumeHealth().GetHealthStatuses()) != 0 {
		t.Errorf("health of a healthy volume: %v %v", got, err)
	}
	zfsLines(t, h, "destroy", "-r", s.parent+"/"+b.GetVolumeId())
	_, err = s.ControllerGetVolumeHealth(ctx, &csi.ControllerGetVolumeHealthRequest{VolumeId: b.GetVolumeId()})
	wantCode(t, "health of a destroyed dataset", err, codes.NotFound)
	_, err = s.ControllerListVolumeHealth(ctx, &csi.ControllerListVolumeHealthRequest{StartingToken: "bogus"})
	wantCode(t, "bad token", err, codes.Aborted)
}
