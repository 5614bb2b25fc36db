package framework

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestWaitTimesOutWithLastStatus(t *testing.T) {
	PollInterval = 10 * time.Millisecond
	n := 0
	err := wait(context.Background(), "the PVC to bind", 80*time.Millisecond, func(context.Context) (bool, string, error) {
		n++
		return false, "phase Pending", nil
	})
	if err == nil {
		t.Fatal("want a timeout")
	}
	for _, want := range []string{"timed out", "the PVC to bind", "last seen: phase Pending"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if n < 2 {
		t.Errorf("condition polled %d times, want several", n)
	}
}

func TestWaitStopsAtErrorAndAtDone(t *testing.T) {
	PollInterval = 10 * time.Millisecond
	boom := errors.New("boom")
	err := wait(context.Background(), "x", time.Second, func(context.Context) (bool, string, error) { return false, "", boom })
	if !errors.Is(err, boom) {
		t.Fatalf("got %v, want the condition's error", err)
	}
	calls := 0
	err = wait(context.Background(), "x", time.Second, func(context.Context) (bool, string, error) {
		calls++
		return calls == 3, "", nil
	})
	if err != nil || calls != 3 {
		t.Fatalf("got %v after %d calls, want success after 3", err, calls)
	}
}
