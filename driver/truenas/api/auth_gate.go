package api

import (
	"sync"
	"time"
)

// authFailureHold is how long a refused login is remembered: calls in
// that window fail at once with the same error instead of logging in
// again, so a wrong key costs the server a few logins, not one per CSI call.
const authFailureHold = 5 * time.Second

// authGate remembers the last refused login.
type authGate struct {
	hold time.Duration

	mu    sync.Mutex
	err   error
	until time.Time
}

// held returns the remembered refusal while it is fresh, else nil.
func (g *authGate) held() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.err != nil && time.Now().Before(g.until) {
		return g.err
	}
	return nil
}

func (g *authGate) refused(err error) {
	g.mu.Lock()
	g.err, g.until = err, time.Now().Add(g.hold)
	g.mu.Unlock()
}

func (g *authGate) accepted() {
	g.mu.Lock()
	g.err = nil
	g.mu.Unlock()
}
