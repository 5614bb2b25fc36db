package api

import (
	"testing"

	"github.com/switchyard-csi/switchyard/driver/metrics/roundtrip"
)

// Every REST request and every WebSocket call (logins included) is one
// round trip in the call's tally (the metrics interceptor's
// backend_round_trips_total), of its transport's kind.
func TestCallsCountRoundTrips(t *testing.T) {
	for _, tc := range []struct {
		version string
		kind    roundtrip.Kind
	}{{"24.10", roundtrip.HTTP}, {"25.10", roundtrip.WebSocket}} {
		t.Run(tc.version, func(t *testing.T) {
			f := newFakeNAS(t, tc.version).start()
			c := newClient(t, f.config())
			ctx, tally := roundtrip.With(ctxT(t))
			for range 3 {
				if _, err := c.Call(ctx, "test.echo", "x"); err != nil {
					t.Fatal(err)
				}
			}
			// The server saw the three calls plus the transport's own
			// (system.version; over the WebSocket also the login).
			seen := f.methods()
			if got := tally.Get(tc.kind); got != uint64(len(seen)) || got < 4 {
				t.Fatalf("%s round trips %d; the server answered %d: %v", tc.kind, got, len(seen), seen)
			}
			if other := tally.Get(roundtrip.HTTP) + tally.Get(roundtrip.WebSocket) - tally.Get(tc.kind); other != 0 {
				t.Fatalf("%d round trips of the other transport", other)
			}
		})
	}
}
