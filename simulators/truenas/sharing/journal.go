package sharing

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/switchyard-csi/switchyard/simulators/truenas/middleware"
)

// A table's changes reach the disk as lines appended to its journal
// (<namespace>.journal beside <namespace>.json), not as a rewrite of the
// table's file: rewriting it (a temporary file, its write, close and
// rename, and the whole table assembled) for every share created or
// deleted was the sharing service's largest cost left (issue 16, fourth
// round: 13 % of the simulator's CPU in BenchmarkTrueNASCreateDelete).
//
// A line is "P <row json>\n" (the row with that id is now this one) or
// "D <id>\n" (it is gone). Both are idempotent, so replaying a journal
// over a table file that already holds some of its changes gives the same
// rows, which makes the compaction crash-safe: the table's file is
// rewritten (atomically, as before) and only then is the journal emptied.
// That happens at the first write after the service starts (which also
// folds in what a previous run journaled), once the journal passes
// journalCompactAt, and after a failed append (whose partial line would
// otherwise sit in front of later ones). A last line without its newline
// is a torn write of a process that died mid-append, and is ignored.
//
// What a table's files hold, together, is unchanged: the newest version
// written, never fsynced (the state must survive the simulator's
// process, not the machine).

// journalCompactAt bounds a journal: replaying it at start stays cheap,
// and a table of typical rows (~300 bytes) is rewritten once per few
// hundred changes instead of on every one. A variable for the tests.
var journalCompactAt int64 = 256 << 10

func (t *table) journalFile() string { return strings.TrimSuffix(t.file, ".json") + ".journal" }

// write brings the table's files from the rows last written to rows:
// appended journal lines, or a compaction. Callers hold t.p.saveMu.
func (t *table) write(dir string, rows []middleware.Row, ids []int) error {
	p := &t.p
	if !p.primed || p.jsize >= journalCompactAt {
		return t.compact(dir, rows, ids)
	}
	var buf bytes.Buffer
	if err := journalDiff(&buf, p.written, p.writtenIDs, rows, ids); err != nil {
		return err
	}
	if buf.Len() == 0 {
		p.written, p.writtenIDs = rows, ids
		return nil
	}
	if p.jf == nil {
		f, err := os.OpenFile(filepath.Join(dir, t.journalFile()), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		if err != nil {
			return err
		}
		p.jf = f
	}
	n, err := p.jf.Write(buf.Bytes())
	p.jsize += int64(n)
	if err != nil {
		p.primed = false // the next write compacts over the partial line
		return err
	}
	p.written, p.writtenIDs = rows, ids
	return nil
}

// compact rewrites the table's file with rows, then empties the journal.
func (t *table) compact(dir string, rows []middleware.Row, ids []int) error {
	p := &t.p
	b, err := p.enc.encode(rows)
	if err == nil {
		err = writeTable(dir, t.file, b)
	}
	if err != nil {
		return err
	}
	if p.jf != nil {
		err = p.jf.Truncate(0)
	} else if err = os.Remove(filepath.Join(dir, t.journalFile())); errors.Is(err, fs.ErrNotExist) {
		err = nil
	}
	if err != nil {
		p.primed = false
		return err
	}
	p.jsize, p.primed, p.written, p.writtenIDs = 0, true, rows, ids
	return nil
}

// closeJournal closes the journal's file (its contents are complete).
func (t *table) closeJournal() error {
	t.p.saveMu.Lock()
	defer t.p.saveMu.Unlock()
	if t.p.jf == nil {
		return nil
	}
	err := t.p.jf.Close()
	t.p.jf = nil
	t.p.primed = false // a write after this compacts and reopens
	return err
}

// journalDiff writes the lines that turn old into rows. Both are sorted
// by id (store.go), and oldIDs and ids are their ids (table.ids), so the
// walk reads no row's map; a row whose map is the same as before is
// unchanged, since stored rows are never changed in place.
func journalDiff(buf *bytes.Buffer, old []middleware.Row, oldIDs []int, rows []middleware.Row, ids []int) error {
	put := func(r middleware.Row) error {
		b, err := middleware.Encode(r) // json.Marshal's bytes
		if err != nil {
			return err
		}
		buf.WriteString("P ")
		buf.Write(b)
		buf.WriteByte('\n')
		return nil
	}
	del := func(id int) {
		buf.WriteString("D ")
		buf.WriteString(strconv.Itoa(id))
		buf.WriteByte('\n')
	}
	i, j := 0, 0
	for i < len(old) || j < len(rows) {
		switch {
		case j == len(rows):
			del(oldIDs[i])
			i++
		case i == len(old):
			if err := put(rows[j]); err != nil {
				return err
			}
			j++
		default:
			a, b := oldIDs[i], ids[j]
			switch {
			case a < b:
				del(a)
				i++
			case a > b:
				if err := put(rows[j]); err != nil {
					return err
				}
				j++
			default:
				if !sameMap(old[i], rows[j]) {
					if err := put(rows[j]); err != nil {
						return err
					}
				}
				i, j = i+1, j+1
			}
		}
	}
	return nil
}

// replayJournal applies the table's journal, if there is one, to the rows
// loaded from its file.
func (t *table) replayJournal(dir string) error {
	path := filepath.Join(dir, t.journalFile())
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	complete := bytes.LastIndexByte(b, '\n') + 1 // a torn last line is dropped
	sc := bufio.NewScanner(bytes.NewReader(b[:complete]))
	sc.Buffer(nil, complete+1)
	for n := 1; sc.Scan(); n++ {
		line := sc.Bytes()
		bad := func(why string) error { return fmt.Errorf("%s line %d: %s", path, n, why) }
		switch {
		case bytes.HasPrefix(line, []byte("P ")):
			var r middleware.Row
			if err := json.Unmarshal(line[2:], &r); err != nil {
				return bad(err.Error())
			}
			if _, ok := r["id"].(float64); !ok {
				return bad("a row without a numeric id")
			}
			t.put(r)
		case bytes.HasPrefix(line, []byte("D ")):
			id, err := strconv.Atoi(string(line[2:]))
			if err != nil {
				return bad("not an id: " + string(line[2:]))
			}
			t.remove(id)
		default:
			return bad("neither P nor D")
		}
	}
	return sc.Err()
}
