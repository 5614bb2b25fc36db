package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
)

// BenchmarkScaleProcess is issue 16's scale row: the proxy (the real
// binary) over local-hostpath connections, 10,000 volumes on one
// connection and 10 × 1,000 across ten, created by 16 callers. It reports
// whether CreateVolume stays flat (create-p50 of the first and of the last
// tenth of the creates, and their ratio), ListVolumes' first page (100
// entries) and a full walk (pages of 500), the driver's CPU per create and
// its RSS at the end. The volumes live on /dev/shm when it exists: the
// question is how the driver scales, not the disk's fsyncs
// (BenchmarkHostpathPairProcess measures those). SWITCHYARD_SCALE_VOLUMES
// changes the 10,000.
func BenchmarkScaleProcess(b *testing.B) {
	skipUnlessLinux(b)
	total := 10000
	if v := os.Getenv("SWITCHYARD_SCALE_VOLUMES"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 10 {
			b.Fatalf("SWITCHYARD_SCALE_VOLUMES=%q: want a number ≥ 10", v)
		}
		total = n
	}
	for _, conns := range []int{1, 10} {
		b.Run(fmt.Sprintf("connections=%d", conns), func(b *testing.B) {
			for range b.N {
				scaleOnce(b, conns, total)
			}
		})
	}
}

func scaleOnce(b *testing.B, conns, total int) {
	dir := b.TempDir()
	data := dir
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		shm, err := os.MkdirTemp("/dev/shm", "switchyard-scale-")
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { os.RemoveAll(shm) })
		data = shm
	}
	folder := filepath.Join(dir, "connections")
	if err := os.MkdirAll(folder, 0o755); err != nil {
		b.Fatal(err)
	}
	for i := range conns {
		base := filepath.Join(data, strconv.Itoa(i))
		cfg := fmt.Sprintf("driver: local-hostpath\nlocal-hostpath:\n  shareBasePath: %[1]s\n  controllerBasePath: %[1]s\n", base)
		if err := os.WriteFile(filepath.Join(folder, fmt.Sprintf("c%d.yaml", i)), []byte(cfg), 0o600); err != nil {
			b.Fatal(err)
		}
	}
	d := startDriver(b, dir, "driver: proxy\nproxy:\n  configFolder: "+folder+"\n  nodeTopology:\n    type: node\n")
	ctl := d.c.Controller
	cpu0 := d.cpu(b)
	lat, _ := batch(b, total, 16, func(i int) error {
		_, err := ctl.CreateVolume(ctx, &csipb.CreateVolumeRequest{Name: fmt.Sprintf("pvc-%05d", i), VolumeCapabilities: mountCap,
			Parameters: map[string]string{"connection": fmt.Sprintf("c%d", i%conns)}})
		return err
	})
	cpu := d.cpu(b) - cpu0
	tenth := total / 10
	first, last := pct(lat[:tenth], .5), pct(lat[total-tenth:], .5)
	// Right after the creates (the directory just changed), then again
	// once its times have settled (a driver may keep a listing only then:
	// driver/dirvol/listcache.go), as a CO's periodic listing finds it.
	cpu0 = d.cpu(b)
	firstPage, walk := listScale(b, ctl, total)
	listCPU := d.cpu(b) - cpu0
	time.Sleep(200 * time.Millisecond)
	cpu0 = d.cpu(b)
	firstSettled, walkSettled := listScale(b, ctl, total)
	settledCPU := d.cpu(b) - cpu0
	b.ReportMetric(ms(first), "create-p50-first-ms")
	b.ReportMetric(ms(last), "create-p50-last-ms")
	b.ReportMetric(float64(last)/float64(first), "last/first")
	b.ReportMetric(ms(firstPage), "list-first-page-ms")
	b.ReportMetric(ms(walk), "list-walk-ms")
	b.ReportMetric(ms(firstSettled), "list-first-page-settled-ms")
	b.ReportMetric(ms(walkSettled), "list-walk-settled-ms")
	b.ReportMetric(ms(listCPU), "list-cpu-ms")            // driver CPU: first page and walk
	b.ReportMetric(ms(settledCPU), "list-settled-cpu-ms") // the same, settled
	b.ReportMetric(us(cpu)/float64(total), "driver-cpu-us/create")
	b.ReportMetric(float64(rssOf(b, d.pid))/(1<<20), "rss-MiB")
}

// listScale times ListVolumes' first page (100 entries) and a full walk
// in pages of 500, which must list total volumes.
func listScale(b *testing.B, ctl csipb.ControllerClient, total int) (firstPage, walk time.Duration) {
	b.Helper()
	start := time.Now()
	page, err := ctl.ListVolumes(ctx, &csipb.ListVolumesRequest{MaxEntries: 100})
	if err != nil || len(page.GetEntries()) != 100 {
		b.Fatalf("first page: %d entries, %v", len(page.GetEntries()), err)
	}
	firstPage = time.Since(start)
	start = time.Now()
	seen, token := 0, ""
	for {
		r, err := ctl.ListVolumes(ctx, &csipb.ListVolumesRequest{MaxEntries: 500, StartingToken: token})
		if err != nil {
			b.Fatal(err)
		}
		seen += len(r.GetEntries())
		if token = r.GetNextToken(); token == "" {
			break
		}
	}
	walk = time.Since(start)
	if seen != total {
		b.Fatalf("the walk listed %d volumes, want %d", seen, total)
	}
	return firstPage, walk
}

// rssOf is a process's resident set size (VmRSS).
func rssOf(b *testing.B, pid int) int64 {
	b.Helper()
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatal(err)
	}
	var kb int64
	for _, l := range strings.Split(string(raw), "\n") {
		if _, err := fmt.Sscanf(l, "VmRSS: %d kB", &kb); err == nil {
			return kb << 10
		}
	}
	return 0
}
