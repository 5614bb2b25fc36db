package zfsmodel

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"path/filepath"
	"sort"
	"sync"
	"time"
)

// PoolSpec describes a pool created when it is absent from the state.
type PoolSpec struct {
	Name string
	Size int64 // usable bytes (no slop space is held back)
}

// Options configure Open.
type Options struct {
	StateDir string     // required; the state persists here across Close/Open
	Pools    []PoolSpec // pools created when absent from the state

	// RescanInterval is how often a background scan re-measures every
	// dataset's files, bounding how stale the space figures of datasets a
	// command does not name may be (their data is written behind the
	// model's back, through mounts and block devices). 0 means 2s; < 0 means
	// no background scan: every command that needs pool-wide figures
	// measures everything first (exact, for tests; O(datasets) per command).
	RescanInterval time.Duration

	// Defaults overrides native property defaults, e.g.
	// {"compression": "off"} to match an OpenZFS 2.1 or zfs-fuse host
	// (volblocksize stays 16K).
	Defaults map[string]string

	// Now is the clock for creation times; time.Now when nil.
	Now func() time.Time
}

// Model is the ZFS model. All methods are safe for concurrent use.
//
// mu guards the dataset tree (readers: listings; writers: mutations, which
// release it while they copy data). spaceMu guards the space caches, which
// readers update as they measure; it is taken after mu, never before.
type Model struct {
	mu       sync.RWMutex
	dir      string
	opts     Options
	defaults map[string]string
	pools    map[string]*pool
	byName   map[string]*dataset
	byGUID   map[uint64]*dataset
	mounts   map[string]*dataset // effective mountpoint -> mounted filesystem
	pending  map[string]bool     // names reserved by in-flight snapshot/clone/receive
	keys     map[uint64]bool     // encryption roots whose key is loaded (memory only: crypt.go)
	txg      uint64
	objset   uint64
	closed   bool
	inflight sync.WaitGroup

	j  journal // record changes on their way to disk (journal.go)
	sp spares  // empty directories kept for reuse (spare.go)

	spaceMu  sync.Mutex
	stopScan chan struct{}
	scanDone chan struct{}
}

type pool struct {
	name     string
	size     int64
	guid     uint64
	creation int64
	props    map[string]string // zpool set values
	root     *dataset
}

// dataset is a filesystem, volume or snapshot.
type dataset struct {
	guid      uint64
	leaf      string // last name component ("snap" for fs@snap)
	full      string // cached full name
	typ       Type
	pool      *pool
	parent    *dataset            // parent filesystem; for a snapshot, its dataset
	children  map[string]*dataset // child filesystems and volumes by leaf
	snaps     []*dataset          // snapshots, oldest first
	origin    *dataset            // origin snapshot of a clone
	clones    map[*dataset]bool   // clones of a snapshot
	creation  int64
	txg       uint64
	objset    uint64
	local     map[string]string // locally set properties (canonical values)
	recvd     map[string]string // received properties
	refer     int64             // snapshots: referenced bytes when taken
	deferred  bool              // snapshots: zfs destroy -d while cloned
	busy      int               // in-flight operations reading its data
	mountedAt string            // key of its entry in Model.mounts

	sp spaceState // guarded by Model.spaceMu
}

func (d *dataset) isSnap() bool { return d.typ == Snapshot }

// head is the dataset a snapshot belongs to (the dataset itself otherwise).
func (d *dataset) head() *dataset {
	if d.isSnap() {
		return d.parent
	}
	return d
}

func (d *dataset) computeName() string {
	switch {
	case d.parent == nil:
		return d.leaf
	case d.isSnap():
		return d.parent.full + "@" + d.leaf
	}
	return d.parent.full + "/" + d.leaf
}

// sortedChildren returns the child filesystems and volumes in name order.
func (d *dataset) sortedChildren() []*dataset {
	out := make([]*dataset, 0, len(d.children))
	for _, c := range d.children {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].leaf < out[j].leaf })
	return out
}

func (d *dataset) snapshot(name string) *dataset {
	for _, s := range d.snaps {
		if s.leaf == name {
			return s
		}
	}
	return nil
}

func (d *dataset) sortedClones() []*dataset {
	out := make([]*dataset, 0, len(d.clones))
	for c := range d.clones {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].full < out[j].full })
	return out
}

func (m *Model) now() int64 { return m.opts.Now().Unix() }

func (m *Model) nextTXG() uint64 {
	m.txg++
	return m.txg
}

func (m *Model) newGUID() uint64 {
	for {
		var b [8]byte
		_, _ = rand.Read(b[:])
		g := binary.LittleEndian.Uint64(b[:])
		if g != 0 && m.byGUID[g] == nil {
			return g
		}
	}
}

// newDataset makes an unlinked dataset record.
func (m *Model) newDataset(leaf string, typ Type, parent *dataset, p *pool) *dataset {
	m.objset++
	d := &dataset{
		guid: m.newGUID(), leaf: leaf, typ: typ, parent: parent, pool: p,
		children: map[string]*dataset{}, clones: map[*dataset]bool{},
		creation: m.now(), txg: m.nextTXG(), objset: m.objset,
		local: map[string]string{}, recvd: map[string]string{},
	}
	d.full = d.computeName()
	return d
}

