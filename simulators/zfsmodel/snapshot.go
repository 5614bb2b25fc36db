package zfsmodel

import (
	"os"
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
			m.unlock()
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
	m.unlock()
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
			m.removeRecord(s)
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
