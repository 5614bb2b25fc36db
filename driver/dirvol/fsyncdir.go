package dirvol

import "sync"

// A new file's name is durable once its directory is synced: POSIX says
// no more, so writeNewJSON syncs the metadata directory after the file.
// Some file systems make the name durable with the file's own fsync, and
// there that second fsync only waits for another cache flush of the disk
// (one of the three a create waits for). nameSyncedWithNewFile tells
// writeNewJSON when it may leave the directory's fsync out: for a file
// that this very open created (O_EXCL), in a directory on one of the file
// systems below; everywhere else, and for a file a crash left behind, the
// portable sequence stays.
//
// Linux's ext4 driver (the mount's type is "ext4"; statfs's magic alone
// would also match ext2's own driver, which does neither of these):
//   - with a journal (data=ordered, writeback or journal): the new name
//     and the new inode are made in one journal handle, so in one
//     transaction; an fsync of the file commits the transaction the inode
//     last changed in, which is that one or a later one, and jbd2 commits
//     transactions in order (a fast commit instead records the new name
//     with the inode: ext4_fc_track_create);
//   - without a journal (this project's test machine): adding the name
//     marks the inode EXT4_STATE_NEWENTRY, and the file's fsync
//     (ext4_fsync_nojournal → ext4_sync_parent) writes the parent
//     directory's blocks and inode, and its parents' while they are new
//     too, before the one cache flush.
//
// The answer is kept per directory for the process's life: the driver's
// metadata directory is its own, and a file system mounted over it while
// the driver runs is not followed.
var nameSyncedWithNewFile = fsKindCache{known: map[string]bool{}}

// fsKindCache remembers newNameSyncedByFileFsync's answer per directory.
type fsKindCache struct {
	mu    sync.Mutex
	known map[string]bool
}

// covers reports whether an fsync of a file just created in dir makes its
// name in dir durable (see above). An error in finding out is a no.
func (c *fsKindCache) covers(dir string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	ok, seen := c.known[dir]
	if !seen {
		ok = newNameSyncedByFileFsync(dir)
		c.known[dir] = ok
	}
	return ok
}
