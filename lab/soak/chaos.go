package soak

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/switchyard-csi/switchyard/simulators/faults"
)

// chaos arms faults until ctx ends: every tick, by a draw from the seed,
// a latency spike on one simulator (100-400ms per operation for a second),
// a dropped connection a few operations from now, and more rarely a
// simulator restart or (Kill) a SIGKILL of the driver. The error rate is
// armed on every simulator for the whole run.
func (s *run) chaos(ctx context.Context, h *hosts, p *plugin) {
	if s.o.NoChaos {
		return
	}
	rng := rand.New(rand.NewPCG(s.o.Seed, 0xc4a05))
	sims := []string{simZFS, simTrueNAS, simInfinia}
	tick := time.NewTicker(150 * time.Millisecond)
	defer tick.Stop()
	type spike struct {
		sim   string
		until time.Time
	}
	var spikes []spike
	lastRestart, lastKill := time.Now(), time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-tick.C:
			kept := spikes[:0]
			for _, sp := range spikes {
				if now.After(sp.until) {
					h.on(sp.sim, func(f *faults.Set) { f.SetLatency("", 0) })
				} else {
					kept = append(kept, sp)
				}
			}
			spikes = kept
			sim := sims[rng.IntN(len(sims))]
			switch d := rng.IntN(100); {
			case d < 10:
				lat := time.Duration(100+rng.IntN(300)) * time.Millisecond
				h.on(sim, func(f *faults.Set) { f.SetLatency("", lat) })
				spikes = append(spikes, spike{sim, now.Add(time.Second)})
				s.fault("latency-spike")
			case d < 30:
				n := 1 + rng.IntN(8)
				h.on(sim, func(f *faults.Set) { f.DropAfter(n) })
				s.fault("drop-armed")
			case d < 33 && now.Sub(lastRestart) > 2*time.Second:
				lastRestart = now
				if err := h.restart(sim); err != nil {
					s.failf("restarting %s: %v", sim, err)
					return
				}
				s.fault("restart-" + sim)
			case d < 36 && p.kill != nil && now.Sub(lastKill) > 2*time.Second:
				lastKill = now
				if err := p.kill(); err != nil {
					s.failf("killing and restarting switchyard: %v", err)
					return
				}
				s.fault("driver-sigkill")
			}
		}
	}
}

func (s *run) fault(kind string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rep.Faults[kind]++
}

func (s *run) failf(format string, a ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rep.Failed = append(s.rep.Failed, fmt.Sprintf(format, a...))
}

// on runs fn on sim's current fault sets.
func (h *hosts) on(sim string, fn func(*faults.Set)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, f := range h.faultSets(sim) {
		fn(f)
	}
}
