package api

import (
	"context"
	"testing"

	"github.com/switchyard-csi/switchyard/driver/metrics/roundtrip"
)

// Every HTTP request, the login included, is one round trip in the call's
// tally (the metrics interceptor's backend_round_trips_total).
func TestRequestsCountRoundTrips(t *testing.T) {
	f := newFakeAPI(t)
	f.route(servicePath, okService)
	c := newClient(t, f.config(f.start()))
	ctx, tally := roundtrip.With(context.Background())
	for range 3 {
		if _, err := c.GetService(ctx, "red", "csiService"); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := tally.Get(roundtrip.HTTP), uint64(c.Stats().Requests); got != want || got != 4 {
		t.Fatalf("http round trips %d, want %d (3 calls and the login)", got, want)
	}
}
