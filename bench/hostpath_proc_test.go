package bench

import (
	"fmt"
	"os"
	"testing"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
)

// hostpathMain is a standalone local-hostpath driver storing under dir.
func hostpathMain(dir string) string {
	return fmt.Sprintf("driver: local-hostpath\nlocal-hostpath:\n  shareBasePath: %[1]s/hp\n  controllerBasePath: %[1]s/hp\n", dir)
}

// BenchmarkValidateProcess is issue 16's first row: the driver's CPU per
// ValidateVolumeCapabilities call (local-hostpath, the volume exists) with
// 16 callers, read from /proc/<pid>/stat around the batch. Goal ≤ 30 µs.
func BenchmarkValidateProcess(b *testing.B) {
	skipUnlessLinux(b)
	for range b.N {
		dir := b.TempDir()
		d := startDriver(b, dir, hostpathMain(dir))
		if _, err := d.c.Controller.CreateVolume(ctx, &csipb.CreateVolumeRequest{Name: "pvc-v", VolumeCapabilities: mountCap}); err != nil {
			b.Fatal(err)
		}
		validateBatch(b, d)
	}
}

// validateBatch sends 20,000 ValidateVolumeCapabilities of volume pvc-v
// from 16 callers and reports the server process's CPU per call.
func validateBatch(b *testing.B, d driverProc) {
	const n, callers = 20000, 16
	req := &csipb.ValidateVolumeCapabilitiesRequest{VolumeId: "pvc-v", VolumeCapabilities: mountCap}
	stopPerf := d.perfRecord(b, b.Name())
	cpu0 := d.cpu(b)
	lat, wall := batch(b, n, callers, func(int) error {
		_, err := d.c.Controller.ValidateVolumeCapabilities(ctx, req)
		return err
	})
	cpu := d.cpu(b) - cpu0
	stopPerf()
	b.ReportMetric(us(cpu)/n, "server-cpu-us/call")
	b.ReportMetric(us(pct(lat, .5)), "p50-us")
	b.ReportMetric(float64(n)/wall.Seconds(), "calls/s")
}

// BenchmarkHostpathPairProcess is issue 16's second row: the driver's CPU
// per local-hostpath CreateVolume+DeleteVolume pair (one caller). Goal
// ≤ 0.3 ms. fs=disk stores the volumes in the test's temporary directory
// (this machine's ext4), fs=tmpfs on /dev/shm, where an fsync costs
// nothing: the difference is what durability costs in the kernel.
func BenchmarkHostpathPairProcess(b *testing.B) {
	skipUnlessLinux(b)
	const n = 2000
	for _, fs := range []string{"disk", "tmpfs"} {
		b.Run("fs="+fs, func(b *testing.B) {
			for range b.N {
				dir := b.TempDir()
				data := dir
				if fs == "tmpfs" {
					shm, err := os.MkdirTemp("/dev/shm", "switchyard-hostpath-")
					if err != nil {
						b.Skipf("no /dev/shm: %v", err)
					}
					b.Cleanup(func() { os.RemoveAll(shm) })
					data = shm
				}
				d := startDriver(b, dir, hostpathMain(data))
				ctl := d.c.Controller
				stopPerf := d.perfRecord(b, b.Name())
				cpu0 := d.cpu(b)
				lat, _ := batch(b, n, 1, createDeletePair(ctl))
				cpu := d.cpu(b) - cpu0
				stopPerf()
				b.ReportMetric(ms(cpu)/n, "server-cpu-ms/pair")
				b.ReportMetric(us(pct(lat, .5)), "pair-p50-us")
			}
		})
	}
}

// createDeletePair is the local-hostpath pair of the benchmarks above: op
// i creates the volume pvc-<i> and deletes it.
func createDeletePair(ctl csipb.ControllerClient) func(i int) error {
	return func(i int) error {
		name := fmt.Sprintf("pvc-%d", i)
		if _, err := ctl.CreateVolume(ctx, &csipb.CreateVolumeRequest{Name: name, VolumeCapabilities: mountCap}); err != nil {
			return err
		}
		_, err := ctl.DeleteVolume(ctx, &csipb.DeleteVolumeRequest{VolumeId: name})
		return err
	}
}
