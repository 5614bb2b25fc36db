package roundtrip

import (
	"context"
	"testing"
)

type otherKey struct{}

// Count adds to the tally of its context only, keeps the parent's values
// visible, and is a no-op without a tally.
func TestTally(t *testing.T) {
	parent := context.WithValue(context.Background(), otherKey{}, "kept")
	ctx, tally := With(parent)
	Count(ctx, SSH)
	Count(ctx, SSH)
	Count(ctx, WebSocket)
	Count(ctx, Kind(99)) // not a kind: ignored
	Count(parent, SSH)   // no tally: nothing happens
	if tally.Get(SSH) != 2 || tally.Get(WebSocket) != 1 || tally.Get(HTTP) != 0 || tally.Get(Kind(-1)) != 0 {
		t.Fatalf("tally ssh=%d ws=%d http=%d", tally.Get(SSH), tally.Get(WebSocket), tally.Get(HTTP))
	}
	if ctx.Value(otherKey{}) != "kept" {
		t.Fatal("the tally's context hides its parent's values")
	}
	inner, inTally := With(ctx) // a nested tally takes over
	Count(inner, HTTP)
	if inTally.Get(HTTP) != 1 || tally.Get(HTTP) != 0 {
		t.Fatal("a nested tally counted into the outer one")
	}
	for k, want := range map[Kind]string{SSH: "ssh", HTTP: "http", WebSocket: "websocket", Kind(7): "other"} {
		if k.String() != want {
			t.Errorf("%d.String() = %q, want %q", k, k.String(), want)
		}
	}
}
