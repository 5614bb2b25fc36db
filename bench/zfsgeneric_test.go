package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"

	"github.com/switchyard-csi/switchyard/lab/loadgen"
	"github.com/switchyard-csi/switchyard/lab/zfshost"
	"github.com/switchyard-csi/switchyard/simulators/zfsmodel"
)

var ctx = context.Background()

// zfsProxy serves a proxy with one zfs-generic-nfs connection ("zfs") to h.
func zfsProxy(b *testing.B, dir string, h *zfshost.Host) func(string) *csipb.CreateVolumeRequest {
	conns := filepath.Join(dir, "connections")
	if err := os.MkdirAll(conns, 0o755); err != nil {
		b.Fatal(err)
	}
	conn := h.DriverConfig("zfs-generic-nfs", "v", "")
	if err := os.WriteFile(filepath.Join(conns, "zfs.yaml"), []byte(conn), 0o600); err != nil {
		b.Fatal(err)
	}
	return func(name string) *csipb.CreateVolumeRequest {
		return &csipb.CreateVolumeRequest{Name: name, VolumeCapabilities: mountCap,
			CapacityRange: &csipb.CapacityRange{RequiredBytes: 1 << 30}, Parameters: map[string]string{"connection": "zfs"}}
	}
}

// BenchmarkZFSGenericCreateDelete: 100 CreateVolume then 100 DeleteVolume
// of zfs-generic-nfs through the proxy, 16 concurrent callers, with the
// simulated host answering every command after 5 ms. The bound is what
// session parallelism allows: commands per create × 5 ms × 100 ÷ 10
// sessions (the same for deletes); the target is wall time ≤ 1.5 × bound.
func BenchmarkZFSGenericCreateDelete(b *testing.B) {
	const (
		volumes = 100
		callers = 16
		latency = 5 * time.Millisecond
	)
	for i := 0; i < b.N; i++ {
		dir := b.TempDir()
		h, err := zfshost.Start(zfshost.Options{Dir: filepath.Join(dir, "host"), Latency: latency})
		if err != nil {
			b.Fatal(err)
		}
		req := zfsProxy(b, dir, h)
		c := start(b, dir, "driver: proxy\nproxy:\n  configFolder: "+filepath.Join(dir, "connections")+"\n")
		ctl := csipb.NewControllerClient(c.Conn)
		// Warm up: the first call connects and probes the host.
		if _, err := ctl.GetCapacity(ctx, &csipb.GetCapacityRequest{Parameters: map[string]string{"connection": "zfs"}}); err != nil {
			b.Fatal(err)
		}
		run := func(op func(i int) error) time.Duration {
			h.Server.ResetCommands()
			wall, err := loadgen.Spread(volumes, callers, op)
			if err != nil {
				b.Fatal(err)
			}
			return wall
		}
		ids := make([]string, volumes)
		createWall := run(func(i int) error {
			r, err := ctl.CreateVolume(ctx, req(fmt.Sprintf("pvc-%03d", i)))
			if err == nil {
				ids[i] = r.GetVolume().GetVolumeId()
			}
			return err
		})
		perCreate := float64(len(h.Server.Commands())) / volumes
		deleteWall := run(func(i int) error {
			_, err := ctl.DeleteVolume(ctx, &csipb.DeleteVolumeRequest{VolumeId: ids[i]})
			return err
		})
		perDelete := float64(len(h.Server.Commands())) / volumes
		sessions := 10.0
		createBound := time.Duration(perCreate * float64(latency) * volumes / sessions)
		deleteBound := time.Duration(perDelete * float64(latency) * volumes / sessions)
		b.ReportMetric(perCreate, "cmds/create")
		b.ReportMetric(perDelete, "cmds/delete")
		b.ReportMetric(float64(createWall.Milliseconds()), "create-wall-ms")
		b.ReportMetric(float64(createBound.Milliseconds()), "create-bound-ms")
		b.ReportMetric(float64(deleteWall.Milliseconds()), "delete-wall-ms")
		b.ReportMetric(float64(deleteBound.Milliseconds()), "delete-bound-ms")
		b.ReportMetric(float64(createWall+deleteWall)/float64(createBound+deleteBound), "x-bound")
		h.Close()
	}
}

// BenchmarkZFSGenericCreateLatency compares CreateVolume latency with 100
// and with 10,000 datasets already under the parent: the hot path must not
// list datasets (target: at most 1.2× slower).
func BenchmarkZFSGenericCreateLatency(b *testing.B) {
	for _, existing := range []int{100, 10000} {
		b.Run(fmt.Sprintf("existing=%d", existing), func(b *testing.B) {
			dir := b.TempDir()
			h, err := zfshost.Start(zfshost.Options{Dir: filepath.Join(dir, "host"), PoolSize: 1 << 50})
			if err != nil {
				b.Fatal(err)
			}
			defer h.Close()
			for i := 0; i < existing; i++ {
				if err := h.Model.Create(fmt.Sprintf("tank/k8s/v/seed-%05d", i), zfsmodel.Filesystem, nil, zfsmodel.CreateOptions{Parents: true}); err != nil {
					b.Fatal(err)
				}
			}
			req := zfsProxy(b, dir, h)
			c := start(b, dir, "driver: proxy\nproxy:\n  configFolder: "+filepath.Join(dir, "connections")+"\n")
			ctl := csipb.NewControllerClient(c.Conn)
			if _, err := ctl.GetCapacity(ctx, &csipb.GetCapacityRequest{Parameters: map[string]string{"connection": "zfs"}}); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := ctl.CreateVolume(ctx, req(fmt.Sprintf("pvc-%d", i))); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
