package api

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
)

// TestSixteenCallsTwoLanes: middlewared runs at most ten calls at once on
// one WebSocket (wsCallsPerConn). The default sixteen calls in flight, each
// held by the server until all sixteen have arrived, must therefore go
// over two connections with none refused: on one connection six of them
// would be answered -32000 (the fake refuses above ten, as the real hard
// limit would once the soft one is full) and, resent, never get in while
// the ten wait for them, until the test's deadline.
func TestSixteenCallsTwoLanes(t *testing.T) {
	const n = 16
	f := newFakeNAS(t, "25.10")
	f.maxInFlight = wsCallsPerConn
	var (
		mu      sync.Mutex
		arrived int
		all     = make(chan struct{})
	)
	f.handle("test.hold", func(ctx context.Context, p []json.RawMessage) (any, error) {
		mu.Lock()
		arrived++
		if arrived == n {
			close(all)
		}
		mu.Unlock()
		select {
		case <-all:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return p[0], nil
	})
	f.start()
	cfg := f.config()
	if cfg.MaxConcurrentCalls != 0 && cfg.MaxConcurrentCalls != n {
		t.Fatalf("the fake's config sets MaxConcurrentCalls %d; this test wants the default", cfg.MaxConcurrentCalls)
	}
	c := newClient(t, cfg)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			if _, err := c.Call(ctxT(t), "test.hold", map[string]int{"i": i}); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	st := c.Stats()
	if st.Dials != 2 || st.Logins != 2 || st.BusyRetries != 0 || st.Reconnects != 0 {
		t.Errorf("stats %+v: want 2 dials and logins (ceil(16/10) lanes), no busy retries, no reconnects", st)
	}
	if got := f.accepted.Load(); got != 2 {
		t.Errorf("the server accepted %d connections, want 2", got)
	}
}

// TestTenCallsOneLane: a client that never has more than ten calls in
// flight keeps exactly one connection, however many lanes it could open.
func TestTenCallsOneLane(t *testing.T) {
	f := newFakeNAS(t, "25.10")
	f.maxInFlight = wsCallsPerConn
	f.handle("test.echo", func(_ context.Context, p []json.RawMessage) (any, error) { return p[0], nil })
	f.start()
	cfg := f.config()
	cfg.MaxConcurrentCalls = 40 // four lanes available
	c := newClient(t, cfg)
	for round := 0; round < 5; round++ {
		var wg sync.WaitGroup
		for i := range wsCallsPerConn {
			wg.Go(func() {
				if _, err := c.Call(ctxT(t), "test.echo", i); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
	}
	if st := c.Stats(); st.Dials != 1 || st.BusyRetries != 0 {
		t.Errorf("stats %+v: want 1 dial and no busy retries for ten calls at a time", st)
	}
}
