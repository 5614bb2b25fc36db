package sharing

import (
	"encoding/json"
	"os"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/switchyard-csi/switchyard/simulators/truenas/middleware"
)

// Writing a table after a change happens outside the service's lock
// (issue 16: marshalling and writing the whole table under s.mu made the
// sharing service, not the driver, bound BenchmarkTrueNASCreateDelete).
//
// Under s.mu a commit only takes a snapshot: a fresh slice of the table's
// row pointers, tagged with the table's next version. That is enough
// because a stored row is never changed in place (every change stores a
// new map: insert, replace, and the copy-on-write in rewriteGroups and
// portalDelete), so the snapshot's rows stay as they were while another
// call changes the table. After the handler releases s.mu, persist
// writes the newest snapshot of every table that has one newer than its
// file (group commit: whoever writes takes the changes the others made
// meanwhile, and versions reach the file in increasing order), as the
// rows that changed since the last version written, appended to the
// table's journal (journal.go).
//
// What the caller sees is unchanged: a method that changed a table
// answers only once its change is in the table's file (never fsynced, as
// before: the state must survive the simulator's process, not the
// machine), and a write that fails answers EFAULT "failed to save <ns>
// state". What changed: another call may see a change in memory before
// its file is written, as in the real middleware, whose queries do not
// wait for the writer's commit either.

// snapshot is a table's rows as of one version.
type snapshot struct {
	ver  uint64
	rows []middleware.Row
	ids  []int // the rows' ids (table.ids)
}

// persistence is the per-table state of the writes after the lock.
type persistence struct {
	latest atomic.Pointer[snapshot] // stored under Service.mu
	ver    uint64                   // under Service.mu: the last version taken
	saveMu sync.Mutex               // one writer of the file at a time
	saved  atomic.Uint64            // the version in the file
	enc    rowEncoder               // under saveMu

	// The journal (journal.go), under saveMu: its open file and size,
	// whether the table's file and journal are known to hold written
	// (false: the next write compacts), and the rows of version saved.
	jf         *os.File
	jsize      int64
	primed     bool
	written    []middleware.Row
	writtenIDs []int
}

// snap records the table's current rows as its next version. Callers
// hold s.mu.
func (t *table) snap() {
	t.p.ver++
	t.p.latest.Store(&snapshot{ver: t.p.ver, rows: slices.Clone(t.rows), ids: slices.Clone(t.ids)})
}

// persist writes every table whose newest snapshot is not yet in its
// file. Callers do not hold s.mu.
func (s *Service) persist() error {
	for _, ns := range s.order {
		t := s.t[ns]
		if err := s.persistTable(ns, t); err != nil {
			return err
		}
	}
	return nil
}

func (s *Service) persistTable(ns string, t *table) error {
	if sn := t.p.latest.Load(); sn == nil || sn.ver <= t.p.saved.Load() {
		return nil // nothing new: no lock taken
	}
	t.p.saveMu.Lock()
	defer t.p.saveMu.Unlock()
	sn := t.p.latest.Load() // the newest: it holds every change made so far
	if sn.ver <= t.p.saved.Load() {
		return nil // a writer that came first wrote it
	}
	if err := t.write(s.dir, sn.rows, sn.ids); err != nil {
		s.log.Error("state not saved", "namespace", ns, "err", err)
		return middleware.Errorf(middleware.EFAULT, "failed to save %s state: %v", ns, err)
	}
	t.p.saved.Store(sn.ver)
	return nil
}

// persisting wraps a method that changes tables: it answers once the
// changes are written. The handler's own error wins; a failed write
// fails a call that otherwise succeeded (as a failed save did when it
// ran under the lock).
func (s *Service) persisting(h middleware.Handler) middleware.Handler {
	if h == nil {
		return nil // the dispatcher's "method has no handler", as before
	}
	return func(c *middleware.Call, params []json.RawMessage) (any, error) {
		res, err := h(c, params)
		if perr := s.persist(); perr != nil && err == nil {
			return nil, perr
		}
		return res, err
	}
}
