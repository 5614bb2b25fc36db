package infinia

import (
	"context"
	"sync"

	"github.com/switchyard-csi/switchyard/driver/infinia/api"
)

// exposeAll exposes the volume on every instance at once: each expose
// names one instance and none needs another's answer, so the create waits
// one round trip instead of one per instance. It waits for all of them
// (a rollback must not race an expose still in flight) and returns the
// first failure in the order of instances, so the error a user sees does
// not depend on which answer came first. sub is an answer that shows the
// subsystem complete (see completeAnswer), or nil.
func exposeAll(ctx context.Context, t target, ds string, v *api.Volume, instances []int) (sub *api.Subsystem, failed int, err error) {
	answers := make([]*api.Subsystem, len(instances))
	errs := make([]error, len(instances))
	expose := func(i int) {
		answers[i], errs[i] = t.c.ExposeVolume(ctx, t.h.subtenant, ds, t.h.volume, instances[i])
	}
	if len(instances) == 1 {
		expose(0)
	} else {
		var wg sync.WaitGroup
		for i := range instances {
			wg.Go(func() { expose(i) })
		}
		wg.Wait()
	}
	for i, e := range errs {
		if e != nil {
			return nil, instances[i], e
		}
	}
	for _, s := range answers {
		if completeAnswer(s, v, instances) {
			return s, 0, nil
		}
	}
	return nil, 0, nil
}

// completeAnswer reports whether an expose's answer is the volume's
// subsystem with a listener on every instance, so that reading the
// subsystem again would tell nothing new. The facts do not say what an
// expose answers; an answer that does not prove itself complete (none,
// another shape, listeners without instance ids, an expose that another
// one overtook) is not used and the subsystem is read instead.
func completeAnswer(s *api.Subsystem, v *api.Volume, instances []int) bool {
	if s == nil || s.NQN == "" || s.Name != v.Subsystem {
		return false
	}
	found := false
	for _, ns := range s.Namespaces {
		if ns.Volume == v.Name && ns.NSID.Int() > 0 {
			found = true
			break
		}
	}
	if !found {
		return false
	}
	for _, inst := range instances {
		if !listensOn(s, inst) {
			return false
		}
	}
	return true
}

// listensOn reports whether s has a listener with addresses on instance inst.
func listensOn(s *api.Subsystem, inst int) bool {
	for _, l := range s.Listeners {
		if l.InstanceID != "" && l.InstanceID.Int() == inst && len(l.TrAddrs) > 0 {
			return true
		}
	}
	return false
}

// exposeMissing exposes the volume again, one instance after another, on
// each instance that s (the subsystem read after exposeAll) does not list.
// The facts say nothing of how Infinia applies two exposes of one
// subsystem at once; were one lost (a read-modify-write of the listeners),
// the volume would quietly have fewer paths than asked for. exposed says
// whether any was exposed again (then s is stale); on error, failed is the
// instance whose expose failed.
func exposeMissing(ctx context.Context, t target, ds string, s *api.Subsystem, instances []int) (exposed bool, failed int, err error) {
	for _, inst := range instances {
		if listensOn(s, inst) {
			continue
		}
		if _, err := t.c.ExposeVolume(ctx, t.h.subtenant, ds, t.h.volume, inst); err != nil {
			return exposed, inst, err
		}
		exposed = true
	}
	return exposed, 0, nil
}
