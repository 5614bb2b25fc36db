package sanity

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"

	"github.com/switchyard-csi/switchyard/lab/loadgen"
	"github.com/switchyard-csi/switchyard/lab/zfshost"
)

// BenchmarkClientsCreateDelete: 100 CreateVolume then 100 DeleteVolume
// through the proxy, 16 concurrent callers, for the backends of issue 14
// that can run here. zfs-local-* reach the simulated ZFS host (as the
// node's own sshd), which answers every command after 5 ms; the bound is
// commands × 5 ms × 100 ÷ 10 sessions. nfs-client calls no remote API (the
// share is a mounted directory): its numbers are the proxy's and the file
// system's own cost.
func BenchmarkClientsCreateDelete(b *testing.B) {
	const (
		volumes = 100
		callers = 16
		latency = 5 * time.Millisecond
	)
	for _, driver := range []string{"zfs-local-dataset", "zfs-local-zvol", "nfs-client"} {
		b.Run(driver, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				base := b.TempDir()
				var h *zfshost.Host
				conn := "driver: nfs-client\nnfs:\n  shareHost: 192.0.2.10\n  shareBasePath: /export\n  controllerBasePath: " + base + "\n  checkControllerMount: false\n"
				main := "driver: proxy\nproxy:\n  configFolder: {{dir}}/connections\n"
				if driver != "nfs-client" {
					var err error
					h, err = zfshost.Start(zfshost.Options{Dir: filepath.Join(base, "host"), Latency: latency})
					if err != nil {
						b.Fatal(err)
					}
					conn = h.DriverConfig(driver, "bench", "")
					main += "  nodeTopology:\n    type: node\n"
				}
				tg := target{name: driver + "/bench", main: main, connections: map[string]string{"c": conn}}
				c, _ := startTarget(b, &simHosts{base: base}, base, tg)
				params := map[string]string{"connection": "c"}
				capab := []*csipb.VolumeCapability{{AccessType: &csipb.VolumeCapability_Mount{Mount: &csipb.VolumeCapability_MountVolume{}},
					AccessMode: &csipb.VolumeCapability_AccessMode{Mode: csipb.VolumeCapability_AccessMode_SINGLE_NODE_WRITER}}}
				ctx := context.Background()
				if _, err := c.Controller.GetCapacity(ctx, &csipb.GetCapacityRequest{Parameters: params}); err != nil {
					b.Fatal(err) // warm up: connects and probes the host
				}
				commands := func() int {
					if h == nil {
						return 0
					}
					return len(h.Server.Commands())
				}
				run := func(op func(i int) error) time.Duration {
					if h != nil {
						h.Server.ResetCommands()
					}
					wall, err := loadgen.Spread(volumes, callers, op)
					if err != nil {
						b.Fatal(err)
					}
					return wall
				}
				ids := make([]string, volumes)
				createWall := run(func(i int) error {
					r, err := c.Controller.CreateVolume(ctx, &csipb.CreateVolumeRequest{Name: fmt.Sprintf("pvc-%03d", i), Parameters: params,
						VolumeCapabilities: capab, CapacityRange: &csipb.CapacityRange{RequiredBytes: 1 << 30}})
					if err == nil {
						ids[i] = r.GetVolume().GetVolumeId()
					}
					return err
				})
				perCreate := float64(commands()) / volumes
				deleteWall := run(func(i int) error {
					_, err := c.Controller.DeleteVolume(ctx, &csipb.DeleteVolumeRequest{VolumeId: ids[i]})
					return err
				})
				perDelete := float64(commands()) / volumes
				b.ReportMetric(perCreate, "cmds/create")
				b.ReportMetric(perDelete, "cmds/delete")
				b.ReportMetric(float64(createWall.Milliseconds()), "create-wall-ms")
				b.ReportMetric(float64(deleteWall.Milliseconds()), "delete-wall-ms")
				if h != nil {
					bound := time.Duration((perCreate + perDelete) * float64(latency) * volumes / 10)
					b.ReportMetric(float64(bound.Milliseconds()), "bound-ms")
					b.ReportMetric(float64(createWall+deleteWall)/float64(bound), "x-bound")
					h.Close()
				}
				c.Close()
			}
		})
	}
}
