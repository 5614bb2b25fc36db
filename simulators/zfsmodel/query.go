package zfsmodel

import (
	"slices"
	"sort"
	"strings"
	"time"
)

// Info describes one dataset for Go callers.
type Info struct {
	Name         string
	Type         Type
	GUID         uint64
	CreateTXG    uint64
	Creation     time.Time
	Origin       string   // origin snapshot of a clone
	Clones       []string // clones of a snapshot
	Snapshots    []string // a dataset's snapshots, oldest first
	Children     []string // child filesystems and volumes
	Used         int64
	Available    int64 // 0 for snapshots
	Referenced   int64
	Volsize      int64  // volumes and their snapshots
	Volblocksize int64  // volumes
	Mountpoint   string // effective mountpoint of a filesystem ("" for none/legacy)
	Mounted      bool
	// Props holds every property zfs get -p all shows, plus user properties.
	Props map[string]PropValue
}

// Exists reports whether a dataset or snapshot exists.
func (m *Model) Exists(name string) bool {
	if err := m.beginRead(); err != nil {
		return false
	}
	defer m.mu.RUnlock()
	return m.lookup(name) != nil
}

// Get returns a dataset's description with freshly measured space figures.
func (m *Model) Get(name string) (*Info, error) {
	return m.get(name, true, nil)
}

// GetProps is Get with only the named native properties in Props, as
// PeekProps cuts them: the TrueNAS dataset entry reports ~40 of the ~80
// (issue 16, seventh round).
func (m *Model) GetProps(name string, props ...string) (*Info, error) {
	if props == nil {
		props = []string{}
	}
	return m.get(name, true, props)
}

// Peek is Get without measuring: the space figures are the last measured
// (by an earlier query of the dataset, or the background scan, at most
// one RescanInterval old), and Children, Clones and Snapshots are left
// nil. For a caller that wants a dataset's type and properties, such as
// the TrueNAS middleware's look at the parent of a dataset it creates or
// updates: measuring that parent read its directory, one entry per
// child, and sorted its children, on every create (issue 16).
func (m *Model) Peek(name string) (*Info, error) {
	return m.get(name, false, nil)
}

// PeekProps is Peek with only the named native properties in Props (those
// that apply to the dataset; names that are not native properties are
// ignored) beside every user property. Reading all ~80 native
// properties (each resolved up the ancestors) into a fresh map was most
// of a Peek, and the TrueNAS middleware's callers read two or three: the
// type and ACL settings of a parent, a dataset query's asked-for
// properties (issue 16, seventh round).
func (m *Model) PeekProps(name string, props ...string) (*Info, error) {
	if props == nil {
		props = []string{}
	}
	return m.get(name, false, props)
}

// SnapshotNames is Get's Info.Snapshots (a dataset's snapshots, oldest
// first; none for a snapshot) without measuring the dataset or reading
// its properties: the TrueNAS snapshot query by dataset wants only the
// names, and Get's walk of the dataset's directory and its ~80
// properties were most of that query's cost (issue 16, seventh round).
func (m *Model) SnapshotNames(name string) ([]string, error) {
	d, err := m.beginOpen(name)
	if err != nil {
		return nil, err
	}
	defer m.mu.RUnlock()
	return namesOf(d.snaps), nil
}

// beginOpen is beginRead and open(name, AnyType): on success the caller
// holds the read lock and releases it.
func (m *Model) beginOpen(name string) (*dataset, error) {
	if err := m.beginRead(); err != nil {
		return nil, err
	}
	d, err := m.open(name, AnyType)
	if err != nil {
		m.mu.RUnlock()
		return nil, err
	}
	return d, nil
}

