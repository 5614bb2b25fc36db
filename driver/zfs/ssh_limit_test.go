package zfs

import (
	"context"
	"sync"
	"testing"
	"time"
)

// TestSSHLimiterWakesEveryWaiter has more callers than slots take and free
// them many times: no more than the limit at once, and no waiter left
// asleep (a release with waiters must wake them; one without makes no
// channel).
func TestSSHLimiterWakesEveryWaiter(t *testing.T) {
	l := newSSHLimiter(2)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 300 {
				if err := l.acquire(ctx); err != nil {
					t.Error("a waiter was never woken:", err)
					return
				}
				l.release()
			}
		}()
	}
	wg.Wait()
	if limit, inUse, most := l.snapshot(); inUse != 0 || most > limit {
		t.Fatalf("in use %d after all released, at most %d of %d", inUse, most, limit)
	}
	before := l.freed
	_ = l.acquire(ctx)
	l.release()
	if l.freed != before {
		t.Error("a release without waiters replaced the channel")
	}
}

// TestSSHLimiterWaiterGivesUp: a waiter whose context ends gets its error,
// and the slot it waited for is still there for the next caller.
func TestSSHLimiterWaiterGivesUp(t *testing.T) {
	l := newSSHLimiter(1)
	_ = l.acquire(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	if err := l.acquire(ctx); err == nil {
		t.Fatal("a second caller took the only slot")
	}
	l.release()
	ctx2, cancel2 := context.WithTimeout(context.Background(), time.Second)
	defer cancel2()
	if err := l.acquire(ctx2); err != nil {
		t.Fatalf("the freed slot was not taken: %v", err)
	}
}
