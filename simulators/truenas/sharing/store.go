package sharing

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"

	"github.com/switchyard-csi/switchyard/simulators/truenas/middleware"
)

// table is one namespace's objects (one sqlite table in the real
// middleware), kept sorted by id and written to <StateDir>/<file> and
// its journal after every change (persist.go, journal.go). A stored row is never changed in place:
// a change stores a new map, so a snapshot can be written unlocked.
//
// ids (and, for a table with a pathKey, paths) run parallel to rows: each
// row's id, and the path.Clean of its pathKey field. Every create, delete
// and dataset delete looked up ids and compared paths over the whole
// table, reading each row's map and cleaning each path again: with 1,500
// shares that was a fifth of the simulator's CPU in
// BenchmarkTrueNASCreateDelete (issue 16, sixth round). With ids sorted,
// get, put and remove are binary searches and nextID is the last id + 1.
type table struct {
	file    string
	pathKey string // the field whose cleaned value paths holds ("": none)
	rows    []middleware.Row
	ids     []int
	paths   []string
	p       persistence
}

// pathKeys are the tables' fields that hold the path of what they export
// or act on: what a dataset delete and a share's validation compare.
var pathKeys = map[string]string{
	nsNFS: "path", nsSMB: "path", nsExtent: "path", nsNamespace: "device_path", nsSnapTask: "dataset",
}

// nextID is max(id)+1: sqlite's INTEGER PRIMARY KEY without AUTOINCREMENT
// hands out the highest id again once its row is deleted, and drivers
// that store ids must cope with that. Rows are sorted by id, and a table
// without rows starts at 1 (as max over none, 0, + 1).
func (t *table) nextID() int {
	if len(t.ids) == 0 || t.ids[len(t.ids)-1] < 0 {
		return 1
	}
	return t.ids[len(t.ids)-1] + 1
}

// index is where id is or would be inserted in rows.
func (t *table) index(id int) (int, bool) {
	return slices.BinarySearch(t.ids, id)
}

func (t *table) get(id int) middleware.Row {
	if i, ok := t.index(id); ok {
		return t.rows[i]
	}
	return nil
}

// put inserts or replaces the row with r's id.
func (t *table) put(r middleware.Row) {
	id := intOf(r["id"])
	i, ok := t.index(id)
	if ok {
		t.rows[i] = r
		if t.pathKey != "" {
			t.paths[i] = cleanPath(r[t.pathKey])
		}
		return
	}
	t.rows = slices.Insert(t.rows, i, r)
	t.ids = slices.Insert(t.ids, i, id)
	if t.pathKey != "" {
		t.paths = slices.Insert(t.paths, i, cleanPath(r[t.pathKey]))
	}
}

// set replaces the row at index i with r, a row of the same id (a
// rewrite of every row, such as rewriteGroups). Callers hold s.mu.
func (t *table) set(i int, r middleware.Row) {
	t.rows[i] = r
	if t.pathKey != "" {
		t.paths[i] = cleanPath(r[t.pathKey])
	}
}

func (t *table) remove(id int) bool { // reports whether id was there
	i, ok := t.index(id)
	if !ok {
		return false
	}
	t.rows = slices.Delete(t.rows, i, i+1)
	t.ids = slices.Delete(t.ids, i, i+1)
	if t.pathKey != "" {
		t.paths = slices.Delete(t.paths, i, i+1)
	}
	return true
}

// find returns the rows for which f is true.
func (t *table) find(f func(middleware.Row) bool) []middleware.Row {
	var out []middleware.Row
	for _, r := range t.rows {
		if f(r) {
			out = append(out, r)
		}
	}
	return out
}

// findPath returns the rows for which f, given the row's cleaned path
// (path.Clean of its pathKey field, "." when absent), is true. The table
// must have a pathKey.
func (t *table) findPath(f func(clean string, r middleware.Row) bool) []middleware.Row {
	if t.pathKey == "" {
		panic("sharing: findPath on " + t.file + ", which keeps no paths")
	}
	var out []middleware.Row
	for i, r := range t.rows {
		if f(t.paths[i], r) {
			out = append(out, r)
		}
	}
	return out
}