// get reads name's description; full measures it first and fills the
// lists; only, when not nil, names the native properties to read.
func (m *Model) get(name string, full bool, only []string) (*Info, error) {
	d, err := m.beginOpen(name)
	if err != nil {
		return nil, err
	}
	defer m.mu.RUnlock()
	if full {
		m.freshen()
		m.refresh(d)
	}
	m.spaceMu.Lock()
	defer m.spaceMu.Unlock()
	users := userPropCandidates(d)
	in := &Info{
		Name: d.full, Type: d.typ, GUID: d.guid, CreateTXG: d.txg, Creation: time.Unix(d.creation, 0),
		Used: m.used(d), Referenced: d.sp.data, Mountpoint: m.mountpoint(d), Mounted: m.isMounted(d),
	}
	if only == nil {
		in.Props = make(map[string]PropValue, len(propTable)+len(users))
	} else {
		in.Props = make(map[string]PropValue, len(only)+len(users))
	}
	if full {
		in.Clones, in.Snapshots, in.Children = namesOf(d.sortedClones()), namesOf(d.snaps), namesOf(d.sortedChildren())
	}
	if d.isSnap() {
		in.Referenced = d.refer
	} else {
		in.Available = m.avail(d)
	}
	if d.origin != nil {
		in.Origin = d.origin.full
	}
	if d.typ == Volume || d.isSnap() && d.parent.typ == Volume {
		in.Volsize = numProp(d, "volsize")
		in.Volblocksize = volBlockSize(d)
	}
	if only == nil {
		for _, p := range propTable {
			m.addProp(in, d, p)
		}
	}
	for _, name := range only {
		if p := lookupProp(name); p != nil && p.name == name {
			m.addProp(in, d, p)
		}
	}
	for _, k := range users {
		if pv, ok := userProp(d, k); ok {
			in.Props[k] = pv
		}
	}
	return in, nil
}

// addProp puts native property p into in.Props as get shows it: visible
// and applicable to d.
func (m *Model) addProp(in *Info, d *dataset, p *propDesc) {
	if !p.visible {
		return
	}
	if pv, ok := m.nativeProp(d, p, true); ok {
		in.Props[p.name] = pv
	}
}

// GetProperty returns one property as zfs get shows it (literal: as -p).
// An unset user property is "-" with SourceNone; a native property that
// does not apply is an error.
func (m *Model) GetProperty(name, prop string, literal bool) (PropValue, error) {
	if err := m.beginRead(); err != nil {
		return PropValue{}, err
	}
	defer m.mu.RUnlock()
	d, err := m.open(name, AnyType)
	if err != nil {
		return PropValue{}, err
	}
	p := lookupProp(prop)
	if p == nil {
		if !isUserProp(prop) {
			return PropValue{}, newErr(KindInvalid, "bad property list: invalid property '%s'", prop)
		}
		pv, _ := userProp(d, prop)
		return pv, nil
	}
	m.freshen()
	m.refresh(d)
	m.spaceMu.Lock()
	defer m.spaceMu.Unlock()
	pv, ok := m.nativeProp(d, p, literal)
	if !ok {
		return PropValue{Value: "-", Source: SourceNone, Received: "-"}, nil
	}
	return pv, nil
}

// userPropNames lists the user properties set on d or inherited by it.
func userPropNames(d *dataset) []string {
	c := userPropCandidates(d)
	out := c[:0]
	for _, k := range c {
		if _, _, _, ok := resolve(d, k, true); ok {
			out = append(out, k)
		}
	}
	return out
}

