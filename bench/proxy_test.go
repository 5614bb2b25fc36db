// Package bench holds the Go benchmarks that check switchyard's speed
// targets (`make bench`).
package bench

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"

	_ "github.com/switchyard-csi/switchyard/driver/allbackends"
	"github.com/switchyard-csi/switchyard/driver/assembly"
	csisrv "github.com/switchyard-csi/switchyard/driver/csi"
	"github.com/switchyard-csi/switchyard/driver/proxy"
	"github.com/switchyard-csi/switchyard/lab/csiclient"
)

// start serves a main config on a unix socket and returns a client.
func start(b *testing.B, dir, main string) *csiclient.Client {
	b.Helper()
	mainFile := filepath.Join(dir, "main.yaml")
	if err := os.WriteFile(mainFile, []byte(main), 0o600); err != nil {
		b.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	p, err := assembly.New(assembly.Options{ConfigFile: mainFile, CSIName: "bench", NodeName: "bench-node", StateDir: filepath.Join(dir, "state"), Logger: log, Modes: []string{assembly.ModeController}})
	if err != nil {
		b.Fatal(err)
	}
	srv := p.NewServer(log)
	l, err := csisrv.Listen("unix://" + filepath.Join(dir, "csi.sock"))
	if err != nil {
		b.Fatal(err)
	}
	p.Identity.SetReady(true)
	go srv.Serve(l)
	b.Cleanup(func() { srv.Stop(context.Background()); p.Close() })
	c, err := csiclient.Dial("unix://" + filepath.Join(dir, "csi.sock"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	return c
}

var mountCap = []*csipb.VolumeCapability{{
	AccessType: &csipb.VolumeCapability_Mount{Mount: &csipb.VolumeCapability_MountVolume{}},
	AccessMode: &csipb.VolumeCapability_AccessMode{Mode: csipb.VolumeCapability_AccessMode_SINGLE_NODE_WRITER},
}}

// BenchmarkProxyOverhead measures a cheap call (ValidateVolumeCapabilities)
// over the gRPC socket, straight to local-hostpath and through the proxy.
// The two are called alternately in one loop so that machine noise hits
// both alike. Target: the proxy adds at most 10µs at the median
// (p50-added-ns) and parses no connection file on the hot path.
func BenchmarkProxyOverhead(b *testing.B) {
	dir := b.TempDir()
	hostpath := fmt.Sprintf("local-hostpath:\n  shareBasePath: %[1]s/hp\n  controllerBasePath: %[1]s/hp\n", dir)
	ddir, pdir := filepath.Join(dir, "direct"), filepath.Join(dir, "proxy")
	os.MkdirAll(ddir, 0o755)
	os.MkdirAll(filepath.Join(pdir, "conns"), 0o755)
	os.WriteFile(filepath.Join(pdir, "conns", "fast.yaml"), []byte("driver: local-hostpath\n"+hostpath), 0o600)
	direct := start(b, ddir, "driver: local-hostpath\n"+hostpath)
	prox := start(b, pdir, fmt.Sprintf("driver: proxy\nproxy:\n  configFolder: %s/conns\n  nodeTopology:\n    type: node\n", pdir))

	ctx := context.Background()
	vol, err := prox.Controller.CreateVolume(ctx, &csipb.CreateVolumeRequest{Name: "pvc-bench", Parameters: map[string]string{"connection": "fast"}, VolumeCapabilities: mountCap})
	if err != nil {
		b.Fatal(err)
	}
	dreq := &csipb.ValidateVolumeCapabilitiesRequest{VolumeId: "pvc-bench", VolumeCapabilities: mountCap}
	preq := &csipb.ValidateVolumeCapabilitiesRequest{VolumeId: vol.GetVolume().GetVolumeId(), VolumeCapabilities: mountCap}
	call := func(c *csiclient.Client, req *csipb.ValidateVolumeCapabilitiesRequest) time.Duration {
		t0 := time.Now()
		if _, err := c.Controller.ValidateVolumeCapabilities(ctx, req); err != nil {
			b.Fatal(err)
		}
		return time.Since(t0)
	}
	for range 200 { // warm connections and the proxy's cache
		call(direct, dreq)
		call(prox, preq)
	}
	reads := proxy.ConnectionFileReads()
	dl := make([]time.Duration, 0, b.N)
	pl := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		dl = append(dl, call(direct, dreq))
		pl = append(pl, call(prox, preq))
	}
	b.StopTimer()
	if n := proxy.ConnectionFileReads() - reads; n != 0 {
		b.Fatalf("%d connection files parsed on the hot path; want 0", n)
	}
	slices.Sort(dl)
	slices.Sort(pl)
	b.ReportMetric(float64(dl[len(dl)/2].Nanoseconds()), "p50-direct-ns")
	b.ReportMetric(float64(pl[len(pl)/2].Nanoseconds()), "p50-proxy-ns")
	b.ReportMetric(float64((pl[len(pl)/2] - dl[len(dl)/2]).Nanoseconds()), "p50-added-ns")
}

// BenchmarkProxyLayer is the proxy's own work per call, in-process and
// without gRPC: handle parsing, the connection-file stat, the cache lookup
// and the id swap, on top of the backend call.
func BenchmarkProxyLayer(b *testing.B) {
	dir := b.TempDir()
	os.MkdirAll(filepath.Join(dir, "conns"), 0o755)
	os.WriteFile(filepath.Join(dir, "conns", "fast.yaml"), []byte(fmt.Sprintf("driver: local-hostpath\nlocal-hostpath:\n  shareBasePath: %[1]s/hp\n  controllerBasePath: %[1]s/hp\n", dir)), 0o600)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	p, err := assembly.New(assembly.Options{Config: map[string]any{"driver": "proxy", "proxy": map[string]any{"configFolder": filepath.Join(dir, "conns"), "nodeTopology": map[string]any{"type": "node"}}},
		CSIName: "bench", NodeName: "n", Logger: log, Modes: []string{assembly.ModeController}})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	ctx := context.Background()
	vol, err := p.Controller.CreateVolume(ctx, &csipb.CreateVolumeRequest{Name: "pvc-bench", Parameters: map[string]string{"connection": "fast"}, VolumeCapabilities: mountCap})
	if err != nil {
		b.Fatal(err)
	}
	req := &csipb.ValidateVolumeCapabilitiesRequest{VolumeId: vol.GetVolume().GetVolumeId(), VolumeCapabilities: mountCap}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := p.Controller.ValidateVolumeCapabilities(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
}
