package zfsmodel

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Snapshots, clones, promote and rollback. Data copies run without the
// model lock: the lock is taken to check and reserve names, released for
// the copy (the sources are marked busy, the new names pending), and taken
// again to link the results.

// copyJob copies one dataset's data.
type copyJob struct {
	src, dst string
	dir      bool
	skip     map[string]bool // top-level names left out (child mountpoints)
}

func (j copyJob) run() error { return copyData(j.src, j.dst, j.dir, j.skip) }

// Snapshot creates snapshots named fs@snap (with -r, the same snapshot of
// every descendant), atomically: all or none. props may only hold user
// properties.
func (m *Model) Snapshot(names []string, props map[string]string, recursive bool) error {
	_, err := m.snapshot(names, sortedKV(props), recursive)
	return err
}

// snapshot returns openFailed when a named dataset could not be opened
// (zfs snapshot then prints its usage).
func (m *Model) snapshot(names []string, props []kv, recursive bool) (openFailed bool, err error) {
	if err := m.begin(); err != nil {
		return false, err
	}
	locked := true
	defer func() {
		if locked {
			m.mu.Unlock()
		}
	}()
	var heads []*dataset
	var full []string
	seen := map[string]bool{}
	for _, n := range names {
		fsName, snap, ok := strings.Cut(n, "@")
		if !ok {
			return true, newErr(KindInvalid, "cannot create snapshot '%s': missing '@' delimiter in snapshot name", n)
		}
		d, err := m.open(fsName, Filesystem|Volume)
		if err != nil {
			return true, err
		}
		var add func(x *dataset)
		add = func(x *dataset) {
			sn := x.full + "@" + snap
			if !seen[sn] {
				seen[sn] = true
				heads = append(heads, x)
				full = append(full, sn)
			}
			if recursive {
				for _, c := range x.sortedChildren() {
					add(c)
				}
			}
		}
		add(d)
	}
	for _, sn := range full {
		if aux := nameCheck(sn, Snapshot, true); aux != "" {
			return false, newErr(KindInvalid, "cannot create snapshot '%s': %s", sn, aux)
		}
	}
	if len(props) > 0 {
		if props, err = m.validateProps(props, Snapshot, nil, "cannot create snapshots "); err != nil {
			return false, err
		}
	}
	for i, sn := range full {
		if m.lookup(sn) != nil || m.pending[sn] {
			return false, newErr(KindExists, "cannot create snapshot '%s': dataset already exists", sn)
		}
		h := heads[i]
		if r := numProp(h, "refreservation"); r > 0 {
			m.freshen()
			m.spaceMu.Lock()
			short := min64(m.usedDS(h), r) > m.dirAvail(h)
			m.spaceMu.Unlock()
			if short {
				return false, newErr(KindOutOfSpace, "cannot create snapshot '%s': out of space", sn)
			}
		}
	}
	// Reserve, then copy unlocked.
	txg := m.nextTXG()
	snaps := make([]*dataset, len(full))
	jobs := make([]copyJob, len(full))
	for i, sn := range full {
		h := heads[i]
		s := m.newDataset(leafOf(sn), Snapshot, h, h.pool)
		s.txg = txg
		for _, a := range props {
			s.local[a.name] = a.value
		}
		if h.typ == Volume {
			s.local["volsize"] = h.local["volsize"]
		}
		snaps[i] = s
		jobs[i] = copyJob{src: m.dataPath(h), dst: m.dataPath(s), dir: h.typ == Filesystem, skip: childDirNames(h)}
		m.pending[sn] = true
		h.busy++
	}
	m.inflight.Add(1)
	defer m.inflight.Done()
	m.mu.Unlock()
	locked = false

	var copyErr error
	for i, j := range jobs {
		if copyErr = j.run(); copyErr != nil {
			copyErr = errIO("cannot create snapshot '"+full[i]+"'", copyErr)
			break
		}
		snaps[i].refer = m.measureCopy(j)
	}

	m.mu.Lock()
	locked = true
	for i, sn := range full {
		delete(m.pending, sn)
		heads[i].busy--
	}
	if copyErr == nil && m.closed {
		copyErr = errClosed
	}
	if copyErr == nil {
		for _, s := range snaps {
			if copyErr = m.writeRecord(s); copyErr != nil {
				break
			}
		}
	}
	if copyErr != nil {
		for i, s := range snaps {
			_ = m.removeRecord(s)
			_ = os.RemoveAll(jobs[i].dst)
		}
		return false, copyErr
	}
	m.spaceMu.Lock()
	for _, s := range snaps {
		m.index(s)
		m.attachSpace(s)
	}
	m.spaceMu.Unlock()
	return false, nil
}

