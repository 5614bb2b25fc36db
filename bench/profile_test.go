package bench

import (
	"fmt"
	"path/filepath"
	"testing"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"

	"github.com/switchyard-csi/switchyard/lab/zfshost"
)

// BenchmarkZFSNFSPair is one CreateVolume+DeleteVolume pair of a standalone
// zfs-generic-nfs driver, in-process, against the simulated host without
// latency: the benchmark to profile the driver's CPU per call with
//
//	go test -run '^$' -bench ZFSNFSPair -cpuprofile cpu.out ./bench/
//	go tool pprof -top -focus 'grpc|driver' bench.test cpu.out
//
// (the simulator's own work shows under simulators/).
func BenchmarkZFSNFSPair(b *testing.B) {
	dir := b.TempDir()
	h, err := zfshost.Start(zfshost.Options{Dir: filepath.Join(dir, "host")})
	if err != nil {
		b.Fatal(err)
	}
	defer h.Close()
	c := start(b, dir, h.DriverConfig("zfs-generic-nfs", "v", ""))
	ctl := csipb.NewControllerClient(c.Conn)
	if _, err := ctl.GetCapacity(ctx, &csipb.GetCapacityRequest{}); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := range b.N {
		r, err := ctl.CreateVolume(ctx, &csipb.CreateVolumeRequest{Name: fmt.Sprintf("pvc-%d", i), VolumeCapabilities: mountCap,
			CapacityRange: &csipb.CapacityRange{RequiredBytes: 1 << 30}})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := ctl.DeleteVolume(ctx, &csipb.DeleteVolumeRequest{VolumeId: r.GetVolume().GetVolumeId()}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkValidateParallel is ValidateVolumeCapabilities over the gRPC
// socket from 16 goroutines, in-process, to profile the server's share
// (grpc.(*Server) and driver/ frames) with -cpuprofile.
func BenchmarkValidateParallel(b *testing.B) {
	dir := b.TempDir()
	c := start(b, dir, hostpathMain(dir))
	if _, err := c.Controller.CreateVolume(ctx, &csipb.CreateVolumeRequest{Name: "pvc-v", VolumeCapabilities: mountCap}); err != nil {
		b.Fatal(err)
	}
	req := &csipb.ValidateVolumeCapabilitiesRequest{VolumeId: "pvc-v", VolumeCapabilities: mountCap}
	b.SetParallelism(8)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := c.Controller.ValidateVolumeCapabilities(ctx, req); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkHostpathPair is one local-hostpath CreateVolume+DeleteVolume
// pair over the gRPC socket, in-process, to profile the server's share
// with -cpuprofile (bench/profile.sh).
func BenchmarkHostpathPair(b *testing.B) {
	dir := b.TempDir()
	c := start(b, dir, hostpathMain(dir))
	b.ResetTimer()
	for i := range b.N {
		name := fmt.Sprintf("pvc-%d", i)
		if _, err := c.Controller.CreateVolume(ctx, &csipb.CreateVolumeRequest{Name: name, VolumeCapabilities: mountCap}); err != nil {
			b.Fatal(err)
		}
		if _, err := c.Controller.DeleteVolume(ctx, &csipb.DeleteVolumeRequest{VolumeId: name}); err != nil {
			b.Fatal(err)
		}
	}
}
