package infinia

import "reflect"

// tx is one change of the tree by a REST call, made with s.mu held: it
// remembers the subsystems the change touches, tells the Target about
// them, persists the tree, and undoes everything when one of those fails.
type tx struct {
	s        *Server
	touched  []touched
	undo     []func() // reverts file changes, run last to first on failure
	onCommit []func() // run after the tree is saved (file removals)
}

type touched struct {
	c, t, s, name string
	before        *Subsystem
	force         bool // Apply even when the snapshot is unchanged (resize)
}

// applied is a Target call made by this tx, to be reverted on failure.
type applied struct {
	before, after *Subsystem
}

func (s *Server) newTx() *tx { return &tx{s: s} }

// touch records the state of subsystem name before the change. force
// makes commit call Apply even if the snapshot does not change (a data
// file grew).
func (t *tx) touch(c, tn, sn, name string, force bool) {
	for i := range t.touched {
		x := &t.touched[i]
		if x.c == c && x.t == tn && x.s == sn && x.name == name {
			x.force = x.force || force
			return
		}
	}
	t.touched = append(t.touched, touched{c: c, t: tn, s: sn, name: name, before: t.s.snapshotOf(c, tn, sn, name), force: force})
}

// snapshotOf is the snapshot of a subsystem by path (nil if absent).
func (s *Server) snapshotOf(c, t, sn, name string) *Subsystem {
	sub := s.st.subtenant(c, t, sn)
	if sub == nil {
		return nil
	}
	return s.snapshot(s.st.Clusters[c], sub.Subsystems[name])
}

// commit applies the touched subsystems to the Target and saves the tree;
// on failure the tree and the files are as before and a 500 is returned.
func (t *tx) commit() *apiError {
	s := t.s
	var done []applied
	for _, x := range t.touched {
		after := s.snapshotOf(x.c, x.t, x.s, x.name)
		if !x.force && reflect.DeepEqual(x.before, after) {
			continue
		}
		if s.target != nil {
			var err error
			if after == nil {
				err = s.target.Remove(x.before.NQN)
			} else {
				err = s.target.Apply(*after)
			}
			if err != nil {
				// The Target may have got halfway: put this one back too.
				t.rollback(append(done, applied{before: x.before, after: after}))
				nqn := x.before
				if after != nil {
					nqn = after
				}
				return errorf(500, "target: subsystem %s: %v", nqn.NQN, err)
			}
		}
		done = append(done, applied{before: x.before, after: after})
	}
	raw, err := s.store.save(s.st)
	if err != nil {
		t.rollback(done)
		return errorf(500, "%v", err)
	}
	s.saved = raw
	for _, f := range t.onCommit {
		f()
	}
	return nil
}

// rollback restores the tree from the last save, undoes the file changes
// and, best effort, puts the Target back as it was.
func (t *tx) rollback(done []applied) {
	s := t.s
	for i := len(t.undo) - 1; i >= 0; i-- {
		t.undo[i]()
	}
	if st, err := decodeState(s.saved); err == nil {
		s.st = st
	} else { // cannot happen: s.saved is what we wrote ourselves
		s.log.Error("rollback: the saved state does not decode", "error", err)
	}
	if s.target == nil {
		return
	}
	for i := len(done) - 1; i >= 0; i-- {
		a := done[i]
		var err error
		switch {
		case a.before == nil:
			err = s.target.Remove(a.after.NQN)
		default:
			err = s.target.Apply(*a.before)
		}
		if err != nil {
			s.log.Error("target: rollback failed", "error", err)
		}
	}
}
