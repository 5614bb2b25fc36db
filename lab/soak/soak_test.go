package soak

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// TestLeakCheckerSeesEveryObject: with every lifecycle stopped before its
// deletions, the checker finds each connection's objects (so none is
// lost) and, compared with an empty belief, reports every one of them as
// leaked: each kind of object a connection makes is listed.
func TestLeakCheckerSeesEveryObject(t *testing.T) {
	r, err := Run(context.Background(), Options{Lifecycles: 2 * len(conns), Callers: 4, Seed: 7, NoChaos: true,
		Dir: t.TempDir(), stopBeforeDelete: true, planAll: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Lost) != 0 {
		t.Errorf("believed objects the checker did not find: %v", r.Lost)
	}
	for _, cn := range conns {
		for _, kind := range append(objectsOf(cn, kindVolume), objectsOf(cn, kindSnapshot)...) {
			if !cn.Snapshots && strings.Contains(kind, "snapshot") {
				continue
			}
			found := false
			for _, l := range r.Leaked {
				if strings.HasPrefix(l, cn.Name+" "+kind+" ") {
					found = true
				}
			}
			if !found {
				t.Errorf("%s: no %s listed; leaked: %v", cn.Name, kind, r.Leaked)
			}
		}
	}
}

// TestSoak is the bounded chaos soak of `make test`: 35 lifecycles on
// each of three fixed seeds (105 in all), in-process, with a 10 % error
// rate, latency spikes, dropped connections and simulator restarts. It
// asserts nothing leaked or was lost, every code was documented and every
// lifecycle finished. `switchyard-lab soak` runs the long version.
func TestSoak(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	for _, seed := range []uint64{1, 2, 3} {
		t.Run(fmt.Sprintf("seed-%d", seed), func(t *testing.T) {
			r, err := Run(context.Background(), Options{Lifecycles: 35, Callers: 8, Seed: seed, FaultRate: 0.1, Dir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			var b strings.Builder
			r.Write(&b)
			t.Log("\n" + b.String())
			if !r.OK() {
				t.Errorf("leaked %d, lost %d, undocumented %d, failed %d (report above)", len(r.Leaked), len(r.Lost), len(r.Undocumented), len(r.Failed))
			}
		})
	}
}
