// Package gate holds callers until a number of them are waiting together:
// a test of "these calls go at once" holds each call in a fake server until
// all have arrived, which calls sent one after another never do.
package gate

import (
	"sync"
	"time"
)

// Gate opens when n callers have arrived.
type Gate struct {
	n    int
	mu   sync.Mutex
	seen int
	open chan struct{}
}

// New returns a gate for n callers.
func New(n int) *Gate { return &Gate{n: n, open: make(chan struct{})} }

// Wait counts the caller in and holds it until the gate opens or wait has
// passed (so a test of calls that never come together fails, not hangs).
// A caller that gives up is counted out again: callers that come one
// after another never open the gate.
func (g *Gate) Wait(wait time.Duration) {
	g.mu.Lock()
	g.seen++
	if g.seen == g.n {
		close(g.open)
	}
	g.mu.Unlock()
	select {
	case <-g.open:
	case <-time.After(wait):
		g.mu.Lock()
		if !g.Opened() {
			g.seen--
		}
		g.mu.Unlock()
	}
}

// Opened reports whether all n callers were ever waiting together.
func (g *Gate) Opened() bool {
	select {
	case <-g.open:
		return true
	default:
		return false
	}
}
