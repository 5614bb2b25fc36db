package zfsmodel

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Spare directories: on ext4 (the lab's disks) a mkdir and an rmdir cost
// 250-350 µs of CPU each — allocating and freeing the directory's block
// under the file system's journal — while a rename costs ~30 µs. A create
// and destroy of a filesystem paid both, more than all the model's own
// work. So the empty directory of a destroyed filesystem is kept in the
// trash as a spare, and the next filesystem created takes it with one
// rename instead of a mkdir.
//
// A spare must be indistinguishable from a fresh mkdir: only directories
// that are empty, have no extended attributes (no ACLs) and still have the
// mode and owner a mkdir gives are kept, they are only used where the
// parent hands nothing down (set-group-ID bit, default ACL), and a reused
// one gets the current time as its access and modification times, as a
// new directory has.

const maxSpares = 256

type spares struct {
	mu    sync.Mutex
	dirs  []string
	mode  os.FileMode // what a fresh mkdir here gives (umask applied)
	raw   uint32      // the same as lstat's st_mode
	uid   uint32
	gid   uint32
	known bool // mode, uid and gid were probed
}

// sparesOnTmpfs: keep spares on tmpfs as well (the tests of spares, whose
// temporary directories may be on tmpfs).
var sparesOnTmpfs = false

// onTmpfs reports whether dir is on tmpfs. There a mkdir and an rmdir cost
// ~10 µs of CPU each, less than a spare's checks on both sides (lstat,
// listxattr, open, getdents and close when kept; lstat, listxattr,
// renameat2 and utimensat when used), which made them a tenth of the ZFS
// simulator's CPU per create and destroy on tmpfs (issue 16).
func onTmpfs(dir string) bool {
	var st unix.Statfs_t
	return unix.Statfs(dir, &st) == nil && st.Type == unix.TMPFS_MAGIC
}

// probeSpares learns what a fresh directory looks like (Open; the trash is
// empty then). Without that, no spare is kept: so on tmpfs.
func (m *Model) probeSpares(probe string) {
	if !sparesOnTmpfs && onTmpfs(filepath.Dir(probe)) {
		return
	}
	if err := os.Mkdir(probe, 0o755); err != nil {
		return
	}
	defer os.Remove(probe)
	fi, err := os.Lstat(probe)
	if err != nil {
		return
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return
	}
	m.sp.mode, m.sp.raw, m.sp.uid, m.sp.gid, m.sp.known = fi.Mode(), st.Mode, st.Uid, st.Gid, true
}

// discard disposes of a path moved to the trash: an empty, unchanged
// directory becomes a spare; anything else is removed. Called without m.mu.
// An empty directory past the spares' limit goes with one rmdir: the
// checks already know it is empty, so os.RemoveAll's unlink that fails
// on a directory, its retry and its look inside are not needed.
func (m *Model) discard(path string) {
	if m.sp.known {
		switch m.spareCheck(path) {
		case spareOK:
			m.sp.mu.Lock()
			if len(m.sp.dirs) < maxSpares {
				m.sp.dirs = append(m.sp.dirs, path)
				m.sp.mu.Unlock()
				return
			}
			m.sp.mu.Unlock()
			if unix.Rmdir(path) == nil {
				return
			}
		case spareEmptyDir:
			if unix.Rmdir(path) == nil {
				return
			}
		}
	}
	_ = os.RemoveAll(path)
}

// What spareCheck found: a spare, an empty directory that is not one
// (its mode, owner or extended attributes differ from a fresh mkdir's), or
// something else (a file, a directory with entries, an error).
const (
	spareNo = iota
	spareEmptyDir
	spareOK
)

// spareCheck looks at a trash path with plain system calls: lstat,
// listxattr, then open, getdents and close when it is still a candidate.
// os.Lstat and os.Open cost a FileInfo, an *os.File with its finalizer,
// four fcntls and an epoll_ctl that always fails (a directory is tried on
// the network poller): a third of the system calls of a destroy on ext4
// (issue 16).
func (m *Model) spareCheck(path string) int {
	var st unix.Stat_t
	if unix.Lstat(path, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return spareNo
	}
	verdict := spareOK
	if st.Mode != m.sp.raw || st.Uid != m.sp.uid || st.Gid != m.sp.gid {
		verdict = spareEmptyDir // if it is empty
	} else if n, err := unix.Listxattr(path, nil); err != nil || n != 0 {
		verdict = spareEmptyDir
	}
	if !emptyDir(path) {
		return spareNo
	}
	return verdict
}

// emptyDir reports whether the directory at path has no entries but "."
// and "..", reading it until getdents says there is no more.
func emptyDir(path string) bool {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	buf := direntBuffers.Get().(*[]byte)
	defer direntBuffers.Put(buf)
	for {
		n, err := unix.Getdents(fd, *buf)
		if err != nil {
			return false
		}
		if n <= 0 {
			return true
		}
		if hasEntries((*buf)[:n]) {
			return false
		}
	}
}

// hasEntries reports whether getdents' records in b name anything but "."
// and "..".
func hasEntries(b []byte) bool {
	for len(b) >= direntNameOff {
		reclen := int(binary.NativeEndian.Uint16(b[direntReclenOff:]))
		if reclen < direntNameOff || reclen > len(b) {
			return true // not a record as expected: do not call it empty
		}
		name := b[direntNameOff:reclen]
		if i := bytes.IndexByte(name, 0); i >= 0 {
			name = name[:i]
		}
		if string(name) != "." && string(name) != ".." {
			return true
		}
		b = b[reclen:]
	}
	return false
}

// plainParent: a directory made in parent gets nothing from it (no
// set-group-ID bit handing down its group, no default ACL), so a spare
// looks as a mkdir there would.
func (m *Model) plainParent(parent string) bool {
	var st unix.Stat_t
	if unix.Lstat(parent, &st) != nil || st.Mode&unix.S_ISGID != 0 {
		return false
	}
	n, err := unix.Listxattr(parent, nil)
	return err == nil && n == 0
}

// mkdirFromSpare makes dir by renaming a spare into place; false when
// there is none or dir exists or its parent does not (the caller then does
// what it did before: mkdir, adopting an existing directory).
func (m *Model) mkdirFromSpare(dir string) bool {
	m.sp.mu.Lock()
	none := len(m.sp.dirs) == 0
	m.sp.mu.Unlock()
	if none || !m.plainParent(filepath.Dir(dir)) { // no spare: no need to look at the parent
		return false
	}
	m.sp.mu.Lock()
	n := len(m.sp.dirs)
	if n == 0 {
		m.sp.mu.Unlock()
		return false
	}
	s := m.sp.dirs[n-1]
	m.sp.dirs = m.sp.dirs[:n-1]
	m.sp.mu.Unlock()
	// RENAME_NOREPLACE: a plain rename would replace an empty directory
	// already there, which a create adopts as it is.
	if err := unix.Renameat2(unix.AT_FDCWD, s, unix.AT_FDCWD, dir, unix.RENAME_NOREPLACE); err != nil {
		m.sp.mu.Lock()
		m.sp.dirs = append(m.sp.dirs, s)
		m.sp.mu.Unlock()
		return false
	}
	now := time.Now()
	_ = os.Chtimes(dir, now, now)
	return true
}
