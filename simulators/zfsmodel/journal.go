package zfsmodel

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
)

// The journal: how record changes reach the disk without the model's lock.
//
// Durability, before and now: the model never fsyncs (it is a simulator; a
// host crash may lose recent changes), but a change a command acknowledged
// survives a crash of the simulator's process, and whatever the process
// crashed in the middle of, the state Open finds is one the model passed
// through: records are applied in the order the mutations made them.
//
// Before, every change wrote its record file (json, write, rename) with
// m.mu held: under 16 callers that lock spent most of its time waiting on
// file-system calls. Now a mutation only appends the record's bytes to an
// in-memory queue (under m.mu, so queue order is mutation order); when the
// mutation releases m.mu (m.unlock), it waits until the queue up to its own
// entries is written to <StateDir>/journal in ONE write(2) per batch (group
// commit: whoever flushes takes everything queued meanwhile). A command
// still returns only once its changes are on disk; what changed is that
// other commands may see a change in memory before its journal write ends
// (a crash in that window loses a change nobody was told had succeeded).
//
// Each journal line is "P <relpath> <json>\n" (put a record) or
// "D <relpath>\n" (remove it); a last line without its newline is a torn
// write and is ignored. Open replays the journal onto the record files,
// then empties it; so does Close, and a flush once the journal passes
// journalCompactAt: the record files get each touched path's last value
// (one write per path, however often it changed) before the truncation, and
// a crash in between leaves the whole journal to replay, so no state is lost.
// A failed journal write is sticky: every later command fails with it,
// since memory is then ahead of the disk.
//
// A record removed before any compaction wrote its file has no file to
// remove: the journal knows which record files exist (listed at Open, then
// kept by its compactions), so a dataset created and destroyed within one
// journal costs the record files nothing. A driver's volumes churn like
// that; the removes of files that never were, and the writes of records
// that did not outlive the window, were a tenth of the ZFS simulator's CPU
// (issue 16). The window is journalCompactAt: larger, more short-lived
// records never reach a file, at the price of a longer replay at Open and
// the dirty records held in memory (both bounded by it).

const journalCompactAt = 4 << 20

type journalEntry struct {
	rel  string // path under StateDir
	data []byte // nil: remove
}

type journal struct {
	qmu    sync.Mutex // guards queue and queued
	queue  []journalEntry
	queued uint64 // sequence number of the last queued entry

	flushed atomic.Uint64 // the last entry written to the log

	fmu   sync.Mutex // serialises writes to the log; guards the fields below
	f     *os.File
	size  int64
	dirty map[string][]byte // last value per path since the last compaction (nil: removed)
	files map[string]bool   // the record files that exist (paths under StateDir)
	err   error             // sticky write failure
	bad   atomic.Bool       // err != nil, readable without fmu
	buf   bytes.Buffer
}

// enqueue records a change; callers hold m.mu for writing (or own the model
// exclusively, in Open).
func (m *Model) enqueue(rel string, data []byte) {
	j := &m.j
	j.qmu.Lock()
	j.queue = append(j.queue, journalEntry{rel: rel, data: data})
	j.queued++
	j.qmu.Unlock()
}

// unlock releases the write lock, then waits until this mutation's record
// changes are in the journal.
func (m *Model) unlock() {
	j := &m.j
	j.qmu.Lock()
	seq := j.queued
	j.qmu.Unlock()
	m.mu.Unlock()
	if j.flushed.Load() < seq {
		_ = m.flushJournal(seq)
	}
}

// journalErr is the sticky journal failure, if any; it waits for a flush
// only once one failed.
func (m *Model) journalErr() error {
	j := &m.j
	if !j.bad.Load() {
		return nil
	}
	j.fmu.Lock()
	defer j.fmu.Unlock()
	return j.err
}

