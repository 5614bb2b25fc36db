package zfsmodel

import (
	"math"
	"strconv"
	"time"
)

// Space accounting, after the DSL's rules:
//   usedbydataset        = referenced, less what a clone shares with its origin
//   usedbysnapshots      = what the snapshots hold that the dataset no longer does
//   usedbyrefreservation = refreservation not yet consumed by usedbydataset
//   usedbychildren       = sum over children of max(used, reservation)
//   used                 = the sum of the four
// A dataset's referenced bytes come from its backing files (st_blocks), so
// they change behind the model's back. They are cached: the datasets a
// command names are measured when it runs, the rest by a background scan.
// Each dataset's charge to its parent is kept incrementally, so space
// checks cost O(depth), not O(datasets).

// fsBase is the referenced size of an empty filesystem (its ZPL metadata).
const fsBase = 96 << 10

type spaceState struct {
	data    int64 // referenced bytes (cached)
	kids    int64 // sum of the children's charges
	chg     int64 // this dataset's charge, as included in the parent's kids
	snapMax int64 // the largest referenced size among the snapshots
}

// numProp reads a numeric property as set (locally or received), 0 when unset.
func numProp(d *dataset, name string) int64 {
	v, ok := d.local[name]
	if !ok {
		v, ok = d.recvd[name]
	}
	if !ok {
		return 0
	}
	n, _ := strconv.ParseUint(v, 10, 64)
	if n > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(n)
}

func max64(a, b int64) int64 {
	if a > b {
		return a
	}
	return b
}

func min64(a, b int64) int64 {
	if a < b {
		return a
	}
	return b
}

func (m *Model) usedDS(d *dataset) int64 {
	if d.isSnap() {
		return max64(0, d.refer-d.parent.sp.data)
	}
	if d.origin != nil {
		return max64(0, d.sp.data-d.origin.refer)
	}
	return d.sp.data
}

func (m *Model) usedSnap(d *dataset) int64 { return max64(0, d.sp.snapMax-d.sp.data) }

func (m *Model) usedRefresv(d *dataset) int64 {
	return max64(0, numProp(d, "refreservation")-m.usedDS(d))
}

func (m *Model) used(d *dataset) int64 {
	if d.isSnap() {
		return m.usedDS(d)
	}
	return m.usedDS(d) + m.usedSnap(d) + m.usedRefresv(d) + d.sp.kids
}

func (m *Model) charge(d *dataset) int64 { return max64(m.used(d), numProp(d, "reservation")) }

// propagate pushes a change of d's space up to the pool root.
func (m *Model) propagate(d *dataset) {
	for x := d.head(); x != nil; x = x.parent {
		c := m.charge(x)
		delta := c - x.sp.chg
		x.sp.chg = c
		if x.parent == nil || delta == 0 {
			return
		}
		x.parent.sp.kids += delta
	}
}

// attachSpace adds a newly linked dataset's charge to its ancestors.
func (m *Model) attachSpace(d *dataset) {
	if d.isSnap() {
		m.updateSnapMax(d.parent)
		return
	}
	d.sp.chg = 0
	m.propagate(d)
}

// detachSpace removes d's charge before it is unlinked.
func (m *Model) detachSpace(d *dataset) {
	if d.isSnap() {
		return // the caller updates snapMax once d is unlinked
	}
	if d.parent != nil {
		d.parent.sp.kids -= d.sp.chg
		d.sp.chg = 0
		m.propagate(d.parent)
	}
}

func (m *Model) updateSnapMax(d *dataset) {
	var mx int64
	for _, s := range d.snaps {
		mx = max64(mx, s.refer)
	}
	d.sp.snapMax = mx
	m.propagate(d)
}

// measure reads a dataset's referenced bytes from its backing files.
func (m *Model) measure(d *dataset) int64 {
	if d.isSnap() {
		return d.refer
	}
	return measurePath(d.typ, m.dataPath(d), childDirNames(d))
}

func measurePath(typ Type, path string, skip map[string]bool) int64 {
	if typ == Volume {
		return fileBytes(path)
	}
	return fsBase + dirBytes(path, skip)
}

// refresh measures d now. Callers hold m.mu (read or write).
func (m *Model) refresh(d *dataset) {
	if d.isSnap() {
		return
	}
	v := m.measure(d)
	m.spaceMu.Lock()
	if v != d.sp.data {
		d.sp.data = v
		m.propagate(d)
	}
	m.spaceMu.Unlock()
}

// freshen brings every dataset's figures up to date when the model runs
// with RescanInterval < 0 (tests that need exact pool-wide figures);
// otherwise the background scan keeps them at most one interval old.
// Callers hold m.mu (read or write).
func (m *Model) freshen() {
	if m.opts.RescanInterval >= 0 {
		return
	}
	m.spaceMu.Lock()
	m.rescanLocked()
	m.spaceMu.Unlock()
}

