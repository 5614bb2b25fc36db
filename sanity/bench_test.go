package sanity

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"

	"github.com/switchyard-csi/switchyard/lab/csiclient"
)

// BenchmarkStagePublish is NodeStageVolume + NodePublishVolume of one
// volume per node protocol (ns/op; unpublish and unstage run outside the
// timer). It needs the storage VM's kernel (SANITY_KERNEL=1): TestSanityInVM
// runs it there and reports the numbers.
func BenchmarkStagePublish(b *testing.B) {
	if !kernelMode() {
		b.Skip("needs the storage VM (run by TestSanityInVM)")
	}
	for _, name := range []string{"zfs-generic-nfs/proxy", "zfs-generic-iscsi/proxy", "zfs-generic-nvmeof/proxy", "infinia-nvmeof/proxy"} {
		b.Run(strings.ReplaceAll(name, "/", "-"), func(b *testing.B) {
			base := b.TempDir()
			hosts := &simHosts{base: base}
			hosts.useKernel(b)
			defer hosts.close()
			var tg target
			for _, t := range activeTargets() {
				if t.name == name {
					tg = t
				}
			}
			c, dir := startTarget(b, hosts, base, tg)
			defer c.Close()
			ctx := context.Background()
			capab := &csipb.VolumeCapability{AccessType: &csipb.VolumeCapability_Mount{Mount: &csipb.VolumeCapability_MountVolume{}},
				AccessMode: &csipb.VolumeCapability_AccessMode{Mode: csipb.VolumeCapability_AccessMode_SINGLE_NODE_WRITER}}
			cr, err := c.Controller.CreateVolume(ctx, &csipb.CreateVolumeRequest{Name: "bench", Parameters: tg.params,
				CapacityRange: &csipb.CapacityRange{RequiredBytes: 1 << 30}, VolumeCapabilities: []*csipb.VolumeCapability{capab}})
			if err != nil {
				b.Fatal(err)
			}
			vol := cr.GetVolume()
			defer c.Controller.DeleteVolume(ctx, &csipb.DeleteVolumeRequest{VolumeId: vol.GetVolumeId()})
			var pubCtx map[string]string
			if tg.publish {
				ni, _ := c.Node.NodeGetInfo(ctx, &csipb.NodeGetInfoRequest{})
				pr, err := c.Controller.ControllerPublishVolume(ctx, &csipb.ControllerPublishVolumeRequest{VolumeId: vol.GetVolumeId(), NodeId: ni.GetNodeId(), VolumeCapability: capab})
				if err != nil {
					b.Fatal(err)
				}
				pubCtx = pr.GetPublishContext()
			}
			staging, target := filepath.Join(dir, "staging"), filepath.Join(dir, "target")
			if err := os.MkdirAll(staging, 0o750); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := c.Node.NodeStageVolume(ctx, &csipb.NodeStageVolumeRequest{VolumeId: vol.GetVolumeId(), StagingTargetPath: staging,
					VolumeCapability: capab, VolumeContext: vol.GetVolumeContext(), PublishContext: pubCtx, Secrets: tg.nodeSecrets}); err != nil {
					b.Fatal(err)
				}
				if _, err := c.Node.NodePublishVolume(ctx, &csipb.NodePublishVolumeRequest{VolumeId: vol.GetVolumeId(), StagingTargetPath: staging,
					TargetPath: target, VolumeCapability: capab, VolumeContext: vol.GetVolumeContext(), PublishContext: pubCtx}); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				if _, err := c.Node.NodeUnpublishVolume(ctx, &csipb.NodeUnpublishVolumeRequest{VolumeId: vol.GetVolumeId(), TargetPath: target}); err != nil {
					b.Fatal(err)
				}
				if _, err := c.Node.NodeUnstageVolume(ctx, &csipb.NodeUnstageVolumeRequest{VolumeId: vol.GetVolumeId(), StagingTargetPath: staging}); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
		})
	}
}

// startTarget writes tg's configs under base and serves its plugin.
func startTarget(tb testing.TB, hosts *simHosts, base string, tg target) (*csiclient.Client, string) {
	tb.Helper()
	dir := filepath.Join(base, "t")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	mainFile, err := writeTarget(tg, dir, func(host, driver, name string) string {
		c, err := hosts.config(host, driver, name)
		if err != nil {
			tb.Fatal(err)
		}
		return c
	})
	if err != nil {
		tb.Fatal(err)
	}
	sock := filepath.Join(dir, "csi.sock")
	tb.Cleanup(serve(tb, mainFile, filepath.Join(dir, "node-state"), sock, slog.New(slog.NewTextHandler(io.Discard, nil))))
	c, err := csiclient.Dial("unix://" + sock)
	if err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := c.WaitReady(ctx); err != nil {
		tb.Fatal(fmt.Errorf("plugin for %s: %w", tg.name, err))
	}
	return c, dir
}
