package zfsmodel

import (
	"os"
	"path/filepath"
	"strings"
)

// RenameOptions are zfs rename's flags.
type RenameOptions struct {
	Parents   bool // -p: create missing ancestors of the target
	Recursive bool // -r: rename a snapshot in all descendants too
	NoUnmount bool // -u
	Force     bool // -f
}

// Rename renames a dataset or a snapshot (zfs rename).
func (m *Model) Rename(from, to string, opts RenameOptions) error {
	if err := m.begin(); err != nil {
		return err
	}
	defer m.unlock()
	types := AnyType
	switch {
	case opts.NoUnmount:
		types = Filesystem
	case opts.Parents:
		types = Filesystem | Volume
	}
	d, err := m.open(from, types)
	if err != nil {
		return err
	}
	if opts.Parents && nameCheck(to, d.typ, false) == "" {
		if err := m.createAncestors(to); err != nil {
			return err
		}
	}
	if from == to {
		return nil
	}
	if d.isSnap() {
		return m.renameSnapshot(d, to, opts.Recursive)
	}
	prefix := "cannot rename to '" + to + "'"
	if opts.Recursive {
		return newErr(KindBadType, "%s: recursive rename must be a snapshot", prefix)
	}
	if aux := nameCheck(to, d.typ, true); aux != "" {
		return newErr(KindInvalid, "%s: %s", prefix, aux)
	}
	parent, err := m.checkParents(to)
	if err != nil {
		return err
	}
	if poolOf(to) != poolOf(from) {
		return newErr(KindInvalid, "%s: datasets must be within same pool", prefix)
	}
	if isDescendant(from, to) {
		return newErr(KindInvalid, "%s: New dataset name cannot be a descendant of current dataset name", prefix)
	}
	if m.lookup(to) != nil || m.pending[to] {
		return newErr(KindExists, "cannot rename '%s': dataset already exists", from)
	}
	if r := m.encRoot(d); encrypted(d) && r != d && (!encrypted(parent) || m.encRoot(parent) != r) {
		return newErr(KindCrypto, "cannot rename '%s': cannot move encrypted child outside of its encryption root", from)
	}
	busy := false
	walk(d, func(x *dataset) { busy = busy || x.busy > 0 })
	if busy {
		return newErr(KindBusy, "cannot rename '%s': dataset is busy", from)
	}
	if d.typ == Filesystem {
		newDir := filepath.Join(m.dir, "mnt", filepath.FromSlash(to))
		if err := os.Rename(m.fsDir(d), newDir); err != nil && !os.IsNotExist(err) {
			return errIO("cannot rename '"+from+"'", err)
		}
	}
	m.unmountTree(d)
	m.spaceMu.Lock()
	m.detachSpace(d)
	m.unindex(d)
	d.parent, d.leaf = parent, leafOf(to)
	m.index(d)
	m.renameSubtree(d)
	m.attachSpace(d)
	m.spaceMu.Unlock()
	m.remount(d)
	return m.writeRecord(d)
}

func (m *Model) renameSnapshot(s *dataset, to string, recursive bool) error {
	prefix := "cannot rename to '" + to + "'"
	if !strings.Contains(to, "@") || strings.HasPrefix(to, "@") {
		to = s.parent.full + "@" + strings.TrimPrefix(to, "@")
	} else if fs, _ := splitSnap(to); fs != s.parent.full {
		return newErr(KindInvalid, "%s: snapshots must be part of same dataset", prefix)
	}
	if aux := nameCheck(to, Snapshot, true); aux != "" {
		return newErr(KindInvalid, "cannot rename to '%s': %s", to, aux)
	}
	_, newLeaf := splitSnap(to)
	targets := []*dataset{s}
	if recursive {
		walk(s.parent, func(x *dataset) {
			if !x.isSnap() && x != s.parent {
				if y := x.snapshot(s.leaf); y != nil {
					targets = append(targets, y)
				}
			}
		})
	}
	for _, t := range targets {
		if t.parent.snapshot(newLeaf) != nil || m.pending[t.parent.full+"@"+newLeaf] {
			if recursive {
				return newErr(KindExists, "cannot rename '%s': a child dataset already has a snapshot with the new name", t.full)
			}
			return newErr(KindExists, "cannot rename '%s': dataset already exists", t.full)
		}
	}
	for _, t := range targets {
		delete(m.byName, t.full)
		t.leaf = newLeaf
		t.full = t.computeName()
		m.byName[t.full] = t
		if err := m.writeRecord(t); err != nil {
			return err
		}
	}
	return nil
}