// flushJournal writes every queued entry up to at least seq.
func (m *Model) flushJournal(seq uint64) error {
	j := &m.j
	j.fmu.Lock()
	defer j.fmu.Unlock()
	if j.err != nil || j.flushed.Load() >= seq {
		return j.err
	}
	if j.f == nil { // closed: nothing may change any more
		return errClosed
	}
	j.qmu.Lock()
	batch, last := j.queue, j.queued
	j.queue = nil
	j.qmu.Unlock()
	j.buf.Reset()
	for _, e := range batch {
		if e.data == nil {
			j.buf.WriteString("D ")
			j.buf.WriteString(e.rel)
		} else {
			j.buf.WriteString("P ")
			j.buf.WriteString(e.rel)
			j.buf.WriteByte(' ')
			j.buf.Write(e.data)
		}
		j.buf.WriteByte('\n')
		j.dirty[e.rel] = e.data
	}
	n, err := j.f.Write(j.buf.Bytes())
	j.size += int64(n)
	if err != nil {
		j.err = errIO("cannot write the model's journal", err)
		j.bad.Store(true)
		return j.err
	}
	j.flushed.Store(last)
	if j.size >= journalCompactAt {
		if j.err = m.compactLocked(); j.err != nil {
			j.bad.Store(true)
		}
	}
	return j.err
}

// compactLocked applies the dirty paths to the record files, then empties
// the journal (fmu held).
func (m *Model) compactLocked() error {
	j := &m.j
	for rel, data := range j.dirty {
		if data == nil && !j.files[rel] {
			continue // made and removed since the last compaction: no file
		}
		if err := applyRecord(m.dir, rel, data); err != nil {
			return errIO("cannot save '"+rel+"'", err)
		}
		if data == nil {
			delete(j.files, rel)
		} else {
			j.files[rel] = true
		}
	}
	if err := j.f.Truncate(0); err != nil {
		return errIO("cannot empty the model's journal", err)
	}
	j.size = 0
	clear(j.dirty)
	return nil
}

func applyRecord(dir, rel string, data []byte) error {
	path := filepath.Join(dir, filepath.FromSlash(rel))
	if data == nil {
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		return nil
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// openJournal replays what a previous run left in the journal onto the
// record files, empties it and opens it for appending.
func (m *Model) openJournal() error {
	path := filepath.Join(m.dir, "journal")
	if err := replayJournal(m.dir, path); err != nil {
		return fmt.Errorf("zfsmodel: replaying %s: %w", path, err)
	}
	files, err := recordFiles(m.dir)
	if err != nil {
		return fmt.Errorf("zfsmodel: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("zfsmodel: %w", err)
	}
	m.j.f, m.j.dirty, m.j.files = f, map[string][]byte{}, files
	return nil
}

// recordFiles lists the record files under dir, as journal paths: those
// of every directory a journal entry names (recordRel, writePool).
func recordFiles(dir string) (map[string]bool, error) {
	files := map[string]bool{}
	for _, sub := range []string{"meta", "pools"} {
		ents, err := os.ReadDir(filepath.Join(dir, sub))
		if err != nil {
			return nil, err
		}
		for _, e := range ents {
			files[sub+"/"+e.Name()] = true
		}
	}
	return files, nil
}

func replayJournal(dir, path string) error {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	last := map[string][]byte{}
	complete := bytes.LastIndexByte(b, '\n') + 1 // a torn last line is dropped
	sc := bufio.NewScanner(bytes.NewReader(b[:complete]))
	sc.Buffer(nil, complete+1)
	for n := 1; sc.Scan(); n++ {
		op, rest, _ := bytes.Cut(sc.Bytes(), []byte(" "))
		rel, data, _ := bytes.Cut(rest, []byte(" "))
		switch {
		case string(op) == "D" && len(rel) > 0:
			last[string(rel)] = nil
		case string(op) == "P" && len(rel) > 0 && len(data) > 0:
			last[string(rel)] = bytes.Clone(data)
		default:
			return fmt.Errorf("line %d: not a journal entry", n)
		}
	}
	for rel, data := range last {
		if err := applyRecord(dir, rel, data); err != nil {
			return err
		}
	}
	return nil
}

// closeJournal flushes, compacts and closes the journal (Close).
func (m *Model) closeJournal() error {
	j := &m.j
	j.qmu.Lock()
	seq := j.queued
	j.qmu.Unlock()
	if err := m.flushJournal(seq); err != nil {
		return err
	}
	j.fmu.Lock()
	defer j.fmu.Unlock()
	if j.f == nil {
		return nil
	}
	err := m.compactLocked()
	if cerr := j.f.Close(); err == nil && cerr != nil {
		err = cerr
	}
	j.f = nil
	return err
}
