// Package roundtrip counts a CSI call's round trips to its storage system
// (SSH commands, HTTP requests, WebSocket calls). The metrics interceptor
// puts a Tally in the call's context; a backend's one place that talks to
// its storage calls Count. It is a leaf package so backends depend on
// nothing of Prometheus, and Count is a no-op when metrics are off.
package roundtrip

import (
	"context"
	"sync/atomic"
)

// Kind is how a backend reached its storage system.
type Kind int

// The kinds; Kinds lists them for whoever reports them.
const (
	SSH       Kind = iota // one command run over SSH
	HTTP                  // one HTTP request (REST APIs)
	WebSocket             // one call over a WebSocket (TrueNAS JSON-RPC)
	numKinds
)

// Kinds are every Kind, in order.
var Kinds = [numKinds]Kind{SSH, HTTP, WebSocket}

// String is the kind's label value.
func (k Kind) String() string {
	switch k {
	case SSH:
		return "ssh"
	case HTTP:
		return "http"
	case WebSocket:
		return "websocket"
	}
	return "other"
}

// Tally counts one call's round trips. Backends may call Count from
// goroutines of their own, hence atomics.
type Tally struct{ n [numKinds]atomic.Uint64 }

// Get returns the count of kind k.
func (t *Tally) Get(k Kind) uint64 {
	if k < 0 || k >= numKinds {
		return 0
	}
	return t.n[k].Load()
}

type key struct{}

// tallyCtx carries a Tally in the context that holds it: one allocation per
// call instead of two (context.WithValue's and the Tally's).
type tallyCtx struct {
	context.Context
	tally Tally
}

func (c *tallyCtx) Value(k any) any {
	if k == (key{}) {
		return &c.tally
	}
	return c.Context.Value(k)
}

// With returns a context carrying a new Tally, and the Tally.
func With(ctx context.Context) (context.Context, *Tally) {
	c := &tallyCtx{Context: ctx}
	return c, &c.tally
}

// Count adds one round trip of kind k to the tally in ctx, if any.
func Count(ctx context.Context, k Kind) {
	if t, ok := ctx.Value(key{}).(*Tally); ok && k >= 0 && k < numKinds {
		t.n[k].Add(1)
	}
}
