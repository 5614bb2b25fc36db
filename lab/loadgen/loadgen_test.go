package loadgen

import (
	"errors"
	"sync/atomic"
	"testing"
)

// Every number runs exactly once, at most callers at a time, and the
// first error is returned after all of them ran.
func TestSpread(t *testing.T) {
	const n, callers = 100, 7
	var seen [n]atomic.Int32
	var running, peak atomic.Int32
	boom := errors.New("boom")
	_, err := Spread(n, callers, func(i int) error {
		r := running.Add(1)
		for p := peak.Load(); r > p && !peak.CompareAndSwap(p, r); p = peak.Load() {
		}
		defer running.Add(-1)
		seen[i].Add(1)
		if i == 42 {
			return boom
		}
		return nil
	})
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want boom", err)
	}
	for i := range seen {
		if c := seen[i].Load(); c != 1 {
			t.Fatalf("op(%d) ran %d times", i, c)
		}
	}
	if p := peak.Load(); p > callers {
		t.Fatalf("%d ran at once, callers %d", p, callers)
	}
}
