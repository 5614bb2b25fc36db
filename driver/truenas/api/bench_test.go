package api

import (
	"context"
	"testing"
)

// BenchmarkCallWebSocket measures calls per second over one multiplexed
// WebSocket with many goroutines calling at once (the server answers at
// once, so this is the client's and the framing's cost).
func BenchmarkCallWebSocket(b *testing.B) {
	f := newFakeNAS(b, "25.10").start()
	cfg := f.config()
	cfg.MaxConcurrentCalls = 16
	c := newClient(b, cfg)
	ctx := context.Background()
	if _, err := c.Call(ctx, "test.echo", 0); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := c.Call(ctx, "test.echo", 42); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	if s := b.Elapsed().Seconds(); s > 0 {
		b.ReportMetric(float64(b.N)/s, "calls/s")
	}
	if st := c.Stats(); st.Dials > len(c.ws.lanes) {
		b.Fatalf("stats %+v: more sockets than lanes (%d)", st, len(c.ws.lanes))
	}
}