// index adds d to the name maps and links it under its parent.
func (m *Model) index(d *dataset) {
	d.full = d.computeName()
	m.byName[d.full] = d
	m.byGUID[d.guid] = d
	if d.parent == nil {
		return
	}
	if d.isSnap() {
		d.parent.snaps = append(d.parent.snaps, d)
		sort.SliceStable(d.parent.snaps, func(i, j int) bool { return d.parent.snaps[i].txg < d.parent.snaps[j].txg })
	} else {
		d.parent.children[d.leaf] = d
	}
}

// unindex removes d (not its descendants) from the maps and its parent.
func (m *Model) unindex(d *dataset) {
	delete(m.byName, d.full)
	delete(m.byGUID, d.guid)
	if d.parent == nil {
		return
	}
	if d.isSnap() {
		s := d.parent.snaps
		for i, x := range s {
			if x == d {
				d.parent.snaps = append(s[:i:i], s[i+1:]...) //nolint:gocritic // appendAssign: a copy without x, on purpose
				break
			}
		}
	} else {
		delete(d.parent.children, d.leaf)
	}
}

// renameSubtree recomputes cached names below d after d moved.
func (m *Model) renameSubtree(d *dataset) {
	delete(m.byName, d.full)
	d.full = d.computeName()
	m.byName[d.full] = d
	for _, s := range d.snaps {
		m.renameSubtree(s)
	}
	for _, c := range d.children {
		m.renameSubtree(c)
	}
}

// lookup finds a dataset or snapshot by name.
func (m *Model) lookup(name string) *dataset { return m.byName[name] }

// open is zfs_open: validate the name, find it, check its type.
func (m *Model) open(name string, types Type) (*dataset, error) {
	if aux := nameCheck(name, types, false); aux != "" {
		return nil, newErr(KindInvalid, "cannot open '%s': %s", name, aux)
	}
	d := m.lookup(name)
	if d == nil {
		return nil, errNoDataset(name)
	}
	if d.typ&types == 0 {
		return nil, errBadType(name)
	}
	return d, nil
}

// walk calls fn for d and every descendant (children, snapshots), parents first.
func walk(d *dataset, fn func(*dataset)) {
	fn(d)
	for _, s := range d.snaps {
		fn(s)
	}
	for _, c := range d.sortedChildren() {
		walk(c, fn)
	}
}

// dependents lists what zfs_iter_dependents visits below d, in its order:
// children depth first, then snapshots oldest first, each snapshot preceded
// by its clones (and their dependents); every entry after its own dependents.
func dependents(d *dataset) []*dataset {
	var out []*dataset
	seen := map[*dataset]bool{}
	var visit func(x *dataset, first bool)
	visit = func(x *dataset, first bool) {
		if seen[x] {
			return
		}
		seen[x] = true
		if x.isSnap() {
			for _, c := range x.sortedClones() {
				visit(c, false)
			}
		} else {
			for _, c := range x.sortedChildren() {
				visit(c, false)
			}
			for _, s := range x.snaps {
				visit(s, false)
			}
		}
		if !first {
			out = append(out, x)
		}
	}
	visit(d, true)
	return out
}

// begin takes the write lock for a mutation; it fails once the model closed.
func (m *Model) begin() error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return errClosed
	}
	if err := m.journalErr(); err != nil {
		m.mu.Unlock()
		return err
	}
	return nil
}

func (m *Model) beginRead() error {
	m.mu.RLock()
	if m.closed {
		m.mu.RUnlock()
		return errClosed
	}
	return nil
}

// dataPath is the real file or directory holding a dataset's data.
func (m *Model) dataPath(d *dataset) string {
	switch {
	case d.isSnap() && d.parent.typ == Volume:
		return filepath.Join(m.dir, "snaps", fmt.Sprintf("%016x.zvol", d.guid))
	case d.isSnap():
		return filepath.Join(m.dir, "snaps", fmt.Sprintf("%016x", d.guid))
	case d.typ == Volume:
		return filepath.Join(m.dir, "zvols", fmt.Sprintf("%016x.zvol", d.guid))
	}
	return m.fsDir(d)
}

// fsDir is a filesystem's directory: <StateDir>/mnt/<dataset>. Children
// nest inside their parent's directory, as mounts nest on a real host.
func (m *Model) fsDir(d *dataset) string {
	return filepath.Join(m.dir, "mnt", filepath.FromSlash(d.full))
}

// childDirNames are the entries of a filesystem's directory that belong to
// child filesystems (excluded from its space and its snapshots).
func childDirNames(d *dataset) map[string]bool {
	out := map[string]bool{}
	for leaf, c := range d.children {
		if c.typ == Filesystem {
			out[leaf] = true
		}
	}
	return out
}

func namesOf(ds []*dataset) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.full
	}
	return out
}
