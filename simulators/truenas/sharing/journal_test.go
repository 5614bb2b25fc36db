package sharing

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/switchyard-csi/switchyard/simulators/truenas/middleware"
)

// loaded is what a restarted service reads for the table named file.
func loaded(t *testing.T, dir, file string) []middleware.Row {
	t.Helper()
	fresh := &table{file: file}
	if err := fresh.load(dir); err != nil {
		t.Fatal(err)
	}
	return fresh.rows
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if os.IsNotExist(err) {
		return -1
	}
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// After every write, a restart reads exactly the rows written, whether the
// change went to the journal or compacted it, over random inserts,
// replacements (new maps, same id) and deletes; a change goes to the
// journal, not to the table's file; a compaction empties the journal.
func TestJournalReplaysToTheRowsWritten(t *testing.T) {
	defer func(n int64) { journalCompactAt = n }(journalCompactAt)
	journalCompactAt = 4 << 10
	dir := t.TempDir()
	tb := &table{file: "sharing.nfs.json", pathKey: "path"}
	rng := rand.New(rand.NewPCG(1, 2))
	journal := filepath.Join(dir, tb.journalFile())
	appended, compacted := 0, 0
	for step := range 600 {
		switch n := rng.IntN(10); {
		case n < 4 || len(tb.rows) == 0:
			tb.put(normalize(middleware.Row{"id": tb.nextID(), "path": "/mnt/tank/" + itoa(step), "hosts": []any{"h" + itoa(step)}}))
		case n < 7:
			r := tb.rows[rng.IntN(len(tb.rows))]
			tb.put(normalize(middleware.Row{"id": r["id"], "path": "/mnt/tank/changed" + itoa(step), "enabled": step%2 == 0}))
		default:
			tb.remove(intOf(tb.rows[rng.IntN(len(tb.rows))]["id"]))
		}
		checkIndex(t, tb)
		rows := slices.Clone(tb.rows)
		before, jbefore := fileSize(t, filepath.Join(dir, tb.file)), fileSize(t, journal)
		tb.p.saveMu.Lock()
		err := tb.write(dir, rows, slices.Clone(tb.ids))
		tb.p.saveMu.Unlock()
		if err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		switch after := fileSize(t, journal); {
		case after > jbefore && jbefore >= 0:
			appended++
			if fileSize(t, filepath.Join(dir, tb.file)) != before {
				t.Fatalf("step %d: the table's file was rewritten with the journal appended", step)
			}
		case after <= 0:
			compacted++
		}
		got := loaded(t, dir, tb.file)
		if len(got) == 0 && len(rows) == 0 {
			continue
		}
		if !reflect.DeepEqual(got, rows) {
			t.Fatalf("step %d: a restart reads\n%v\nwant\n%v", step, got, rows)
		}
	}
	if appended < 500 || compacted < 3 {
		t.Fatalf("%d appends and %d compactions in 600 changes", appended, compacted)
	}
	if err := tb.closeJournal(); err != nil {
		t.Fatal(err)
	}
}

// Replaying a journal over a table file that already holds its changes
// (a compaction cut short after the rename) gives the same rows; a torn
// last line is dropped; a damaged line is an error naming file and line.
func TestJournalReplay(t *testing.T) {
	dir := t.TempDir()
	tb := &table{file: "iscsi.target.json"}
	write := func(rows []middleware.Row) {
		tb.p.saveMu.Lock()
		defer tb.p.saveMu.Unlock()
		if err := tb.write(dir, rows, idsOf(rows)); err != nil {
			t.Fatal(err)
		}
	}
	row := func(id int, name string) middleware.Row {
		return normalize(middleware.Row{"id": id, "name": name})
	}
	a := row(1, "a")
	write([]middleware.Row{a})              // compacts: the first write
	write([]middleware.Row{a, row(2, "b")}) // a is the same map: unchanged
	write([]middleware.Row{row(2, "b2"), row(3, "c")})
	want := []middleware.Row{row(2, "b2"), row(3, "c")}
	journal := filepath.Join(dir, tb.journalFile())
	j, err := os.ReadFile(journal)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(j); got != "P {\"id\":2,\"name\":\"b\"}\nD 1\nP {\"id\":2,\"name\":\"b2\"}\nP {\"id\":3,\"name\":\"c\"}\n" {
		t.Fatalf("journal:\n%s", got)
	}
	// the compaction's rename happened, the truncation did not
	b, _ := tb.p.enc.encode(want)
	if err := writeTable(dir, tb.file, b); err != nil {
		t.Fatal(err)
	}
	if got := loaded(t, dir, tb.file); !reflect.DeepEqual(got, want) {
		t.Fatalf("replayed over the compacted file: %v", got)
	}
	if err := os.WriteFile(journal, append(j, []byte(`P {"id":4,"na`)...), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := loaded(t, dir, tb.file); !reflect.DeepEqual(got, want) {
		t.Fatalf("with a torn last line: %v", got)
	}
	if err := os.WriteFile(journal, append(j, []byte("X 4\n")...), 0o644); err != nil {
		t.Fatal(err)
	}
	err = (&table{file: tb.file}).load(dir)
	if err == nil || !strings.Contains(err.Error(), "iscsi.target.journal line 5") {
		t.Fatalf("a damaged line: %v", err)
	}
	tb.closeJournal()
}

// A restarted service (Register on the same directory) serves what the
// journal holds, and its first change folds the journal into the file.
func TestRestartReadsTheJournal(t *testing.T) {
	e := newEnv(t, "25.10")
	a := e.must("sharing.nfs.create", map[string]any{"path": "/mnt/tank/a"})
	e.must("sharing.nfs.create", map[string]any{"path": "/mnt/tank/b"})
	if _, err := e.call("sharing.nfs.delete", id(a)); err != nil {
		t.Fatal(err)
	}
	journal := filepath.Join(e.state, "sharing.nfs.journal")
	if fileSize(t, journal) <= 0 {
		t.Fatal("the changes after the first are not in the journal")
	}
	before := e.list("sharing.nfs.query")
	e.s.Close()
	e.register()
	if after := e.list("sharing.nfs.query"); !reflect.DeepEqual(after, before) {
		t.Fatalf("after a restart: %v, want %v", after, before)
	}
	e.must("sharing.nfs.create", map[string]any{"path": "/mnt/tank/a/child"})
	if n := fileSize(t, journal); n > 0 {
		t.Fatalf("the journal has %d bytes after the restart's first write; want it folded into the file", n)
	}
	e.s.Close()
}

// idsOf is the rows' ids, as table.ids keeps them.
func idsOf(rows []middleware.Row) []int {
	ids := make([]int, len(rows))
	for i, r := range rows {
		ids[i] = intOf(r["id"])
	}
	return ids
}