// measureCopy sizes a snapshot's copy like measure sizes live data.
func (m *Model) measureCopy(j copyJob) int64 {
	if j.dir {
		return fsBase + dirBytes(j.dst, j.skip)
	}
	return fileBytes(j.dst)
}

// Clone creates target from snapshot snap (zfs clone [-p] [-o ...]).
func (m *Model) Clone(snap, target string, props map[string]string, parents bool) error {
	return m.clone(snap, target, sortedKV(props), parents)
}

func (m *Model) clone(snapName, target string, props []kv, parents bool) error {
	if err := m.begin(); err != nil {
		return err
	}
	locked := true
	defer func() {
		if locked {
			m.mu.Unlock()
		}
	}()
	snap, err := m.open(snapName, Snapshot)
	if err != nil {
		return err
	}
	if parents && nameCheck(target, Filesystem|Volume, false) == "" {
		if m.lookup(target) != nil {
			return nil
		}
		if err := m.createAncestors(target); err != nil {
			return err
		}
	}
	prefix := "cannot create '" + target + "'"
	if aux := nameCheck(target, Filesystem, true); aux != "" {
		return newErr(KindInvalid, "%s: %s", prefix, aux)
	}
	parent, err := m.checkParents(target)
	if err != nil {
		return err
	}
	head := snap.parent
	if len(props) > 0 {
		if props, err = m.validateProps(props, head.typ, snap, prefix); err != nil {
			return err
		}
	}
	if m.lookup(target) != nil || m.pending[target] {
		return newErr(KindExists, "%s: dataset already exists", prefix)
	}
	if parent.pool != snap.pool {
		return newErr(KindInvalid, "%s: source and target pools differ", prefix)
	}
	c := m.newDataset(leafOf(target), head.typ, parent, parent.pool)
	for _, a := range props {
		c.local[a.name] = a.value
	}
	if head.typ == Volume {
		c.local["volsize"] = snap.local["volsize"]
		if bs, ok := head.local["volblocksize"]; ok {
			c.local["volblocksize"] = bs
		}
		if c.local["refreservation"] == "auto" {
			vs, _ := strconv.ParseInt(c.local["volsize"], 10, 64)
			c.local["refreservation"] = strconv.FormatInt(zvolReservation(vs, volBlockSize(c), copiesOf(parent)), 10)
		}
	}
	need := max64(numProp(c, "refreservation"), numProp(c, "reservation"))
	if need > 0 {
		m.freshen()
		m.spaceMu.Lock()
		short := need > m.dirAvail(parent)
		m.spaceMu.Unlock()
		if short {
			return newErr(KindOutOfSpace, "%s: out of space", prefix)
		}
	}
	job := copyJob{src: m.dataPath(snap), dst: m.dataPath(c), dir: head.typ == Filesystem}
	m.pending[target] = true
	snap.busy++
	m.inflight.Add(1)
	defer m.inflight.Done()
	m.mu.Unlock()
	locked = false

	copyErr := job.run()

	m.mu.Lock()
	locked = true
	delete(m.pending, target)
	snap.busy--
	if copyErr != nil {
		_ = os.RemoveAll(job.dst)
		return errIO(prefix, copyErr)
	}
	if m.closed || m.byGUID[parent.guid] == nil {
		_ = os.RemoveAll(job.dst)
		return newErr(KindNotFound, "%s: no such parent '%s'", prefix, parent.full)
	}
	c.origin = snap
	c.full = c.computeName()
	if err := m.writeRecord(c); err != nil {
		_ = os.RemoveAll(job.dst)
		return err
	}
	snap.clones[c] = true
	m.index(c)
	m.spaceMu.Lock()
	c.sp.data = m.measure(c)
	m.attachSpace(c)
	m.spaceMu.Unlock()
	m.remount(c)
	return nil
}

