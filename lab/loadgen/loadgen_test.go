package loadgen

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"
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

// TestTimed: each operation's latency lands under its own number, and the
// first error comes back after every operation ran.
func TestTimed(t *testing.T) {
	var ran atomic.Int32
	lat, wall, err := Timed(6, 3, func(i int) error {
		ran.Add(1)
		time.Sleep(time.Duration(i) * 4 * time.Millisecond)
		if i == 2 {
			return errors.New("two")
		}
		return nil
	})
	if err == nil || err.Error() != "two" || ran.Load() != 6 {
		t.Fatalf("err %v after %d ops; want the op's error after all 6", err, ran.Load())
	}
	for i, d := range lat {
		if want := time.Duration(i) * 4 * time.Millisecond; d < want {
			t.Errorf("op %d took %v, shorter than its %v sleep", i, d, want)
		}
	}
	if wall < lat[5] {
		t.Errorf("wall %v shorter than the longest op %v", wall, lat[5])
	}
}
