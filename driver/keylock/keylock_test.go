package keylock

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestSetSerialiseOneKey(t *testing.T) {
	var l Set
	var inside, maxInside atomic.Int32
	var wg sync.WaitGroup
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			unlock, err := l.Lock(context.Background(), "vol:a")
			if err != nil {
				t.Error(err)
				return
			}
			n := inside.Add(1)
			for {
				m := maxInside.Load()
				if n <= m || maxInside.CompareAndSwap(m, n) {
					break
				}
			}
			time.Sleep(100 * time.Microsecond)
			inside.Add(-1)
			unlock()
		}()
	}
	wg.Wait()
	if maxInside.Load() != 1 {
		t.Fatalf("%d callers held one key at once", maxInside.Load())
	}
	if l.Len() != 0 {
		t.Fatalf("%d keys left in the map", l.Len())
	}
}

func TestSetOtherKeysProceed(t *testing.T) {
	var l Set
	unlockA, _ := l.Lock(context.Background(), "vol:a")
	defer unlockA()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	unlockB, err := l.Lock(ctx, "vol:b")
	if err != nil {
		t.Fatalf("an unrelated key waited: %v", err)
	}
	unlockB()
}

func TestSetGiveUpWithContext(t *testing.T) {
	var l Set
	unlock, _ := l.Lock(context.Background(), "vol:a")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	// Holding b and waiting on a: on timeout b must be released again.
	if _, err := l.Lock(ctx, "vol:b", "vol:a"); err == nil {
		t.Fatal("Lock on a held key returned without the holder releasing it")
	}
	unlock()
	if l.Len() != 0 {
		t.Fatalf("%d keys left held after a timed-out waiter", l.Len())
	}
	// Two callers taking the same pair in opposite order never deadlock.
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			keys := []string{"x", "y"}
			if i%2 == 0 {
				keys = []string{"y", "x"}
			}
			u, err := l.Lock(context.Background(), keys...)
			if err == nil {
				u()
			}
		}()
	}
	wg.Wait()
}

// TestSetReusedLockStillExcludes takes keys whose locks were released by
// other keys (and by a waiter that gave up) and checks they still exclude.
func TestSetReusedLockStillExcludes(t *testing.T) {
	var l Set
	unlock, _ := l.Lock(context.Background(), "vol:a")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	if _, err := l.Lock(ctx, "vol:a"); err == nil {
		t.Fatal("a second caller took a held key")
	}
	cancel()
	unlock()
	for i := range 100 {
		u, err := l.Lock(context.Background(), fmt.Sprint("vol:", i%3))
		if err != nil {
			t.Fatal(err)
		}
		u()
	}
	if len(l.free) != 1 || l.Len() != 0 {
		t.Fatalf("%d locks kept for reuse, %d keys held; want 1 and 0", len(l.free), l.Len())
	}
	unlock, _ = l.Lock(context.Background(), "vol:b")
	defer unlock()
	ctx, cancel = context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	if _, err := l.Lock(ctx, "vol:c", "vol:b"); err == nil {
		t.Fatal("a reused lock let a second caller take a held key")
	}
}
