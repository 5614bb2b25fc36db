package zfsmodel

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// A process that dies without Close leaves its changes in the journal: a
// new Open (here on the same directory while the first model is abandoned,
// as after a crash) must find every change a command acknowledged.
func TestJournalSurvivesCrash(t *testing.T) {
	dir := t.TempDir()
	opts := Options{StateDir: dir, Pools: []PoolSpec{{Name: "tank", Size: 1 << 30}}, RescanInterval: -1}
	m, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range []string{"zfs create -p tank/k8s/a", "zfs create -V 8M tank/k8s/v", "zfs set org:x=1 tank/k8s/a",
		"zfs snapshot tank/k8s/a@s", "zfs clone tank/k8s/a@s tank/k8s/c", "zfs create tank/gone", "zfs destroy tank/gone",
		"zfs rename tank/k8s/v tank/k8s/v2"} {
		must(t, m, l)
	}
	listing := must(t, m, "zfs list -H -t all -o name,origin,guid,org:x")
	if b, _ := os.ReadFile(filepath.Join(dir, "journal")); !strings.Contains(string(b), "P meta/") {
		t.Fatalf("the changes did not go through the journal: %q", b)
	}
	// No Close: the "crashed" model's journal is all there is.
	m2, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	if got := must(t, m2, "zfs list -H -t all -o name,origin,guid,org:x"); got != listing {
		t.Errorf("after a crash:\n%s\nwant:\n%s", got, listing)
	}
	if err := m2.Close(); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(dir, "journal")); err != nil || fi.Size() != 0 {
		t.Errorf("Close left the journal unapplied: %v %v", fi, err)
	}
	m.closed = true // the abandoned model must not write again
}

// A torn last line (a write cut short) is dropped; the entries before it count.
func TestJournalTornTail(t *testing.T) {
	dir := t.TempDir()
	opts := Options{StateDir: dir, Pools: []PoolSpec{{Name: "tank", Size: 1 << 30}}, RescanInterval: -1}
	m, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	must(t, m, "zfs create tank/a")
	f, err := os.OpenFile(filepath.Join(dir, "journal"), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`P meta/00000000000000ff.json {"guid":255,"par`)
	f.Close()
	m2, err := Open(opts)
	if err != nil {
		t.Fatalf("a torn tail broke Open: %v", err)
	}
	defer m2.Close()
	if got := must(t, m2, "zfs list -H -o name -r tank"); got != "tank\ntank/a\n" {
		t.Errorf("after a torn write: %q", got)
	}
	m.closed = true
}

// Compaction under concurrent changes keeps every change: many callers
// create and destroy past the compaction threshold, then a crash and Open.
func TestJournalCompactionUnderLoad(t *testing.T) {
	dir := t.TempDir()
	opts := Options{StateDir: dir, Pools: []PoolSpec{{Name: "tank", Size: 1 << 40}}, RescanInterval: -1}
	m, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	must(t, m, "zfs create tank/k")
	long := "org:pad=" + strings.Repeat("x", 4000)
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < 40; i++ {
				name := "tank/k/w" + string(rune('a'+w)) + "-" + string(rune('a'+i%26)) + string(rune('a'+i/26))
				if r := sh(m, "zfs create -o "+long+" "+name); r.code != 0 {
					t.Errorf("%s: %+v", name, r)
					return
				}
				if i%2 == 0 {
					if r := sh(m, "zfs destroy "+name); r.code != 0 {
						t.Errorf("%s: %+v", name, r)
						return
					}
				}
			}
		}(w)
	}
	wg.Wait()
	listing := must(t, m, "zfs list -H -o name,guid -r tank")
	m2, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer m2.Close()
	if got := must(t, m2, "zfs list -H -o name,guid -r tank"); got != listing {
		t.Errorf("after compactions and a crash:\n%s\nwant:\n%s", got, listing)
	}
	if n := strings.Count(listing, "\n"); n != 2+8*20 {
		t.Errorf("%d datasets, want %d", n, 2+8*20)
	}
	m.closed = true
}

// The journal skips removing record files that were never written; a
// record file that does exist, written by a compaction of this run or
// found at Open, must still go when its dataset does, or the next Open
// brings the dataset back.
func TestRecordFilesFollowCompactions(t *testing.T) {
	dir := t.TempDir()
	opts := Options{StateDir: dir, Pools: []PoolSpec{{Name: "tank", Size: 1 << 30}}, RescanInterval: -1}
	open := func() *Model {
		t.Helper()
		m, err := Open(opts)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	compact := func(m *Model) {
		t.Helper()
		m.j.fmu.Lock()
		defer m.j.fmu.Unlock()
		if err := m.compactLocked(); err != nil {
			t.Fatal(err)
		}
	}
	recordFile := func(m *Model, name string) string {
		t.Helper()
		guid, err := strconv.ParseUint(strings.TrimSpace(must(t, m, "zfs get -Hp -o value guid "+name)), 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		return m.recordPath(guid)
	}
	exists := func(path string) bool {
		_, err := os.Stat(path)
		return err == nil
	}

	m := open()
	must(t, m, "zfs create tank/a")
	a := recordFile(m, "tank/a")
	compact(m)
	if !exists(a) {
		t.Fatalf("a compaction did not write %s", a)
	}
	must(t, m, "zfs destroy tank/a")
	compact(m)
	if exists(a) {
		t.Errorf("the record of a destroyed dataset, written by this run's compaction, stayed: %s", a)
	}
	must(t, m, "zfs create tank/b")
	b := recordFile(m, "tank/b")
	must(t, m, "zfs create tank/c")
	c := recordFile(m, "tank/c")
	must(t, m, "zfs destroy tank/c") // within one window: never a file
	if exists(c) {
		t.Errorf("a record written before any compaction: %s", c)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if !exists(b) || exists(c) {
		t.Fatalf("after Close: %s exists %v (want true), %s exists %v (want false)", b, exists(b), c, exists(c))
	}

	m = open() // b's file was found at Open, not written by this run
	must(t, m, "zfs destroy tank/b")
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if exists(b) {
		t.Errorf("the record of a destroyed dataset, found at Open, stayed: %s", b)
	}
	m = open()
	defer m.Close()
	if got := must(t, m, "zfs list -H -o name -r tank"); got != "tank\n" {
		t.Errorf("after the restarts: %q, want only the pool's root", got)
	}
}
