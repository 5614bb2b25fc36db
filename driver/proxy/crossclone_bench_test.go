package proxy

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"

	"github.com/switchyard-csi/switchyard/driver/zfs"
	"github.com/switchyard-csi/switchyard/lab/zfshost"
)

// benchPayload is the data of the source volume in the copy benchmarks.
const benchPayload = 64 << 20

// BenchmarkCloneAcrossZFS copies a 64 MiB filesystem between two
// zfs-generic-nfs connections on two simulated ZFS hosts: zfs send on one
// streamed through the controller (this process) over SSH into zfs
// receive -s on the other. It reports MB/s and the peak Go heap in use
// during the copy above the heap before it (this process also runs both
// simulators, so that is an upper bound on the controller's share).
// BenchmarkLocalSendReceiveZFS is the same data sent with
// `zfs send | zfs receive` on one of the hosts in one SSH command: the
// copy without the controller in the path.
func BenchmarkCloneAcrossZFS(b *testing.B) {
	r := newRig(b)
	ha, hb := startBenchHost(b), startBenchHost(b)
	r.write("nas-old", ha.DriverConfig("zfs-generic-nfs", "old", ""))
	r.write("nas-new", hb.DriverConfig("zfs-generic-nfs", "new", ""))
	src := benchSource(b, r, ha)
	ctx := context.Background()
	b.SetBytes(benchPayload)
	b.ResetTimer()
	var peak int64
	for i := 0; i < b.N; i++ {
		stop := sampleHeap(&peak)
		req := cloneReq(fmt.Sprintf("pvc-copy-%d", i), "nas-new", src)
		req.CapacityRange = &csipb.CapacityRange{RequiredBytes: 2 * benchPayload}
		if _, err := r.ctl.CreateVolume(ctx, req); err != nil {
			b.Fatal(err)
		}
		stop()
	}
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
}

func BenchmarkLocalSendReceiveZFS(b *testing.B) {
	r := newRig(b)
	ha := startBenchHost(b)
	r.write("nas-old", ha.DriverConfig("zfs-generic-nfs", "old", ""))
	benchSource(b, r, ha)
	host, port, _ := net.SplitHostPort(ha.Addr)
	p, _ := strconv.Atoi(port)
	ex, err := zfs.NewSSH(zfs.SSHConfig{Host: host, Port: p, Username: ha.User, Password: ha.Password}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer ex.Close()
	ctx := context.Background()
	snap := ha.Pool + "/k8s/old/pvc-src@bench"
	if out, err := ex.Run(ctx, "zfs snapshot "+snap, zfs.RunOptions{}); err != nil || out.Code != 0 {
		b.Fatalf("snapshot: %v %s", err, out.Stderr)
	}
	if out, err := ex.Run(ctx, "zfs create -p "+ha.Pool+"/local", zfs.RunOptions{}); err != nil || out.Code != 0 {
		b.Fatalf("create: %v %s", err, out.Stderr)
	}
	b.SetBytes(benchPayload)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		line := fmt.Sprintf("zfs send %s | zfs receive %s/local/copy-%d", snap, ha.Pool, i)
		if out, err := ex.Run(ctx, line, zfs.RunOptions{}); err != nil || out.Code != 0 {
			b.Fatalf("%s: %v %s", line, err, out.Stderr)
		}
	}
}

func startBenchHost(b *testing.B) *zfshost.Host {
	b.Helper()
	h, err := zfshost.Start(zfshost.Options{Dir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { h.Close() })
	return h
}

// benchSource makes pvc-src on nas-old holding benchPayload bytes and
// returns its handle.
func benchSource(b *testing.B, r *rig, h *zfshost.Host) string {
	b.Helper()
	req := setReq("pvc-src", map[string]string{ConnectionParameter: "nas-old"}, nil)
	req.CapacityRange = &csipb.CapacityRange{RequiredBytes: 2 * benchPayload}
	resp, err := r.ctl.CreateVolume(context.Background(), req)
	if err != nil {
		b.Fatal(err)
	}
	writeVolumeData(b, h, h.Pool+"/k8s/old/pvc-src", bytes.Repeat([]byte("0123456789abcdef"), benchPayload/16))
	return resp.GetVolume().GetVolumeId()
}

// sampleHeap records the largest HeapInuse growth over the value at the
// start, every 10 ms, until the returned stop is called.
func sampleHeap(peak *int64) (stop func()) {
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	base := int64(ms.HeapInuse)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		for {
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			if d := int64(m.HeapInuse) - base; d > *peak {
				*peak = d
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}
