package localhostpath

import (
	"fmt"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"

	"github.com/switchyard-csi/switchyard/driver/dirvol/dirvoltest"
)

// BenchmarkCreateDeleteVolume measures one empty volume's life: mkdir,
// metadata written and synced, rename into place, then removal.
func BenchmarkCreateDeleteVolume(b *testing.B) {
	d, _ := newTestDriver(b, nil)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		name := fmt.Sprintf("pvc-%d", i)
		i++
		resp, err := d.CreateVolume(ctx, dirvoltest.CreateReq(name, gib))
		if err != nil {
			b.Fatal(err)
		}
		if _, err := d.DeleteVolume(ctx, &csi.DeleteVolumeRequest{VolumeId: resp.GetVolume().GetVolumeId()}); err != nil {
			b.Fatal(err)
		}
	}
}
