package dirvol

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"

	"github.com/switchyard-csi/switchyard/driver/config"
	"github.com/switchyard-csi/switchyard/driver/dirvol/dirvoltest"
)

// BenchmarkListVolumesWalk is a CO's full ListVolumes walk (pages of 500)
// over 10,000 volumes once the directory has settled, in process: the
// controller's own cost per walk, without gRPC or the proxy. The volumes
// live on /dev/shm when it exists (creating them is not what is measured).
func BenchmarkListVolumesWalk(b *testing.B) {
	const total = 10000
	base := b.TempDir()
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		shm, err := os.MkdirTemp("/dev/shm", "dirvol-bench-")
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { os.RemoveAll(shm) })
		base = shm
	}
	d, _ := newTestDriver(b, func(cfg config.Tree) { section(cfg)["controllerBasePath"] = base })
	for i := range total {
		dirvoltest.MustCreate(b, d, dirvoltest.CreateReq(fmt.Sprintf("pvc-%05d", i), gib))
	}
	time.Sleep(100 * time.Millisecond) // the directory's times settle
	b.ResetTimer()
	for range b.N {
		seen, token := 0, ""
		for {
			resp, err := d.ListVolumes(ctx, &csi.ListVolumesRequest{MaxEntries: 500, StartingToken: token})
			if err != nil {
				b.Fatal(err)
			}
			seen += len(resp.GetEntries())
			if token = resp.GetNextToken(); token == "" {
				break
			}
		}
		if seen != total {
			b.Fatalf("walk listed %d, want %d", seen, total)
		}
	}
}
