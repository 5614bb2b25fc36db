package truenas

import (
	"math/rand/v2"
	"sync"
	"time"
)

// Faults injects failures into method calls, on every transport. Method
// names are full ("pool.dataset.create"); the name "" means every method.
type Faults struct {
	mu        sync.Mutex
	latency   map[string]time.Duration
	errRate   map[string]float64
	rng       *rand.Rand
	dropAfter int // calls left before a drop; 0 = off
}

func newFaults(seed uint64) *Faults {
	return &Faults{latency: map[string]time.Duration{}, errRate: map[string]float64{}, rng: newRand(seed)}
}

func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)) }

// Faults is the fault-injection control.
func (s *Server) Faults() *Faults { return s.faults }

// SetLatency delays every call of method by d before it runs (0 removes the
// delay). The delays of "" and of the method add up.
func (f *Faults) SetLatency(method string, d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if d <= 0 {
		delete(f.latency, method)
		return
	}
	f.latency[method] = d
}

// SetErrorRate makes a call of method fail with probability p (0..1): it
// does not run and the client gets a CallError EFAULT "injected fault".
func (f *Faults) SetErrorRate(method string, p float64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if p <= 0 {
		delete(f.errRate, method)
		return
	}
	f.errRate[method] = min(p, 1)
}

// Seed restarts the random source of the error rates.
func (f *Faults) Seed(seed uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rng = newRand(seed)
}

// DropAfter drops the connection that carries the n-th call from now: that
// call is received and runs to completion (it takes effect) but its answer
// is never sent; the TCP connection is closed instead. n <= 0 disarms.
func (f *Faults) DropAfter(n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.dropAfter = max(n, 0)
}

// Reset removes every fault.
func (f *Faults) Reset() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.latency = map[string]time.Duration{}
	f.errRate = map[string]float64{}
	f.dropAfter = 0
}

func (f *Faults) delay(method string) time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.latency[""] + f.latency[method]
}

func (f *Faults) fail(method string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, name := range []string{"", method} {
		if p := f.errRate[name]; p > 0 && f.rng.Float64() < p {
			return true
		}
	}
	return false
}

func (f *Faults) takeDrop() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.dropAfter == 0 {
		return false
	}
	f.dropAfter--
	return f.dropAfter == 0
}
