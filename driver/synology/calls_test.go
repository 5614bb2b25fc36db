package synology_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"

	"github.com/switchyard-csi/switchyard/driver/synology"
	sim "github.com/switchyard-csi/switchyard/simulators/synology"
)

// TestCallsPerVolume counts DSM requests per CreateVolume and
// DeleteVolume (login excluded) and holds them to the numbers on
// docs/backends/synology.md.
func TestCallsPerVolume(t *testing.T) {
	for _, tc := range []struct {
		driver                 string
		create, again, destroy int64
	}{
		// iSCSI create: list LUNs, create, list, list targets, create target,
		// list targets, map, list targets (again: list LUNs, list targets); delete: list targets, delete
		// target, list LUNs, delete LUN, list LUNs until gone (>= 1).
		{synology.DriverISCSI, 8, 2, 5},
		// share create: get, create, get, NFS rules or permissions.
		{synology.DriverNFS, 4, 2, 1},
		{synology.DriverSMB, 4, 2, 1},
	} {
		t.Run(tc.driver, func(t *testing.T) {
			r := newRig(t, tc.driver, "", sim.Options{DeleteDelay: -1})
			r.mustCreate("warm-up", gib, nil) // logs in
			n := r.srv.Requests()
			v := r.mustCreate("pvc-1", gib, nil)
			create := r.srv.Requests() - n
			n = r.srv.Requests()
			r.mustCreate("pvc-1", gib, nil)
			again := r.srv.Requests() - n
			n = r.srv.Requests()
			if _, err := r.d.DeleteVolume(r.ctx, &csi.DeleteVolumeRequest{VolumeId: v.GetVolumeId()}); err != nil {
				t.Fatal(err)
			}
			destroy := r.srv.Requests() - n
			t.Logf("%s: CreateVolume %d requests (again: %d), DeleteVolume %d", tc.driver, create, again, destroy)
			if create != tc.create || again != tc.again || destroy != tc.destroy {
				t.Fatalf("requests: create %d, again %d, delete %d; want %d, %d, %d", create, again, destroy, tc.create, tc.again, tc.destroy)
			}
		})
	}
}

// BenchmarkConcurrentLifecycles: 100 creates and 100 deletes from 16
// callers against a DSM answering each request after 5 ms (over http, so
// TLS handshakes do not blur the count). The latency-only bound is
// requests/lifecycle x 5 ms x 100 / 16.
func BenchmarkConcurrentLifecycles(b *testing.B) {
	for _, driver := range []string{synology.DriverISCSI, synology.DriverNFS} {
		b.Run(driver, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				r := newRig(b, driver, "", sim.Options{Latency: 5 * time.Millisecond, DeleteDelay: -1, Plain: true})
				start := time.Now()
				var wg sync.WaitGroup
				jobs := make(chan int)
				for w := 0; w < 16; w++ {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for j := range jobs {
							v, err := r.create(fmt.Sprintf("pvc-%d", j), gib, nil)
							if err != nil {
								b.Error(err)
								continue
							}
							if _, err := r.d.DeleteVolume(r.ctx, &csi.DeleteVolumeRequest{VolumeId: v.GetVolumeId()}); err != nil {
								b.Error(err)
							}
						}
					}()
				}
				for j := 0; j < 100; j++ {
					jobs <- j
				}
				close(jobs)
				wg.Wait()
				b.ReportMetric(time.Since(start).Seconds(), "s/100-lifecycles")
				perLife := float64(r.srv.Requests()) / 100
				b.ReportMetric(perLife, "requests/lifecycle")
				b.ReportMetric(perLife*0.005*100/16, "s-bound")
			}
		})
	}
}