// userPropCandidates lists, sorted and once each, the user properties
// set (locally or received) on d or an ancestor: userPropNames before
// resolving, which an inherit marker may leave unset. A sorted slice,
// not a set: a map per read was a tenth of a TrueNAS dataset read
// (issue 16, seventh round; TestUserPropNamesIsTheSet).
func userPropCandidates(d *dataset) []string {
	var out []string
	for x := d; x != nil; x = x.parent {
		for k := range x.local {
			if isUserProp(k) && lookupProp(k) == nil {
				out = append(out, k)
			}
		}
		if len(x.recvd) == 0 {
			continue // most datasets received nothing: no map iteration
		}
		for k := range x.recvd {
			if isUserProp(k) && lookupProp(k) == nil {
				out = append(out, k)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// List returns the names below root (itself included) of the given types
// in zfs list order; recursive descends into children and snapshots.
// root "" lists every pool.
func (m *Model) List(root string, recursive bool, types Type) ([]string, error) {
	if err := m.beginRead(); err != nil {
		return nil, err
	}
	defer m.mu.RUnlock()
	it := iterSpec{types: types, recurse: recursive, includeSnaps: types&Snapshot != 0}
	var args []string
	if root != "" {
		args = []string{root}
	}
	ds, err := m.collect(args, it)
	if err != nil {
		return nil, err
	}
	return namesOf(ds), nil
}

// iterSpec is zfs_for_each's flags.
type iterSpec struct {
	types        Type
	recurse      bool
	depth        int // limit, with limited
	limited      bool
	includeSnaps bool // recursion descends into snapshots
	poolSnaps    bool // ... when the dataset's pool has listsnapshots=on
	pathArgs     bool // arguments may be mountpoint paths
}

// collect mirrors zfs_for_each: it opens each argument (every pool when
// there is none), descends as asked and returns the datasets sorted by
// name, a dataset before its snapshots, snapshots by creation. Arguments
// that fail are reported in the returned error (all of them, one per line)
// while the others are still collected.
func (m *Model) collect(args []string, it iterSpec) ([]*dataset, error) {
	seen := map[*dataset]bool{}
	var out []*dataset
	var cb func(d *dataset, depth int)
	cb = func(d *dataset, depth int) {
		if d.typ&it.types != 0 && !seen[d] {
			seen[d] = true
			out = append(out, d)
		}
		if !it.recurse || it.limited && depth >= it.depth {
			return
		}
		depth++
		if (depth < it.depth || !it.limited || it.types&(Filesystem|Volume) != 0) && d.typ == Filesystem {
			for _, c := range d.sortedChildren() {
				cb(c, depth)
			}
		}
		if !d.isSnap() && (it.includeSnaps || it.poolSnaps && d.pool.props["listsnapshots"] == "on") {
			for _, s := range d.snaps {
				cb(s, depth)
			}
		}
	}
	var errs []string
	if len(args) == 0 {
		it.recurse = true
		pools := make([]string, 0, len(m.pools))
		for n := range m.pools {
			pools = append(pools, n)
		}
		sort.Strings(pools)
		for _, n := range pools {
			cb(m.pools[n].root, 0)
		}
	}
	argTypes := it.types
	if it.recurse {
		argTypes |= Filesystem
		if it.types&Snapshot != 0 {
			argTypes |= Volume
		}
	}
	for _, a := range args {
		var d *dataset
		var err error
		if it.pathArgs && (strings.HasPrefix(a, "/") || strings.HasPrefix(a, "./")) {
			d, err = m.datasetForPath(a)
		} else {
			d, err = m.open(a, argTypes)
		}
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		cb(d, 0)
	}
	sortDatasets(out)
	if len(errs) > 0 {
		return out, &Error{Kind: KindNotFound, Msg: strings.Join(errs, "\n")}
	}
	return out, nil
}

// sortDatasets is zfs_compare: by name, a dataset before its snapshots,
// snapshots of one dataset by createtxg.
func sortDatasets(ds []*dataset) {
	sort.SliceStable(ds, func(i, j int) bool { return compareDatasets(ds[i], ds[j]) < 0 })
}

func compareDatasets(l, r *dataset) int {
	ln, rn := l.head().full, r.head().full
	if c := strings.Compare(ln, rn); c != 0 {
		return c
	}
	switch {
	case !l.isSnap() && !r.isSnap():
		return 0
	case !l.isSnap():
		return -1
	case !r.isSnap():
		return 1
	case l.txg < r.txg:
		return -1
	case l.txg > r.txg:
		return 1
	}
	return 0
}
