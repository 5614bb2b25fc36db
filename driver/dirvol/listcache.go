package dirvol

import (
	"io/fs"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// listCache keeps the sorted listing of the volumes and snapshots
// directories, so that a page of ListVolumes or ListSnapshots costs one
// stat of the directory and the page's own reads instead of reading and
// sorting every entry (a walk over n volumes in pages of p was n²/p).
//
// A listing is reused only when nothing can have changed the directory
// since it was read:
//   - every create and delete of this driver bumps gen when it is done, and
//     a listing read before that bump is not reused;
//   - for changes made by others (democratic-csi, an operator) the
//     directory's identity must be the same: device, inode, size, link count
//     (one per subdirectory on ext4, xfs, tmpfs), modification and change
//     times, which the kernel sets on every entry added, removed or renamed.
//
// The times have a granularity (a clock tick, or a whole second on file
// systems without sub-second times), so an entry added in the same tick as
// the last change leaves them as they were. A listing is therefore only
// kept when it was read after the directory's times had settled: its
// modification and change times lie at least one granularity before the
// clock read *before* the listing. Any later change then happens in a later
// tick and shows as new times. Right after a change a page costs a full
// read again, as before; the saving is for the listing that follows.
type listCache struct {
	gen atomic.Uint64

	mu   sync.Mutex
	dirs map[string]*cachedListing // parent directory -> its listing

	// stat and now are the file system and the clock; tests replace them
	// to freeze a directory's times within one tick.
	stat func(path string) (dirKey, error)
	now  func() time.Time
}

// dirKey is what identifies a directory's content without reading it.
type dirKey struct {
	dev, ino, nlink uint64
	size            int64
	mtime, ctime    int64 // nanoseconds since the epoch
}

type cachedListing struct {
	key   dirKey
	gen   uint64
	names []string // sorted; shared, never modified
}

// fineSettle is how long after a directory's last change its listing may
// be kept on file systems with sub-second times: file times come from the
// kernel's coarse clock, one scheduler tick behind (10 ms at HZ=100, the
// slowest common configuration); five ticks leave room for lag. Times that
// fall on whole seconds are taken for a file system that stores seconds
// only (ext4 with small inodes, ext3; FAT stores two): coarseSettle.
const (
	fineSettle   = 50 * time.Millisecond
	coarseSettle = 2100 * time.Millisecond
)

func newListCache() *listCache {
	return &listCache{dirs: map[string]*cachedListing{}, stat: statDir, now: time.Now}
}

// errNoStat: the platform's stat has no inode or change time here;
// nothing is cached.
var errNoStat = &fs.PathError{Op: "stat", Err: syscall.ENOTSUP}

// changed records that this driver added or removed an entry: listings
// read before are stale.
func (c *listCache) changed() { c.gen.Add(1) }

// settled reports whether a listing of a directory with key k, read after
// the clock showed before, may be reused while k stays the same.
func settled(k dirKey, before time.Time) bool {
	wait := fineSettle
	if k.mtime%int64(time.Second) == 0 && k.ctime%int64(time.Second) == 0 {
		wait = coarseSettle
	}
	limit := before.Add(-wait).UnixNano()
	return k.mtime < limit && k.ctime < limit
}

// list returns the sorted listing of parent that read produces, from the
// cache when it is still valid. The slice is shared: callers must not
// change it. A missing parent is passed on to read, uncached.
func (c *listCache) list(parent string, read func() ([]string, error)) ([]string, error) {
	gen := c.gen.Load()
	before := c.now()
	k, err := c.stat(parent)
	if err != nil {
		return read()
	}
	c.mu.Lock()
	e := c.dirs[parent]
	c.mu.Unlock()
	if e != nil && e.gen == gen && e.key == k {
		return e.names, nil
	}
	names, err := read()
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if settled(k, before) {
		c.dirs[parent] = &cachedListing{key: k, gen: gen, names: names}
	} else {
		delete(c.dirs, parent)
	}
	c.mu.Unlock()
	return names, nil
}
