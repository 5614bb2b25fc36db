package zfsssh

import (
	"math/rand/v2"
	"sync"
	"time"
)

// Faults injects failures into the commands the server runs. Command names
// are the resolved program names ("zfs", "targetcli", "sudo", ...) or a
// shell builtin's ("echo", "test", "true"); the name "" means every
// command. Nested programs count too: in "sudo zfs list", both "sudo" and
// "zfs" are subject to their faults.
type Faults struct {
	mu        sync.Mutex
	latency   map[string]time.Duration
	errRate   map[string]float64
	rng       *rand.Rand
	dropAfter int // commands left before a drop; 0 = off
	ranOut    int // targetcli/nvmetcli runs left that fail with "Ran out of input"
}

func newFaults(seed uint64) *Faults {
	if seed == 0 {
		seed = 1
	}
	return &Faults{latency: map[string]time.Duration{}, errRate: map[string]float64{}, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
}

// SetLatency delays every run of cmd by d (0 removes the delay).
func (f *Faults) SetLatency(cmd string, d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if d <= 0 {
		delete(f.latency, cmd)
		return
	}
	f.latency[cmd] = d
}

// SetErrorRate makes a run of cmd fail with probability p (0..1): it does
// not run, prints "injected fault" on stderr and exits 1.
func (f *Faults) SetErrorRate(cmd string, p float64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if p <= 0 {
		delete(f.errRate, cmd)
		return
	}
	f.errRate[cmd] = min(p, 1)
}

// Seed restarts the random source of the error rates.
func (f *Faults) Seed(seed uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rng = rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
}

// DropAfter drops the TCP connection that runs the n-th simple command from
// now: that command runs to completion (it takes effect) but neither its
// output nor its exit status is sent. n <= 0 disarms.
func (f *Faults) DropAfter(n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.dropAfter = max(n, 0)
}

// RanOutOfInput makes the next n targetcli or nvmetcli runs fail the way a
// concurrently rewritten preferences file makes configshell fail:
// "EOFError: Ran out of input", exit 1, nothing done.
func (f *Faults) RanOutOfInput(n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ranOut = max(n, 0)
}

// Reset removes every fault.
func (f *Faults) Reset() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.latency = map[string]time.Duration{}
	f.errRate = map[string]float64{}
	f.dropAfter, f.ranOut = 0, 0
}

func (f *Faults) delay(cmd string) time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.latency[""] + f.latency[cmd]
}

func (f *Faults) fail(cmd string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, name := range []string{"", cmd} {
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

func (f *Faults) takeRanOut() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ranOut == 0 {
		return false
	}
	f.ranOut--
	return true
}