// rescanLocked measures every dataset and rebuilds the sums (spaceMu held).
func (m *Model) rescanLocked() {
	var sum func(d *dataset) int64
	sum = func(d *dataset) int64 {
		d.sp.data = m.measure(d)
		var mx int64
		for _, s := range d.snaps {
			mx = max64(mx, s.refer)
		}
		d.sp.snapMax = mx
		var kids int64
		for _, c := range d.children {
			kids += sum(c)
		}
		d.sp.kids = kids
		d.sp.chg = m.charge(d)
		return d.sp.chg
	}
	for _, p := range m.pools {
		sum(p.root)
	}
}

// scanLoop re-measures all datasets every interval, so that data written
// behind the model's back shows in pool-wide figures without any command
// paying for a full scan.
func (m *Model) scanLoop(every time.Duration, stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			m.backgroundScan()
		}
	}
}

// backgroundScan measures without holding any lock, then applies the
// figures of the datasets that did not move meanwhile.
func (m *Model) backgroundScan() {
	type item struct {
		d    *dataset
		path string
		skip map[string]bool
		v    int64
	}
	m.mu.RLock()
	if m.closed {
		m.mu.RUnlock()
		return
	}
	items := make([]item, 0, len(m.byGUID))
	for _, d := range m.byGUID {
		if !d.isSnap() {
			items = append(items, item{d: d, path: m.dataPath(d), skip: childDirNames(d)})
		}
	}
	m.mu.RUnlock()
	for i := range items {
		items[i].v = measurePath(items[i].d.typ, items[i].path, items[i].skip)
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	m.spaceMu.Lock()
	defer m.spaceMu.Unlock()
	for _, it := range items {
		if m.byGUID[it.d.guid] == it.d && m.dataPath(it.d) == it.path && it.d.sp.data != it.v {
			it.d.sp.data = it.v
			m.propagate(it.d)
		}
	}
}

// dirAvail mirrors dsl_dir_space_available: the space d and its
// descendants may still use, from the pool's free space, the reservations
// held for them and the quotas of d and its ancestors.
func (m *Model) dirAvail(d *dataset) int64 {
	parentSpace := int64(math.MaxInt64)
	if d.parent != nil {
		parentSpace = m.dirAvail(d.parent)
	}
	used := m.used(d)
	quota := numProp(d, "quota")
	if quota == 0 {
		quota = math.MaxInt64
	}
	if d.parent == nil {
		quota = min64(quota, d.pool.size)
	}
	if resv := numProp(d, "reservation"); resv > used && parentSpace != math.MaxInt64 {
		parentSpace += resv - used
	}
	if used > quota {
		return 0
	}
	return min64(parentSpace, quota-used)
}

// avail is the "available" property (dsl_dataset_space).
func (m *Model) avail(d *dataset) int64 {
	a := m.dirAvail(d)
	if r := numProp(d, "refreservation"); r > m.usedDS(d) {
		a += r - m.usedDS(d)
	}
	if q := numProp(d, "refquota"); q > 0 {
		a = min64(a, max64(0, q-d.sp.data))
	}
	return max64(0, a)
}

// poolAlloc is the pool's allocated bytes: data only, reservations excluded.
func (m *Model) poolAlloc(p *pool) int64 {
	var sum func(d *dataset) int64
	sum = func(d *dataset) int64 {
		n := m.usedDS(d) + m.usedSnap(d)
		for _, c := range d.children {
			n += sum(c)
		}
		return n
	}
	return sum(p.root)
}

// written is the data written since the previous snapshot.
func (m *Model) written(d *dataset) int64 {
	if d.isSnap() {
		var prev int64
		for _, s := range d.parent.snaps {
			if s == d {
				break
			}
			prev = s.refer
		}
		return max64(0, d.refer-prev)
	}
	if n := len(d.snaps); n > 0 {
		return max64(0, d.sp.data-d.snaps[n-1].refer)
	}
	return d.sp.data
}

// zvolReservation mirrors zvol_volsize_to_reservation for a pool without
// raidz: the data blocks plus the worst case of their indirect blocks.
func zvolReservation(volsize, volblocksize int64, copies int) int64 {
	const dnodesPerLevel = 1 << (17 - 7) // DN_MAX_INDBLKSHIFT - SPA_BLKPTRSHIFT
	nblocks := volsize / volblocksize
	numdb := int64(7)
	for nblocks > 1 {
		nblocks += dnodesPerLevel - 1
		nblocks /= dnodesPerLevel
		numdb += nblocks
	}
	numdb *= min64(3, int64(copies)+1)
	return volsize*int64(copies) + numdb*(1<<17)
}
