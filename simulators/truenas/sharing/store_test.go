package sharing

import (
	"math/rand/v2"
	"path"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/switchyard-csi/switchyard/simulators/truenas/middleware"
)

// checkIndex fails unless the table's ids and paths are its rows' ids
// (sorted, distinct) and cleaned path fields.
func checkIndex(t *testing.T, tb *table) {
	t.Helper()
	if len(tb.ids) != len(tb.rows) {
		t.Fatalf("%d ids for %d rows", len(tb.ids), len(tb.rows))
	}
	for i, r := range tb.rows {
		if tb.ids[i] != intOf(r["id"]) {
			t.Fatalf("ids[%d] = %d, row id %v", i, tb.ids[i], r["id"])
		}
		if i > 0 && tb.ids[i-1] >= tb.ids[i] {
			t.Fatalf("ids not sorted and distinct at %d: %v", i, tb.ids)
		}
		if tb.pathKey != "" && tb.paths[i] != path.Clean(strOf(r[tb.pathKey])) {
			t.Fatalf("paths[%d] = %q, row's %s %v", i, tb.paths[i], tb.pathKey, r[tb.pathKey])
		}
	}
	if tb.pathKey == "" && tb.paths != nil {
		t.Fatalf("a table without a pathKey keeps paths %v", tb.paths)
	}
}

// refTable is the table as it was before the index: a linear list kept
// sorted by a stable sort after every insert.
type refTable struct{ rows []middleware.Row }

func (t *refTable) nextID() int {
	n := 0
	for _, r := range t.rows {
		if id := intOf(r["id"]); id > n {
			n = id
		}
	}
	return n + 1
}

func (t *refTable) get(id int) middleware.Row {
	for _, r := range t.rows {
		if intOf(r["id"]) == id {
			return r
		}
	}
	return nil
}

func (t *refTable) put(r middleware.Row) {
	id := intOf(r["id"])
	for i, old := range t.rows {
		if intOf(old["id"]) == id {
			t.rows[i] = r
			return
		}
	}
	t.rows = append(t.rows, r)
	sort.SliceStable(t.rows, func(i, j int) bool { return intOf(t.rows[i]["id"]) < intOf(t.rows[j]["id"]) })
}

func (t *refTable) remove(id int) bool {
	for i, r := range t.rows {
		if intOf(r["id"]) == id {
			t.rows = append(t.rows[:i], t.rows[i+1:]...)
			return true
		}
	}
	return false
}

// oldUnder is hook.go's test before the tables kept cleaned paths.
func oldUnder(p, root string) bool {
	p = path.Clean(p)
	return p == root || strings.HasPrefix(p, root+"/")
}

var testPaths = []string{"", ".", "/", "/mnt", "/mnt/tank", "/mnt/tank/", "/mnt/tank/a", "/mnt/tank//a/", "/mnt/tank/a/../b",
	"/mnt/tank/a-b", "/mnt/tank/ab", "/mnt/tank/a/child", "/mnt/tank/./a/child/", "zvol/tank/vol", "zvol/tank/vol/x",
	"zvol//tank/vol", "zvol/tank/vol2", "tank/a", "tank/a/b", "tank", "/mnt/tank/a/..", "a/.."}

func randomPath(rng *rand.Rand) any {
	if i := rng.IntN(len(testPaths) + 1); i < len(testPaths) {
		return testPaths[i]
	}
	return 7.0 // not a string: strOf reads ""
}

// The indexed table answers get, nextID, remove, find and findPath as the
// linear one did, over random puts (new rows, replacements, rows without
// an id or with id 0) and removes; ids and paths stay the rows'.
func TestTableIsTheLinearTable(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, key := range []string{"", "path", "dataset"} {
		tb, ref := &table{file: "x.json", pathKey: key}, &refTable{}
		for step := range 3000 {
			switch n := rng.IntN(10); {
			case n < 5:
				r := normalize(middleware.Row{"id": rng.IntN(60), "path": randomPath(rng), "dataset": randomPath(rng)})
				if rng.IntN(20) == 0 {
					delete(r, "id")
				}
				tb.put(r)
				ref.put(r)
			case n < 7:
				r := normalize(middleware.Row{"id": tb.nextID(), "path": randomPath(rng)})
				tb.put(r)
				ref.put(r)
			default:
				id := rng.IntN(62)
				if got, want := tb.remove(id), ref.remove(id); got != want {
					t.Fatalf("%s step %d: remove(%d) = %v, want %v", key, step, id, got, want)
				}
			}
			checkIndex(t, tb)
			if !slices.EqualFunc(tb.rows, ref.rows, sameMap) {
				t.Fatalf("%s step %d: rows differ:\n%v\n%v", key, step, tb.rows, ref.rows)
			}
			if got, want := tb.nextID(), ref.nextID(); got != want {
				t.Fatalf("%s step %d: nextID %d, want %d", key, step, got, want)
			}
			id := rng.IntN(62)
			if got, want := tb.get(id), ref.get(id); !sameMap(got, want) {
				t.Fatalf("%s step %d: get(%d) = %v, want %v", key, step, id, got, want)
			}
			if key == "" {
				continue
			}
			root := []string{"/mnt/tank/a", "/mnt/tank", "zvol/tank/vol", "tank/a", "/mnt/tank/", "/"}[rng.IntN(6)]
			got := tb.findPath(func(clean string, _ middleware.Row) bool { return clean != "." && under(clean, root) })
			want := tb.find(func(r middleware.Row) bool { p := strOf(r[key]); return p != "" && oldUnder(p, root) })
			if !slices.EqualFunc(got, want, sameMap) {
				t.Fatalf("%s step %d: under %q: %v, want %v", key, step, root, got, want)
			}
			p := strOf(randomPath(rng))
			cp := path.Clean(p)
			got = tb.findPath(func(clean string, _ middleware.Row) bool { return clean == cp })
			want = tb.find(func(r middleware.Row) bool { return path.Clean(strOf(r[key])) == path.Clean(p) })
			if !slices.EqualFunc(got, want, sameMap) {
				t.Fatalf("%s step %d: same path as %q: %v, want %v", key, step, p, got, want)
			}
		}
	}
}

// under on cleaned paths is the old under on raw ones, for every pair of
// test paths as path and root (roots as datasetDeleted builds them).
func TestUnderIsTheOldUnder(t *testing.T) {
	for _, p := range testPaths {
		for _, root := range []string{"/mnt/tank/a", "/mnt/tank", "zvol/tank/vol", "tank/a", "tank", "/mnt/tank/", "/", "/mnt/tank/a-b"} {
			if got, want := under(path.Clean(p), root), oldUnder(p, root); got != want {
				t.Errorf("under(Clean(%q), %q) = %v, want %v", p, root, got, want)
			}
		}
	}
}

// A rewrite through set keeps paths; findPath refuses a table without them.
func TestTableSetAndFindPathWithoutPaths(t *testing.T) {
	tb := &table{file: "x.json", pathKey: "path"}
	tb.put(normalize(middleware.Row{"id": 1, "path": "/a/"}))
	tb.set(0, normalize(middleware.Row{"id": 1, "path": "/b//c"}))
	checkIndex(t, tb)
	if !reflect.DeepEqual(tb.paths, []string{"/b/c"}) {
		t.Fatalf("paths %v", tb.paths)
	}
	defer func() {
		if recover() == nil {
			t.Fatal("findPath on a table without a pathKey did not panic")
		}
	}()
	(&table{file: "y.json"}).findPath(func(string, middleware.Row) bool { return true })
}