// cleanPath is path.Clean of a row's path field ("" when it is not a
// string, as strOf reads it).
func cleanPath(v any) string { return path.Clean(strOf(v)) }

// load reads the table's file, then replays its journal (journal.go); a
// missing file is an empty table.
func (t *table) load(dir string) error {
	b, err := os.ReadFile(filepath.Join(dir, t.file))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var rows []middleware.Row
	if err := json.Unmarshal(b, &rows); err != nil {
		return fmt.Errorf("%s: %v", filepath.Join(dir, t.file), err)
	}
	t.rows, t.ids, t.paths = nil, nil, nil
	for _, r := range rows {
		t.put(r)
	}
	return t.replayJournal(dir)
}

// save writes the table atomically: a reader (or a crashed or restarted
// simulator) sees the old file or the new one, never half of one. It is
// not fsynced: the state must survive the simulator's process, not the
// machine, and an fsync under the service's lock per change serialised
// every share create and delete behind the disk (issue 16: the simulator,
// not the driver, bounded BenchmarkTrueNASCreateDelete).
func (t *table) save(dir string) error {
	rows := t.rows
	if rows == nil {
		rows = []middleware.Row{}
	}
	b, err := json.MarshalIndent(rows, "", " ")
	if err != nil {
		return err
	}
	return writeTable(dir, t.file, b)
}

// writeTable writes a table's JSON to dir/file atomically (see save).
func writeTable(dir, file string, b []byte) error {
	f, err := os.CreateTemp(dir, "."+file+".*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, werr := f.Write(append(b, '\n'))
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, filepath.Join(dir, file)); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// normalize gives r the shape it has after a save and load (numbers as
// float64, lists as []any), so that fresh and reloaded rows compare and
// filter alike.
func normalize(r middleware.Row) middleware.Row {
	b, err := middleware.Encode(r) // json.Marshal's bytes
	if err != nil {
		panic(fmt.Sprintf("sharing: row does not marshal: %v", err)) // rows are built from JSON values only
	}
	if out, ok := middleware.ScanObject(b); ok {
		return out // Unmarshal's row, in one scan (issue 16, eighth round)
	}
	var out middleware.Row
	if err := json.Unmarshal(b, &out); err != nil {
		panic(fmt.Sprintf("sharing: row does not unmarshal: %v", err))
	}
	return out
}

// clone deep-copies a row so callers cannot change the stored one. The
// result has normalize's shape: a row of JSON values (what load and
// normalize store) is copied directly, anything else (a row built in Go
// with ints or typed lists, such as a seeded config row) takes the JSON
// round trip, which was the only way before and cost a tenth of
// BenchmarkTrueNASCreateDelete's CPU.
func clone(r middleware.Row) middleware.Row {
	if r == nil {
		return nil
	}
	if c, ok := copyJSONValue(r); ok {
		return c.(map[string]any)
	}
	return normalize(r)
}

// copyJSONValue deep-copies a value made only of what json.Unmarshal
// produces into an any; ok is false when it meets anything else.
func copyJSONValue(v any) (any, bool) {
	switch x := v.(type) {
	case nil, bool, float64, string:
		return x, true
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			c, ok := copyJSONValue(e)
			if !ok {
				return nil, false
			}
			out[i] = c
		}
		return out, true
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			c, ok := copyJSONValue(e)
			if !ok {
				return nil, false
			}
			out[k] = c
		}
		return out, true
	}
	return nil, false
}

// intOf reads a number from a row (float64 after JSON, int when built in Go).
func intOf(v any) int {
	switch n := v.(type) {
	case float64:
		return int(n)
	case int:
		return n
	case int64:
		return int(n)
	case json.Number:
		i, _ := n.Int64()
		return int(i)
	}
	return 0
}

// strOf reads a string from a row ("" when absent or null).
func strOf(v any) string {
	s, _ := v.(string)
	return s
}

// strsOf reads a list of strings from a row.
func strsOf(v any) []string {
	l, _ := v.([]any)
	out := make([]string, 0, len(l))
	for _, x := range l {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// objs reads a list of objects from a row, skipping anything else.
func objs(v any) []map[string]any {
	l, _ := v.([]any)
	out := make([]map[string]any, 0, len(l))
	for _, x := range l {
		if m, ok := x.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}
