package metrics

import (
	"context"
	"testing"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// BenchmarkInterceptor measures what metrics add to one CSI call: the
// interceptor around a handler that does nothing, against that handler
// called bare. docs/metrics.md reports the numbers.
func BenchmarkInterceptor(b *testing.B) {
	m := New()
	m.ConnectionState().ConnectionLoaded("nas", "/conns/nas.yaml", nil)
	ic := m.Interceptor(ProxyRouter(""))
	ctx := context.Background()
	nop := func(context.Context, any) (any, error) { return nil, nil }
	byHandle := &csipb.ValidateVolumeCapabilitiesRequest{VolumeId: "v:nas/pvc-0123456789abcdef"}
	byParam := &csipb.CreateVolumeRequest{Name: "pvc-1", Parameters: map[string]string{"connection": "nas"}}
	probe := &csipb.ProbeRequest{}
	in, cin := info("ValidateVolumeCapabilities"), info("CreateVolume")
	pin := &grpc.UnaryServerInfo{FullMethod: "/csi.v1.Identity/Probe"}
	gone := status.Error(codes.NotFound, "gone")
	for _, c := range []struct {
		name string
		run  func()
	}{
		{"bare", func() { _, _ = nop(ctx, byHandle) }},
		{"handle", func() { _, _ = ic(ctx, byHandle, in, nop) }},
		{"parameter", func() { _, _ = ic(ctx, byParam, cin, nop) }},
		{"no-connection", func() { _, _ = ic(ctx, probe, pin, nop) }},
		{"error", func() { _, _ = ic(ctx, byHandle, in, func(context.Context, any) (any, error) { return nil, gone }) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				c.run()
			}
		})
	}
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				_, _ = ic(ctx, byHandle, in, nop)
			}
		})
	})
}
