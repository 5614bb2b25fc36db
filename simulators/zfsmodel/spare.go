package zfsmodel

import (
	"errors"
	"io"
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
	m.sp.mode, m.sp.uid, m.sp.gid, m.sp.known = fi.Mode(), st.Uid, st.Gid, true
}

// discard disposes of a path moved to the trash: an empty, unchanged
// directory becomes a spare; anything else is removed. Called without m.mu.
func (m *Model) discard(path string) {
	if m.sp.known && m.spareable(path) {
		m.sp.mu.Lock()
		if len(m.sp.dirs) < maxSpares {
			m.sp.dirs = append(m.sp.dirs, path)
			m.sp.mu.Unlock()
			return
		}
		m.sp.mu.Unlock()
	}
	_ = os.RemoveAll(path)
}

func (m *Model) spareable(path string) bool {
	fi, err := os.Lstat(path)
	if err != nil || !fi.IsDir() || fi.Mode() != m.sp.mode {
		return false
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); !ok || st.Uid != m.sp.uid || st.Gid != m.sp.gid {
		return false
	}
	if n, err := syscall.Listxattr(path, nil); err != nil || n != 0 {
		return false
	}
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	_, err = f.Readdirnames(1)
	return errors.Is(err, io.EOF)
}

// plainParent: a directory made in parent gets nothing from it (no
// set-group-ID bit handing down its group, no default ACL), so a spare
// looks as a mkdir there would.
func (m *Model) plainParent(parent string) bool {
	fi, err := os.Lstat(parent)
	if err != nil || fi.Mode()&os.ModeSetgid != 0 {
		return false
	}
	n, err := syscall.Listxattr(parent, nil)
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
