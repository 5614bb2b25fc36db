package dirvol

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"

	"github.com/switchyard-csi/switchyard/driver/dirvol/dirvoltest"
)

// countingRead lists dir like readDirs and counts the reads.
func countingRead(t *testing.T, dir string, n *int) func() ([]string, error) {
	return func() ([]string, error) {
		*n++
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		names := make([]string, 0, len(entries))
		for _, e := range entries {
			names = append(names, e.Name())
		}
		return names, nil
	}
}

// On a real directory: a settled listing is served without reading the
// directory again, and an entry added by anyone changes the directory's
// key, so the next listing reads it.
func TestListCacheFollowsTheDirectory(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"a", "c"} {
		if err := os.Mkdir(filepath.Join(dir, n), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	c := newListCache()
	later := time.Now().Add(time.Second) // the directory's times have settled
	c.now = func() time.Time { return later }
	reads := 0
	read := countingRead(t, dir, &reads)
	for range 3 {
		names, err := c.list(dir, read)
		if err != nil || !slices.Equal(names, []string{"a", "c"}) {
			t.Fatalf("list = %v, %v", names, err)
		}
	}
	if reads != 1 {
		t.Errorf("three listings of an unchanged directory read it %d times, want 1", reads)
	}
	if err := os.Mkdir(filepath.Join(dir, "b"), 0o755); err != nil {
		t.Fatal(err)
	}
	later = time.Now().Add(time.Second)
	if names, _ := c.list(dir, read); !slices.Equal(names, []string{"a", "b", "c"}) || reads != 2 {
		t.Errorf("after an outside mkdir: %v after %d reads, want a b c after 2", names, reads)
	}
	if err := os.Remove(filepath.Join(dir, "a")); err != nil {
		t.Fatal(err)
	}
	later = time.Now().Add(time.Second)
	if names, _ := c.list(dir, read); !slices.Equal(names, []string{"b", "c"}) || reads != 3 {
		t.Errorf("after an outside rmdir: %v after %d reads, want b c after 3", names, reads)
	}
	// A directory replaced by another (a new inode) is read too.
	if err := os.Rename(dir, dir+".old"); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir + ".old") })
	if names, _ := c.list(dir, read); len(names) != 0 || reads != 4 {
		t.Errorf("after replacing the directory: %v after %d reads, want none after 4", names, reads)
	}
}

// The time-granularity hazard, with the directory's key frozen as if every
// change fell in one clock tick: a listing read while the directory's
// times were that recent is never kept, and a change by this driver is
// seen through gen whatever the key says.
func TestListCacheWithinOneTick(t *testing.T) {
	dir := t.TempDir()
	tick := time.Now()
	frozen := dirKey{dev: 1, ino: 2, nlink: 3, size: 4, mtime: tick.UnixNano(), ctime: tick.UnixNano()}
	c := newListCache()
	c.stat = func(string) (dirKey, error) { return frozen, nil }
	now := tick.Add(time.Millisecond) // still the directory's tick
	c.now = func() time.Time { return now }
	reads := 0
	read := countingRead(t, dir, &reads)

	if names, _ := c.list(dir, read); len(names) != 0 {
		t.Fatalf("empty dir listed %v", names)
	}
	// Someone else adds an entry in the same tick: the key does not move.
	if err := os.Mkdir(filepath.Join(dir, "outside"), 0o755); err != nil {
		t.Fatal(err)
	}
	if names, _ := c.list(dir, read); !slices.Equal(names, []string{"outside"}) {
		t.Errorf("an entry added within the directory's last tick is hidden: %v", names)
	}

	// Once settled the listing is kept ...
	now = tick.Add(time.Second)
	_, _ = c.list(dir, read) // only the read count matters here
	n := reads
	_, _ = c.list(dir, read)
	if reads != n {
		t.Fatalf("a settled listing was read again")
	}
	// ... until this driver says it changed the directory.
	if err := os.Mkdir(filepath.Join(dir, "ours"), 0o755); err != nil {
		t.Fatal(err)
	}
	c.changed()
	if names, _ := c.list(dir, read); !slices.Equal(names, []string{"ours", "outside"}) {
		t.Errorf("after changed(): %v, want ours and outside", names)
	}
}

// Whole-second times mark a file system without sub-second times: a
// listing is kept only two seconds after the last change.
func TestSettled(t *testing.T) {
	at := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	key := func(s string) dirKey { n := at(s).UnixNano(); return dirKey{mtime: n, ctime: n} }
	for _, c := range []struct {
		key, now string
		want     bool
	}{
		{"2026-01-01T00:00:00.123456789Z", "2026-01-01T00:00:00.15Z", false},
		{"2026-01-01T00:00:00.123456789Z", "2026-01-01T00:00:00.2Z", true},
		{"2026-01-01T00:00:00Z", "2026-01-01T00:00:00.9Z", false},
		{"2026-01-01T00:00:00Z", "2026-01-01T00:00:02Z", false},
		{"2026-01-01T00:00:00Z", "2026-01-01T00:00:02.2Z", true},
		{"2026-01-01T00:00:00.123456789Z", "2025-12-31T00:00:00Z", false}, // the clock went back
	} {
		if got := settled(key(c.key), at(c.now)); got != c.want {
			t.Errorf("settled(%s, now %s) = %v, want %v", c.key, c.now, got, c.want)
		}
	}
}

