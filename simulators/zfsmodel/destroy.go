package zfsmodel

import (
	"fmt"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// DestroyOptions are zfs destroy's flags.
type DestroyOptions struct {
	Recursive  bool // -r: also the children and snapshots
	Dependents bool // -R: also clones and what depends on them (implies -r)
	Force      bool // -f: force unmount (accepted; nothing is ever busy mounted)
	Defer      bool // -d: snapshots with clones are destroyed when their last clone goes
	DryRun     bool // -n
}

// Destroy destroys a dataset, or snapshots given as fs@snap[%snap][,...],
// with zfs destroy's checks and messages.
func (m *Model) Destroy(name string, opts DestroyOptions) error {
	_, _, err := m.destroy(name, opts)
	return err
}

// destroy returns the names destroyed (or that would be), in order, and
// for snapshot specs the space reclaimed.
func (m *Model) destroy(name string, opts DestroyOptions) ([]string, int64, error) {
	if opts.Dependents {
		opts.Recursive = true
	}
	if err := m.begin(); err != nil {
		return nil, 0, err
	}
	var trash []string
	defer func() {
		m.unlock()
		for _, t := range trash {
			m.discard(t)
		}
	}()
	var plan []*dataset
	var reclaim int64
	var err error
	if strings.Contains(name, "@") {
		plan, reclaim, err = m.planSnapDestroy(name, opts)
	} else {
		plan, err = m.planDestroy(name, opts)
	}
	if err != nil || opts.DryRun {
		return namesOf(plan), reclaim, err
	}
	for _, d := range plan {
		if d.busy > 0 {
			return nil, 0, newErr(KindBusy, "cannot destroy '%s': dataset is busy", d.full)
		}
	}
	for _, d := range plan {
		if opts.Defer && d.isSnap() && len(d.clones) > 0 {
			d.deferred = true
			if err := m.writeRecord(d); err != nil {
				return nil, 0, err
			}
			continue
		}
		t, err := m.destroyOne(d)
		if err != nil {
			return nil, 0, err
		}
		trash = append(trash, t...)
	}
	return namesOf(plan), reclaim, nil
}

// planDestroy mirrors zfs_do_destroy for a filesystem or volume.
func (m *Model) planDestroy(name string, opts DestroyOptions) ([]*dataset, error) {
	types := Filesystem | Volume | Snapshot
	if opts.Defer {
		types = Snapshot
	}
	d, err := m.open(name, types)
	if err != nil {
		return nil, err
	}
	if !opts.Recursive && d.parent == nil {
		return nil, newErr(KindInvalid, "cannot destroy '%s': operation does not apply to pools\n"+
			"use 'zfs destroy -r %s' to destroy all datasets in the pool\n"+
			"use 'zpool destroy %s' to destroy the pool itself", d.full, d.full, d.full)
	}
	deps := dependents(d)
	if !opts.Dependents {
		if err := checkDependents(d, deps, opts.Recursive); err != nil {
			return nil, err
		}
	}
	plan := append(deps, d) //nolint:gocritic // appendAssign: deps is not used again
	if d.parent == nil {    // the pool's root itself stays
		plan = deps
	}
	return plan, nil
}

// checkDependents is destroy_check_dependent: children need -r, clones -R.
func checkDependents(target *dataset, deps []*dataset, recursive bool) error {
	var header string
	var list []string
	for _, x := range deps {
		if isDescendant(target.full, x.full) || strings.HasPrefix(x.full, target.full+"@") {
			if recursive {
				continue
			}
			if header == "" {
				header = fmt.Sprintf("cannot destroy '%s': %s has children\nuse '-r' to destroy the following datasets:",
					target.full, target.typ)
			}
		} else {
			if !recursive && !target.isSnap() {
				continue
			}
			if header == "" {
				header = fmt.Sprintf("cannot destroy '%s': %s has dependent clones\nuse '-R' to destroy the following datasets:",
					target.full, target.typ)
			}
		}
		list = append(list, x.full)
	}
	if header == "" {
		return nil
	}
	kind := KindHasChildren
	if strings.Contains(header, "dependent clones") {
		kind = KindHasClones
	}
	return &Error{Kind: kind, Msg: header + "\n" + strings.Join(list, "\n")}
}

// planSnapDestroy mirrors the fs@snap branch of zfs_do_destroy.
func (m *Model) planSnapDestroy(name string, opts DestroyOptions) ([]*dataset, int64, error) {
	fsName, spec := splitSnap(name)
	d, err := m.open(fsName, Filesystem|Volume)
	if err != nil {
		return nil, 0, err
	}
	var snaps []*dataset
	var gather func(x *dataset)
	gather = func(x *dataset) {
		snaps = append(snaps, matchSnapspec(x, spec)...)
		if opts.Recursive {
			for _, c := range x.sortedChildren() {
				gather(c)
			}
		}
	}
	gather(d)
	var plan []*dataset
	var reclaim int64
	for _, s := range snaps {
		deps := dependents(s)
		if !opts.Dependents && !opts.Defer {
			if err := checkDependents(s, deps, false); err != nil {
				return nil, 0, err
			}
		}
		if opts.Dependents {
			plan = append(plan, deps...)
		}
		m.spaceMu.Lock()
		reclaim += m.usedDS(s)
		m.spaceMu.Unlock()
	}
	if len(snaps) == 0 {
		return nil, 0, newErr(KindNotFound, "could not find any snapshots to destroy; check snapshot names.")
	}
	return append(plan, snaps...), reclaim, nil
}

// matchSnapspec resolves "a,b,c%e" against d's snapshots (zfs_iter_snapspec).
func matchSnapspec(d *dataset, spec string) []*dataset {
	var out []*dataset
	seen := map[*dataset]bool{}
	add := func(s *dataset) {
		if s != nil && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	for _, part := range strings.Split(spec, ",") {
		lo, hi, isRange := strings.Cut(part, "%")
		if !isRange {
			add(d.snapshot(part))
			continue
		}
		in := lo == ""
		for _, s := range d.snaps {
			if s.leaf == lo {
				in = true
			}
			if in {
				add(s)
			}
			if s.leaf == hi {
				break
			}
		}
	}
	return out
}

// destroyOne unlinks one dataset (whose dependents are gone) and moves its
// data to the trash; it returns the trash paths to delete after unlocking.
func (m *Model) destroyOne(d *dataset) ([]string, error) {
	if m.byGUID[d.guid] == nil {
		return nil, nil // already gone (a deferred origin destroyed with its last clone)
	}
	m.removeRecord(d)
	m.unmountTree(d)
	m.dropPartial(d)
	m.spaceMu.Lock()
	m.detachSpace(d)
	m.spaceMu.Unlock()
	m.unindex(d)
	var trash []string
	if d.isSnap() {
		m.spaceMu.Lock()
		m.updateSnapMax(d.parent)
		m.spaceMu.Unlock()
	}
	if p := m.dataPath(d); p != "" {
		// Without spares (tmpfs) an empty filesystem's directory is
		// removed at once: one rmdir, ~10 µs there, instead of a rename
		// to the trash and a removal after the lock. One with files in
		// it still goes to the trash, to be removed outside the lock.
		if !m.sp.known && d.typ == Filesystem && unix.Rmdir(p) == nil {
			return m.destroyOrigin(d, nil)
		}
		// rename(2) itself: os.Rename first lstats the target to refuse
		// replacing a directory, and the trash never has this name (it is
		// the dataset's GUID, and Open empties the trash).
		t := filepath.Join(m.dir, "trash", fmt.Sprintf("%016x", d.guid))
		if err := unix.Rename(p, t); err == nil {
			trash = append(trash, t)
		}
	}
	return m.destroyOrigin(d, trash)
}

// destroyOrigin ends destroyOne: d leaves its origin's clones, and a
// deferred origin goes with its last clone.
func (m *Model) destroyOrigin(d *dataset, trash []string) ([]string, error) {
	if o := d.origin; o != nil {
		delete(o.clones, d)
		if o.deferred && len(o.clones) == 0 {
			t, err := m.destroyOne(o)
			if err != nil {
				return trash, err
			}
			trash = append(trash, t...)
		}
	}
	return trash, nil
}
