package infinia

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// The tree is persisted as a snapshot (state.json) and a journal
// (state.journal) of the changes since: one line per REST change, holding
// the whole of every volume and subsystem the change touched (or null for
// one it removed) and the volume counter. Encoding the whole tree per
// change cost time in proportion to the volumes that exist (half the
// simulator's CPU with 100 volumes, and quadratic over a run that makes
// them); a line costs what the change touched.
//
// The lines are idempotent (whole objects, not deltas), so replaying a
// journal over a snapshot that already holds its changes changes nothing:
// a compaction writes the snapshot atomically, then empties the journal,
// and a crash between the two is harmless. A torn last line (the process
// died inside its write) is dropped: its change was never answered.
//
// Durability: the tree must survive the simulator's process, not the
// machine (see store.save), so an append is one write(2) and no fsync.

// journalName is the journal's file in the state directory.
const journalName = "state.journal"

// compactAfter is the journal size past which a change rewrites the
// snapshot instead (so that a restart replays a bounded journal).
const compactAfter = 256 << 10

// entry is one line of the journal.
type entry struct {
	Next       int        `json:"next"` // state.NextVolumeID after the change
	Subsystems []objEntry `json:"subsystems,omitempty"`
	Volumes    []objEntry `json:"volumes,omitempty"`
}

// objEntry is a volume (D set) or a subsystem by path and its new value;
// Obj is null when the change removed it.
type objEntry struct {
	C    string          `json:"c"`
	T    string          `json:"t"`
	S    string          `json:"s"`
	D    string          `json:"d,omitempty"`
	Name string          `json:"name"`
	Obj  json.RawMessage `json:"obj"`
}

func (s store) journalPath() string { return filepath.Join(s.dir, journalName) }

// journal is the open journal file and its size.
type journal struct {
	f    *os.File
	size int64
	// compact is set when the journal may not match the tree (an append
	// failed): the next change rewrites the snapshot.
	compact bool
}

// openJournal opens the journal for appending, empty: New compacts what
// it replayed first.
func (s store) openJournal() (*journal, error) {
	f, err := os.OpenFile(s.journalPath(), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("infinia: opening the journal: %w", err)
	}
	if err := f.Truncate(0); err != nil {
		f.Close()
		return nil, fmt.Errorf("infinia: emptying the journal: %w", err)
	}
	return &journal{f: f}, nil
}

// append writes one line; on a failure it cuts the journal back to where
// it was (so that no torn line is followed by a good one) and, if even
// that fails, asks for a compaction.
func (j *journal) append(line []byte) error {
	n, err := j.f.Write(line)
	if err == nil {
		j.size += int64(n)
		return nil
	}
	if terr := j.f.Truncate(j.size); terr != nil {
		j.compact = true
	}
	return fmt.Errorf("infinia: appending to the journal: %w", err)
}

// reset empties the journal after the snapshot was rewritten.
func (j *journal) reset() error {
	if err := j.f.Truncate(0); err != nil {
		j.compact = true
		return fmt.Errorf("infinia: emptying the journal: %w", err)
	}
	j.size, j.compact = 0, false
	return nil
}

func (j *journal) close() error { return j.f.Close() }

// replay applies the journal in the state directory to st; ok is false
// when there is no journal or it is empty.
func (s store) replay(st *state) (ok bool, err error) {
	raw, err := os.ReadFile(s.journalPath())
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("infinia: reading the journal: %w", err)
	}
	for n := 1; len(raw) > 0; n++ {
		line, rest, whole := bytes.Cut(raw, []byte{'\n'})
		if !whole {
			break // torn: the process died while writing it
		}
		raw = rest
		var e entry
		if err := json.Unmarshal(line, &e); err != nil {
			return false, fmt.Errorf("infinia: %s line %d is damaged: %w", s.journalPath(), n, err)
		}
		if err := st.apply(e); err != nil {
			return false, fmt.Errorf("infinia: %s line %d: %w", s.journalPath(), n, err)
		}
		ok = true
	}
	return ok, nil
}

// apply puts (or removes) the entry's objects into the tree.
func (st *state) apply(e entry) error {
	st.NextVolumeID = e.Next
	for _, o := range e.Subsystems {
		sub := st.subtenant(o.C, o.T, o.S)
		if sub == nil {
			return fmt.Errorf("subsystem %s of an unknown subtenant %s/%s/%s", o.Name, o.C, o.T, o.S)
		}
		if err := putRaw(&sub.Subsystems, o.Name, o.Obj); err != nil {
			return fmt.Errorf("subsystem %s: %w", o.Name, err)
		}
	}
	for _, o := range e.Volumes {
		ds := st.dataset(o.C, o.T, o.S, o.D)
		if ds == nil {
			return fmt.Errorf("volume %s of an unknown dataset %s/%s/%s/%s", o.Name, o.C, o.T, o.S, o.D)
		}
		if err := putRaw(&ds.Volumes, o.Name, o.Obj); err != nil {
			return fmt.Errorf("volume %s: %w", o.Name, err)
		}
	}
	return nil
}

// putRaw sets (*m)[name] to the object raw encodes, or removes it when
// raw is null.
func putRaw[V any](m *map[string]*V, name string, raw json.RawMessage) error {
	if isNull(raw) {
		delete(*m, name)
		return nil
	}
	v := new(V)
	if err := json.Unmarshal(raw, v); err != nil {
		return err
	}
	if *m == nil {
		*m = map[string]*V{}
	}
	(*m)[name] = v
	return nil
}

func isNull(raw json.RawMessage) bool { return len(raw) == 0 || string(raw) == "null" }

// encodeObj is the journal form of a volume or subsystem (nil: null).
func encodeObj[T any](p *T) (json.RawMessage, error) {
	if p == nil {
		return json.RawMessage("null"), nil
	}
	return json.Marshal(p)
}
