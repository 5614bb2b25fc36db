package truenas

import (
	"sync"
	"testing"
	"time"
)

// Calls never wait for a worker: with every worker busy, more calls run
// at once anyway; at most max workers stay, an idle one takes the next
// call, and close ends the idle workers.
func TestCallWorkers(t *testing.T) {
	w := newCallWorkers(2)
	release := make(chan struct{})
	var started sync.WaitGroup
	started.Add(5)
	for range 5 {
		w.run(func() { started.Done(); <-release })
	}
	done := make(chan struct{})
	go func() { started.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("5 calls with 2 workers: not all of them started")
	}
	if n := w.n.Load(); n != 2 {
		t.Fatalf("%d workers, want 2 (the rest ran as goroutines)", n)
	}
	close(release)
	// the workers go idle; a call then runs on one of them
	ran := make(chan struct{})
	deadline := time.Now().Add(10 * time.Second)
	for {
		select {
		case w.tasks <- func() { close(ran) }:
		case <-time.After(10 * time.Millisecond):
			if time.Now().After(deadline) {
				t.Fatal("no idle worker took a call")
			}
			continue
		}
		break
	}
	<-ran
	w.close()
	for w.n.Load() != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d workers after close", w.n.Load())
		}
		time.Sleep(time.Millisecond)
	}
}
