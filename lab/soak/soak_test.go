package soak

import (
	"context"
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

func TestChaosTry(t *testing.T) {
	r, err := Run(context.Background(), Options{Lifecycles: 100, Callers: 8, Seed: 1, FaultRate: 0.1, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	r.Write(&b)
	t.Log("\n" + b.String())
}
