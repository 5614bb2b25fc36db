package infinia

import (
	"maps"
	"reflect"
	"slices"
)

// tx is one change of the tree by a REST call, made with s.mu held: it
// remembers the subsystems and volumes the change touches (touch and
// touchVolume, called before the change), tells the Target about the
// subsystems, journals the objects, and undoes everything when one of
// those fails.
type tx struct {
	s        *Server
	next     int // state.NextVolumeID before the change
	touched  []touched
	volumes  []touchedVolume
	undo     []func() // reverts file changes, run last to first on failure
	onCommit []func() // run after the change is journaled (file removals)
}

type touched struct {
	c, t, s, name string
	before        *Subsystem // the Target's view
	old           *subsystem // a copy of the tree's object, for rollback (nil: absent)
	force         bool       // Apply even when the snapshot is unchanged (resize)
}

// touchedVolume is a volume the change touches, by path, with a copy of
// it before the change (nil: absent).
type touchedVolume struct {
	c, t, s, d, name string
	old              *volume
}

// applied is a Target call made by this tx, to be reverted on failure.
type applied struct {
	before, after *Subsystem
}

func (s *Server) newTx() *tx { return &tx{s: s, next: s.st.NextVolumeID} }

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
	var old *subsystem
	if sub := t.s.st.subtenant(c, tn, sn); sub != nil {
		old = sub.Subsystems[name].clone()
	}
	var before *Subsystem
	if t.s.target != nil { // the snapshots are only the Target's
		before = t.s.snapshotOf(c, tn, sn, name)
	}
	t.touched = append(t.touched, touched{c: c, t: tn, s: sn, name: name, before: before, old: old, force: force})
}

// touchVolume records volume name of dataset d before the change.
func (t *tx) touchVolume(c, tn, sn, d, name string) {
	for _, x := range t.volumes {
		if x.c == c && x.t == tn && x.s == sn && x.d == d && x.name == name {
			return
		}
	}
	var old *volume
	if ds := t.s.st.dataset(c, tn, sn, d); ds != nil {
		old = ds.Volumes[name].clone()
	}
	t.volumes = append(t.volumes, touchedVolume{c: c, t: tn, s: sn, d: d, name: name, old: old})
}

// snapshotOf is the snapshot of a subsystem by path (nil if absent).
func (s *Server) snapshotOf(c, t, sn, name string) *Subsystem {
	sub := s.st.subtenant(c, t, sn)
	if sub == nil {
		return nil
	}
	return s.snapshot(s.st.Clusters[c], sub.Subsystems[name])
}

// commit applies the touched subsystems to the Target and journals the
// change; on failure the tree and the files are as before and a 500 is
// returned.
func (t *tx) commit() *apiError {
	s := t.s
	var done []applied
	for _, x := range t.touched {
		if s.target == nil {
			break
		}
		after := s.snapshotOf(x.c, x.t, x.s, x.name)
		if !x.force && reflect.DeepEqual(x.before, after) {
			continue
		}
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
		done = append(done, applied{before: x.before, after: after})
	}
	if err := s.persist(t.entry); err != nil {
		t.rollback(done)
		return errorf(500, "%v", err)
	}
	for _, f := range t.onCommit {
		f()
	}
	return nil
}

// entry is the journal line of the change: the touched objects as they
// are now.
func (t *tx) entry() (entry, error) {
	st := t.s.st
	e := entry{Next: st.NextVolumeID}
	for _, x := range t.touched {
		var cur *subsystem
		if sub := st.subtenant(x.c, x.t, x.s); sub != nil {
			cur = sub.Subsystems[x.name]
		}
		raw, err := encodeObj(cur)
		if err != nil {
			return entry{}, err
		}
		e.Subsystems = append(e.Subsystems, objEntry{C: x.c, T: x.t, S: x.s, Name: x.name, Obj: raw})
	}
	for _, x := range t.volumes {
		var cur *volume
		if ds := st.dataset(x.c, x.t, x.s, x.d); ds != nil {
			cur = ds.Volumes[x.name]
		}
		raw, err := encodeObj(cur)
		if err != nil {
			return entry{}, err
		}
		e.Volumes = append(e.Volumes, objEntry{C: x.c, T: x.t, S: x.s, D: x.d, Name: x.name, Obj: raw})
	}
	return e, nil
}

// persist journals a change, then rewrites the snapshot when the journal
// has grown long. The line goes first even then: a snapshot must never
// hold a change the journal lacks, or a crash before the journal is
// emptied would replay an older version of that object over it. After a
// failed append (the journal may end in a torn line) the snapshot is
// rewritten without one; a crash in that instant may lose this change,
// a risk taken only after a write failed.
func (s *Server) persist(mk func() (entry, error)) error {
	if s.j.compact {
		return s.compact()
	}
	e, err := mk()
	if err != nil {
		return err
	}
	if err := s.j.append(append(e.appendLine(nil), '\n')); err != nil {
		return err
	}
	if s.j.size > compactAfter {
		if err := s.compact(); err != nil {
			// The change is journaled: it stands; the next change tries again.
			s.log.Warn("compacting the state", "error", err)
		}
	}
	return nil
}

// compact writes the whole tree as the snapshot and empties the journal.
func (s *Server) compact() error {
	if err := s.store.save(s.st); err != nil {
		return err
	}
	return s.j.reset()
}

// rollback puts the touched objects back, undoes the file changes and,
// best effort, puts the Target back as it was.
func (t *tx) rollback(done []applied) {
	s := t.s
	for i := len(t.undo) - 1; i >= 0; i-- {
		t.undo[i]()
	}
	s.st.NextVolumeID = t.next
	for _, x := range slices.Backward(t.volumes) {
		if ds := s.st.dataset(x.c, x.t, x.s, x.d); ds != nil {
			putOrDelete(ds.Volumes, x.name, x.old)
		}
	}
	for _, x := range slices.Backward(t.touched) {
		if sub := s.st.subtenant(x.c, x.t, x.s); sub != nil {
			putOrDelete(sub.Subsystems, x.name, x.old)
		}
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

func putOrDelete[V any](m map[string]*V, k string, v *V) {
	if v == nil {
		delete(m, k)
	} else {
		m[k] = v
	}
}

// clone copies a volume deeply enough that a change of the original
// leaves the copy alone (the xattrs' values are never changed in place).
func (v *volume) clone() *volume {
	if v == nil {
		return nil
	}
	c := *v
	c.Xattrs = maps.Clone(v.Xattrs)
	return &c
}

// clone copies a subsystem deeply: its lists are edited in place.
func (ss *subsystem) clone() *subsystem {
	if ss == nil {
		return nil
	}
	c := *ss
	c.ReqInstances = slices.Clone(ss.ReqInstances)
	c.Hosts = slices.Clone(ss.Hosts)
	c.Namespaces = slices.Clone(ss.Namespaces)
	c.Listeners = slices.Clone(ss.Listeners)
	for i := range c.Listeners {
		c.Listeners[i].ExposedBy = slices.Clone(c.Listeners[i].ExposedBy)
	}
	return &c
}
