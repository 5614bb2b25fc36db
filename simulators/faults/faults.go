// Package faults is the fault injection the simulators share: latency and
// random errors per operation (a zfs command, a middleware method, a REST
// call), and dropping the connection after a number of operations. An
// operation name "" stands for every operation.
//
// Two latencies model two costs: SetLatency is per operation (each command
// a shell line runs, e.g. both "sudo" and "zfs" in "sudo zfs list"), the
// host's own work; SetRoundTripLatency is per round trip (one SSH exec, one
// request), the network's. A benchmark that wants "20 ms away" sets the
// round-trip one, so that a driver that batches commands into one exec is
// credited for it.
package faults

import (
	"math/rand/v2"
	"sync"
	"time"
)

// Set holds the faults armed on one simulator. The zero value is not
// usable; call New.
type Set struct {
	mu        sync.Mutex
	latency   map[string]time.Duration
	errRate   map[string]float64
	rng       *rand.Rand
	dropAfter int // operations left before a drop; 0 = off
	rtt       time.Duration
	counts    Counts
}

// Counts are the faults a Set has injected since New: errors drawn by
// Fail, connections dropped by TakeDrop, operations delayed by Delay.
// Reset does not clear them (a soak reads them at the end of a run).
type Counts struct {
	Errors  int64
	Drops   int64
	Delayed int64
}

// Counts returns what has been injected so far.
func (f *Set) Counts() Counts {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.counts
}

// New returns a Set whose error rates draw from a source seeded with seed
// (reproducible runs; 0 means 1).
func New(seed uint64) *Set {
	if seed == 0 {
		seed = 1
	}
	return &Set{latency: map[string]time.Duration{}, errRate: map[string]float64{}, rng: newRand(seed)}
}

func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)) }

// SetLatency delays every op by d before it runs (0 removes the delay). The
// delays of "" and of the op add up.
func (f *Set) SetLatency(op string, d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if d <= 0 {
		delete(f.latency, op)
		return
	}
	f.latency[op] = d
}

// SetErrorRate makes op fail with probability p (0..1) without running.
func (f *Set) SetErrorRate(op string, p float64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if p <= 0 {
		delete(f.errRate, op)
		return
	}
	f.errRate[op] = min(p, 1)
}

// Seed restarts the random source of the error rates.
func (f *Set) Seed(seed uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rng = newRand(seed)
}

// DropAfter drops the connection carrying the n-th operation from now: that
// operation runs (it takes effect) but its answer is never sent. n <= 0
// disarms.
func (f *Set) DropAfter(n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.dropAfter = max(n, 0)
}

// SetRoundTripLatency delays every round trip (an SSH exec or shell
// session, a request) by d before its first operation (0 removes it). It
// adds to the per-operation latencies.
func (f *Set) SetRoundTripLatency(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rtt = max(d, 0)
}

// RoundTripDelay is the latency to add once per round trip.
func (f *Set) RoundTripDelay() time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.rtt > 0 {
		f.counts.Delayed++
	}
	return f.rtt
}

// Reset removes every fault.
func (f *Set) Reset() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rtt = 0
	f.latency = map[string]time.Duration{}
	f.errRate = map[string]float64{}
	f.dropAfter = 0
}

// Delay is the latency to add before op.
func (f *Set) Delay(op string) time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	d := f.latency[""] + f.latency[op]
	if d > 0 {
		f.counts.Delayed++
	}
	return d
}

// Fail draws whether op fails.
func (f *Set) Fail(op string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, name := range []string{"", op} {
		if p := f.errRate[name]; p > 0 && f.rng.Float64() < p {
			f.counts.Errors++
			return true
		}
	}
	return false
}

// TakeDrop counts one operation and reports whether its connection must
// be dropped.
func (f *Set) TakeDrop() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.dropAfter == 0 {
		return false
	}
	f.dropAfter--
	if f.dropAfter == 0 {
		f.counts.Drops++
		return true
	}
	return false
}
