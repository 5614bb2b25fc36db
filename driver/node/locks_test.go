package node

import (
	"context"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
)

func TestVolumeLocks(t *testing.T) {
	l := newVolumeLocks()
	unlockA, err := l.lock(context.Background(), "a")
	if err != nil {
		t.Fatal(err)
	}

	// Another volume is not held up.
	unlockB, err := l.lock(context.Background(), "b")
	if err != nil {
		t.Fatalf("lock b while a is held: %v", err)
	}
	unlockB()

	// The same volume waits; a caller that gives up gets ABORTED.
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err = l.lock(ctx, "a")
	wantCode(t, err, codes.Aborted)

	// A waiter gets the lock once it is released.
	got := make(chan error, 1)
	go func() {
		unlock, err := l.lock(context.Background(), "a")
		if err == nil {
			unlock()
		}
		got <- err
	}()
	select {
	case err := <-got:
		t.Fatalf("second holder got the lock while the first holds it (err=%v)", err)
	case <-time.After(50 * time.Millisecond):
	}
	unlockA()
	select {
	case err := <-got:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("waiter never got the lock")
	}

	if n := l.set.Len(); n != 0 {
		t.Fatalf("%d lock entries leak", n)
	}
}
