package zfslocal_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"

	"github.com/switchyard-csi/switchyard/driver/zfslocal"
)

// BenchmarkCreateDelete reports the zfs commands one CreateVolume and one
// DeleteVolume run on the node (counted by the simulated host, which sees
// each simple command; 1ns of latency marks them).
func BenchmarkCreateDelete(b *testing.B) {
	for _, driver := range []string{zfslocal.DriverDataset, zfslocal.DriverZvol} {
		b.Run(driver, func(b *testing.B) {
			d, h := newSimDriver(b, driver, "tank/k8s/local/v")
			h.Server.Faults().SetLatency("", time.Nanosecond)
			var creates, deletes int64
			for i := 0; i < b.N; i++ {
				before := h.Server.Faults().Counts().Delayed
				resp, err := d.CreateVolume(ctx, &csi.CreateVolumeRequest{Name: fmt.Sprintf("pvc-%d", i), VolumeCapabilities: caps(false, ""),
					CapacityRange: &csi.CapacityRange{RequiredBytes: 1 << 30}})
				if err != nil {
					b.Fatal(err)
				}
				mid := h.Server.Faults().Counts().Delayed
				if _, err := d.DeleteVolume(ctx, &csi.DeleteVolumeRequest{VolumeId: resp.GetVolume().GetVolumeId()}); err != nil {
					b.Fatal(err)
				}
				creates += mid - before
				deletes += h.Server.Faults().Counts().Delayed - mid
			}
			b.ReportMetric(float64(creates)/float64(b.N), "cmds/create")
			b.ReportMetric(float64(deletes)/float64(b.N), "cmds/delete")
		})
	}
}
