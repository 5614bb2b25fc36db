package sharing

import (
	"context"
	"encoding/json"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/switchyard-csi/switchyard/simulators/truenas/middleware"
	"github.com/switchyard-csi/switchyard/simulators/zfsmodel"
)

// BenchmarkNFSShareChurn is the sharing service alone, without transport,
// latency or driver: 16 goroutines each create a share on its own dataset
// and delete it again, while the table holds 100 other shares (what
// BenchmarkTrueNASCreateDelete's table holds mid-run). It reports the
// wall and this process's CPU (rusage) per create + delete: the
// simulator's own cost, which the end-to-end benchmark mixes with the
// driver's and the gRPC client's.
func BenchmarkNFSShareChurn(b *testing.B) {
	const callers, others = 16, 100
	dir := b.TempDir()
	m, err := zfsmodel.Open(zfsmodel.Options{StateDir: filepath.Join(dir, "zfs"), Pools: []zfsmodel.PoolSpec{{Name: "tank", Size: 10 << 30}}, RescanInterval: -1})
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	if err := m.SetProperty("tank", "mountpoint", "/mnt/tank"); err != nil {
		b.Fatal(err)
	}
	for i := range others + callers {
		if err := m.Create("tank/v"+itoa(i), zfsmodel.Filesystem, nil, zfsmodel.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	r := middleware.NewRegistry()
	v, _ := middleware.ParseVersion("25.10")
	if _, err := Register(r, m, v, Options{StateDir: filepath.Join(dir, "sharing")}); err != nil {
		b.Fatal(err)
	}
	call := func(method string, arg any) (any, error) {
		mm, _ := r.Lookup(method)
		p, _ := json.Marshal(arg)
		return mm.Handler(&middleware.Call{Ctx: context.Background(), Version: v, User: "root"}, []json.RawMessage{p})
	}
	for i := range others {
		if _, err := call("sharing.nfs.create", map[string]any{"path": "/mnt/tank/v" + itoa(i)}); err != nil {
			b.Fatal(err)
		}
	}
	cpu := func() time.Duration {
		var ru syscall.Rusage
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	b.ResetTimer()
	cpu0, start := cpu(), time.Now()
	var wg sync.WaitGroup
	for c := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := c; i < b.N; i += callers {
				res, err := call("sharing.nfs.create", map[string]any{"path": "/mnt/tank/v" + itoa(others+c)})
				if err != nil {
					b.Error(err)
					return
				}
				if _, err := call("sharing.nfs.delete", res.(middleware.Row)["id"]); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	b.ReportMetric(float64(time.Since(start).Microseconds())/float64(b.N), "wall-us/pair")
	b.ReportMetric(float64((cpu()-cpu0).Microseconds())/float64(b.N), "cpu-us/pair")
}