// Promote makes a clone independent of its origin (zfs promote): the
// origin snapshot and the snapshots before it move to the clone, and the
// former origin dataset becomes a clone of that snapshot.
func (m *Model) Promote(name string) error {
	if err := m.begin(); err != nil {
		return err
	}
	defer m.mu.Unlock()
	c, err := m.open(name, Filesystem|Volume)
	if err != nil {
		return err
	}
	prefix := "cannot promote '" + name + "'"
	if c.origin == nil {
		return newErr(KindBadType, "%s: not a cloned filesystem", prefix)
	}
	s := c.origin
	o := s.parent
	var moving []*dataset
	for _, x := range o.snaps {
		if x.txg <= s.txg {
			moving = append(moving, x)
		}
	}
	for _, x := range moving {
		if c.snapshot(x.leaf) != nil {
			return newErr(KindExists, "%s: conflicting snapshot '%s' from parent '%s'", prefix, x.leaf, o.full)
		}
	}
	m.spaceMu.Lock()
	defer m.spaceMu.Unlock()
	for _, x := range moving {
		m.unindex(x)
		x.parent = c
		m.index(x)
	}
	// Origins: c takes o's origin; o becomes a clone of s.
	delete(s.clones, c)
	c.origin = o.origin
	if c.origin != nil {
		delete(c.origin.clones, o)
		c.origin.clones[c] = true
	}
	o.origin = s
	s.clones[o] = true
	for _, x := range moving {
		m.renameSubtree(x)
		if err := m.writeRecord(x); err != nil {
			return err
		}
	}
	for _, x := range []*dataset{o, c} {
		if err := m.writeRecord(x); err != nil {
			return err
		}
	}
	m.updateSnapMax(o)
	m.updateSnapMax(c)
	return nil
}

// RollbackOptions are zfs rollback's flags.
type RollbackOptions struct {
	DestroyRecent bool // -r: destroy later snapshots
	DestroyClones bool // -R: and their clones (implies -r)
	Force         bool // -f
}

// Rollback returns a dataset to the contents of one of its snapshots.
func (m *Model) Rollback(snapName string, opts RollbackOptions) error {
	if opts.DestroyClones {
		opts.DestroyRecent = true
	}
	if err := m.begin(); err != nil {
		return err
	}
	locked := true
	var trash []string
	defer func() {
		if locked {
			m.mu.Unlock()
		}
		for _, t := range trash {
			_ = os.RemoveAll(t)
		}
	}()
	snap, err := m.open(snapName, Snapshot)
	if err != nil {
		return err
	}
	head := snap.parent
	var younger []*dataset
	for _, x := range head.snaps {
		if x.txg > snap.txg {
			younger = append(younger, x)
		}
	}
	if len(younger) > 0 && !opts.DestroyClones {
		if !opts.DestroyRecent {
			var b strings.Builder
			fmt.Fprintf(&b, "cannot rollback to '%s': more recent snapshots or bookmarks exist\n"+
				"use '-r' to force deletion of the following snapshots and bookmarks:", snapName)
			for i, y := range younger {
				if i == 32 {
					b.WriteString("\nOutput limited to 32 snapshots/bookmarks")
					break
				}
				b.WriteString("\n" + y.full)
			}
			return &Error{Kind: KindExists, Msg: b.String()}
		}
		var deps []string
		for _, y := range younger {
			deps = append(deps, namesOf(dependents(y))...)
		}
		if len(deps) > 0 {
			return &Error{Kind: KindHasClones, Msg: fmt.Sprintf("cannot rollback to '%s': clones of previous snapshots exist\n"+
				"use '-R' to force deletion of the following clones and dependents:\n%s", snapName, strings.Join(deps, "\n"))}
		}
	}
	var plan []*dataset
	for _, y := range younger {
		plan = append(plan, dependents(y)...)
		plan = append(plan, y)
	}
	for _, x := range append(plan, head) {
		if x.busy > 0 {
			return newErr(KindBusy, "cannot rollback '%s': dataset is busy", x.full)
		}
	}
	for _, x := range plan {
		t, err := m.destroyOne(x)
		if err != nil {
			return err
		}
		trash = append(trash, t...)
	}
	dst := m.dataPath(head)
	isDir := head.typ == Filesystem
	keep := childDirNames(head)
	head.busy++
	snap.busy++
	m.inflight.Add(1)
	defer m.inflight.Done()
	m.mu.Unlock()
	locked = false

	var copyErr error
	if isDir {
		if copyErr = clearDir(dst, keep); copyErr == nil {
			copyErr = copyTree(m.dataPath(snap), dst, keep)
		}
	} else {
		copyErr = copyFile(m.dataPath(snap), dst, 0o600)
	}

	m.mu.Lock()
	locked = true
	head.busy--
	snap.busy--
	if copyErr != nil {
		return errIO("cannot rollback '"+head.full+"'", copyErr)
	}
	if head.typ == Volume && snap.local["volsize"] != "" && head.local["volsize"] != snap.local["volsize"] {
		head.local["volsize"] = snap.local["volsize"]
		if err := m.writeRecord(head); err != nil {
			return err
		}
	}
	m.refresh(head)
	return nil
}
