package zfsmodel

import (
	"fmt"
	"os"
	"strings"
)

// zfs rollback.

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
			m.unlock()
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
	m.unlock()
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
