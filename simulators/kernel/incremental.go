package kernel

import (
	"slices"
	"sync"
)

// Incremental serves an owner whose objects come one at a time (a
// simulator with a per-subsystem target hook, such as Infinia's): it keeps
// the owner's State and applies all of it after each change.
type Incremental struct {
	r     *Reconciler
	owner string
	mu    sync.Mutex
	st    State
}

// Incremental returns the one-object-at-a-time view of owner. It starts
// empty: the first change also removes what a previous run of the owner
// left in the kernel.
func (r *Reconciler) Incremental(owner string) *Incremental {
	return &Incremental{r: r, owner: owner}
}

// PutSubsystem adds or replaces the subsystem with sub's NQN. On error the
// subsystem is not kept (a later change removes what was made of it).
func (i *Incremental) PutSubsystem(sub Subsystem) error {
	i.mu.Lock()
	defer i.mu.Unlock()
	next := i.st
	next.NVMe = slices.DeleteFunc(slices.Clone(i.st.NVMe), func(s Subsystem) bool { return s.NQN == sub.NQN })
	next.NVMe = append(next.NVMe, sub)
	if err := i.r.Apply(i.owner, next); err != nil {
		return err
	}
	i.st = next
	return nil
}

// RemoveSubsystem removes the subsystem with that NQN (no error if there
// is none).
func (i *Incremental) RemoveSubsystem(nqn string) error {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.st.NVMe = slices.DeleteFunc(slices.Clone(i.st.NVMe), func(s Subsystem) bool { return s.NQN == nqn })
	return i.r.Apply(i.owner, i.st)
}

// Close removes everything of the owner.
func (i *Incremental) Close() error {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.st = State{}
	return i.r.Close(i.owner)
}