// walk lists every volume in pages of size, as a CO does.
func walk(t *testing.T, d *Driver, size int32) []string {
	t.Helper()
	ids, err := tryWalk(d, size)
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

func tryWalk(d *Driver, size int32) ([]string, error) {
	var ids []string
	token := ""
	for {
		resp, err := d.ListVolumes(ctx, &csi.ListVolumesRequest{MaxEntries: size, StartingToken: token})
		if err != nil {
			return nil, err
		}
		for _, e := range resp.GetEntries() {
			ids = append(ids, e.GetVolume().GetVolumeId())
		}
		if token = resp.GetNextToken(); token == "" {
			return ids, nil
		}
	}
}

// ListVolumes with the cache keeps the token promise: a volume created or
// deleted between pages, by this driver or by someone else, and within the
// same tick of the directory's times, is listed or not by its place after
// the token, never hidden by a listing read before.
func TestListVolumesBetweenPages(t *testing.T) {
	d, base := newTestDriver(t, nil)
	for _, n := range []string{"pvc-a", "pvc-c", "pvc-e"} {
		dirvoltest.MustCreate(t, d, dirvoltest.CreateReq(n, gib))
	}
	vdir := filepath.Join(base, volumesDir)
	realStat := d.lists.stat
	frozen, err := realStat(vdir)
	if err != nil {
		t.Fatal(err)
	}
	// Every change below falls in the directory's tick, and the clock
	// says the listing has settled: only gen can tell the driver's own.
	d.lists.stat = func(string) (dirKey, error) { return frozen, nil }
	d.lists.now = func() time.Time { return time.Now().Add(time.Hour) }

	page := func(token string) *csi.ListVolumesResponse {
		resp, err := d.ListVolumes(ctx, &csi.ListVolumesRequest{MaxEntries: 1, StartingToken: token})
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	first := page("")
	if got := first.GetEntries()[0].GetVolume().GetVolumeId(); got != "pvc-a" {
		t.Fatalf("first page %s", got)
	}
	// Tokens name the next page's first volume ("from:pvc-c"): a volume
	// made between pages is listed when it sorts after that.
	dirvoltest.MustCreate(t, d, dirvoltest.CreateReq("pvc-d", gib))
	second := page(first.GetNextToken())
	if got := second.GetEntries()[0].GetVolume().GetVolumeId(); got != "pvc-c" || second.GetNextToken() != tokenPrefix+"pvc-d" {
		t.Errorf("a volume created between pages (same tick) is missing: second page %s, next %q, want pvc-c and pvc-d next", got, second.GetNextToken())
	}
	if _, err := d.DeleteVolume(ctx, &csi.DeleteVolumeRequest{VolumeId: "pvc-e"}); err != nil {
		t.Fatal(err)
	}
	third := page(second.GetNextToken())
	if got := third.GetEntries()[0].GetVolume().GetVolumeId(); got != "pvc-d" || third.GetNextToken() != "" {
		t.Errorf("a volume deleted between pages is still listed: third page %s, next %q, want pvc-d, the end", got, third.GetNextToken())
	}

	// Someone else's volume, with the real directory times and clock.
	d.lists.stat, d.lists.now = realStat, time.Now
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(vdir, old, old); err != nil {
		t.Fatal(err)
	}
	if got := walk(t, d, 2); !slices.Equal(got, []string{"pvc-a", "pvc-c", "pvc-d"}) {
		t.Fatalf("walk %v", got)
	}
	if err := os.Mkdir(filepath.Join(vdir, "pvc-b"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got := walk(t, d, 2); !slices.Equal(got, []string{"pvc-a", "pvc-b", "pvc-c", "pvc-d"}) {
		t.Errorf("after another's mkdir: walk %v", got)
	}
}

// Creates, deletes and walks at once (run with -race): once the writers
// are done, a walk lists exactly the volumes that exist.
func TestListVolumesConcurrentChanges(t *testing.T) {
	d, _ := newTestDriver(t, nil)
	const writers, each = 4, 40
	var wg sync.WaitGroup
	stop, walked := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(walked)
		for {
			select {
			case <-stop:
				return
			default:
				if _, err := tryWalk(d, 7); err != nil {
					t.Error(err)
					return
				}
			}
		}
	}()
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				name := fmt.Sprintf("pvc-%d-%03d", w, i)
				dirvoltest.MustCreate(t, d, dirvoltest.CreateReq(name, gib))
				if i%3 == 0 {
					if _, err := d.DeleteVolume(ctx, &csi.DeleteVolumeRequest{VolumeId: name}); err != nil {
						t.Error(err)
					}
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	<-walked
	var want []string
	for w := range writers {
		for i := range each {
			if i%3 != 0 {
				want = append(want, fmt.Sprintf("pvc-%d-%03d", w, i))
			}
		}
	}
	if got := walk(t, d, 7); !slices.Equal(got, want) {
		t.Errorf("walk after the writers: %d volumes, want %d", len(got), len(want))
	}
}
