// Package loadgen runs a benchmark's operations the way a busy CO would:
// n numbered operations shared among a fixed number of concurrent callers.
package loadgen

import (
	"sync"
	"time"
)

// Spread runs op(0) .. op(n-1) on callers goroutines, each taking the next
// number until none is left, and returns the wall time and the first
// error (every operation runs even after one fails, so the storage is in
// a known state for the next phase).
func Spread(n, callers int, op func(i int) error) (time.Duration, error) {
	work := make(chan int, n)
	for i := 0; i < n; i++ {
		work <- i
	}
	close(work)
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	t0 := time.Now()
	for w := 0; w < max(callers, 1); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				if err := op(i); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	return time.Since(t0), first
}

// Timed is Spread that also returns each operation's latency, by number.
func Timed(n, callers int, op func(i int) error) ([]time.Duration, time.Duration, error) {
	lat := make([]time.Duration, n)
	wall, err := Spread(n, callers, func(i int) error {
		s := time.Now()
		err := op(i)
		lat[i] = time.Since(s)
		return err
	})
	return lat, wall, err
}
