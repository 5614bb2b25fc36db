//go:build unix

package zfs

import (
	"testing"

	"github.com/switchyard-csi/switchyard/driver/metrics/roundtrip"
)

// Every command sent over SSH is one round trip in the call's tally (the
// metrics interceptor's backend_round_trips_total); a command refused
// before it was sent is none.
func TestSSHCountsRoundTrips(t *testing.T) {
	srv := newTestSSHServer(t, nil, 0)
	s := newTestSSH(t, srv, nil, nil)
	ctx, tally := roundtrip.With(testContext(t))
	for range 3 {
		if _, err := s.Run(ctx, "true", RunOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if got := tally.Get(roundtrip.SSH); got != 3 {
		t.Fatalf("ssh round trips %d, want 3", got)
	}
	if got := tally.Get(roundtrip.HTTP) + tally.Get(roundtrip.WebSocket); got != 0 {
		t.Fatalf("other round trips %d, want 0", got)
	}
	if _, err := s.Run(testContext(t), "true", RunOptions{}); err != nil { // a context without tally: nothing to count into
		t.Fatal(err)
	}
	if got := tally.Get(roundtrip.SSH); got != 3 {
		t.Fatalf("a call outside the tally's context counted: %d", got)
	}
}
