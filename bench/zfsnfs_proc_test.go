package bench

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"

	"github.com/switchyard-csi/switchyard/lab/zfshost"
	"github.com/switchyard-csi/switchyard/simulators/zfsssh"
)

// execsAndCommands counts the SSH execs (sessions) and the commands the
// simulated host ran.
func execsAndCommands(recs []zfsssh.Record) (execs, cmds int) {
	type key struct{ conn, session uint64 }
	seen := map[key]bool{}
	for _, r := range recs {
		seen[key{r.Conn, r.Session}] = true
	}
	return len(seen), len(recs)
}

// BenchmarkZFSNFSProcess is issue 16's zfs-generic-nfs row: the driver as
// its own process (standalone zfs-generic-nfs), the simulated host charging
// 5 ms for every command it runs, n CreateVolume then n DeleteVolume from 1
// and from 16 callers. It reports the p50 of each, creates/s, the driver's
// CPU per create+delete pair (from /proc/<pid>/stat), SSH execs and host
// commands per operation, and the bound the host's latency sets: one
// caller's create cannot beat commands × 5 ms, and 16 callers share the
// connection's 10 sessions (OpenSSH's MaxSessions default).
func BenchmarkZFSNFSProcess(b *testing.B) {
	skipUnlessLinux(b)
	const latency = 5 * time.Millisecond
	for _, tc := range []struct{ callers, n int }{{1, 40}, {16, 200}} {
		b.Run(fmt.Sprintf("callers=%d", tc.callers), func(b *testing.B) {
			for range b.N {
				dir := b.TempDir()
				h, err := zfshost.Start(zfshost.Options{Dir: filepath.Join(dir, "host"), Latency: latency})
				if err != nil {
					b.Fatal(err)
				}
				d := startDriver(b, dir, h.DriverConfig("zfs-generic-nfs", "v", ""))
				ctl := d.c.Controller
				// Warm up: connect, learn the parent (as the CO's
				// GetCapacity polling does).
				if _, err := ctl.GetCapacity(ctx, &csipb.GetCapacityRequest{}); err != nil {
					b.Fatal(err)
				}
				ids := make([]string, tc.n)
				h.Server.ResetCommands()
				cpu0 := d.cpu(b)
				cl, cwall := batch(b, tc.n, tc.callers, func(i int) error {
					r, err := ctl.CreateVolume(ctx, &csipb.CreateVolumeRequest{Name: fmt.Sprintf("pvc-%04d", i), VolumeCapabilities: mountCap,
						CapacityRange: &csipb.CapacityRange{RequiredBytes: 1 << 30}})
					ids[i] = r.GetVolume().GetVolumeId()
					return err
				})
				cExecs, cCmds := execsAndCommands(h.Server.Commands())
				h.Server.ResetCommands()
				dl, dwall := batch(b, tc.n, tc.callers, func(i int) error {
					_, err := ctl.DeleteVolume(ctx, &csipb.DeleteVolumeRequest{VolumeId: ids[i]})
					return err
				})
				cpu := d.cpu(b) - cpu0
				dExecs, dCmds := execsAndCommands(h.Server.Commands())
				n := float64(tc.n)
				perCreate, perDelete := float64(cCmds)/n, float64(dCmds)/n
				createBound := time.Duration(perCreate * float64(latency))
				rateBound := 1 / (perCreate * latency.Seconds()) * float64(min(tc.callers, 10))
				b.ReportMetric(ms(pct(cl, .5)), "create-p50-ms")
				b.ReportMetric(ms(pct(dl, .5)), "delete-p50-ms")
				b.ReportMetric(ms(pct(cl, .99)), "create-p99-ms")
				b.ReportMetric(ms(createBound), "create-bound-ms")
				b.ReportMetric(n/cwall.Seconds(), "creates/s")
				b.ReportMetric(rateBound, "creates/s-bound")
				b.ReportMetric(n/dwall.Seconds(), "deletes/s")
				b.ReportMetric(ms(cpu)/n, "driver-cpu-ms/pair")
				b.ReportMetric(float64(cExecs)/n, "execs/create")
				b.ReportMetric(float64(dExecs)/n, "execs/delete")
				b.ReportMetric(perCreate, "cmds/create")
				b.ReportMetric(perDelete, "cmds/delete")
				h.Close()
			}
		})
	}
}
