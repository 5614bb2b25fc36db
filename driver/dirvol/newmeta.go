package dirvol

import (
	"encoding/json"
	"errors"
	"io/fs"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// writeNewJSON writes the metadata of a volume that does not exist yet, in
// place: open (O_EXCL, or O_TRUNC over a file a crash left), write, fsync,
// close, then fsync the directory (but on ext4: fsyncdir.go). writeJSON's
// temporary file, chmod and rename (five more system calls) buy atomicity,
// which only a reader of the file needs, and no one reads a volume's
// metadata while its directory does not exist: a lookup starts with the
// directory, and CreateVolume holds the id's lock. A crash half-way leaves
// a torn file beside no volume; the retry rewrites it before making the
// directory. The mode is 0644 as writeJSON's: the caller
// (materializeEmpty) runs only under a umask that keeps 0755, hence 0644.
//
// The system calls are made directly: os.OpenFile would also try to add
// the descriptor to the network poller (one failing epoll_ctl per open).
func writeNewJSON(path string, v any) error {
	data, err := json.Marshal(v) // compact: readJSON accepts either form
	if err != nil {
		return err
	}
	fd, created, err := openNew(path)
	dir := filepath.Dir(path)
	if errors.Is(err, unix.ENOENT) { // the first file: make the directory
		if err = mkdirAllDurable(dir); err == nil {
			fd, created, err = openNew(path)
		}
	}
	if err != nil {
		return &fs.PathError{Op: "open", Path: path, Err: err}
	}
	// The file's data and size must be on disk before the volume
	// directory can be: the fsync.
	n, err := unix.Write(fd, data)
	op := "write"
	if err == nil && n != len(data) {
		err = unix.EIO
	}
	if err == nil {
		op, err = "fsync", unix.Fsync(fd)
	}
	if cerr := unix.Close(fd); err == nil && cerr != nil {
		op, err = "close", cerr
	}
	if err != nil {
		_ = unix.Unlink(path)
		return &fs.PathError{Op: op, Path: path, Err: err}
	}
	// Its directory entry too: POSIX leaves a new name's durability to
	// the directory's fsync. Where the file system is known to have
	// written the name with the file's fsync (ext4, fsyncdir.go) and this
	// open made the file, that fsync is all.
	if created && nameSyncedWithNewFile.covers(dir) {
		return nil
	}
	return syncDir(dir)
}

// openNew opens path for writing, creating it (created) or, when a crash
// left a file under the name, truncating that one. O_EXCL tells the two
// apart at no extra cost when the file is new, as it nearly always is.
func openNew(path string) (fd int, created bool, err error) {
	const flags = unix.O_WRONLY | unix.O_CREAT | unix.O_CLOEXEC
	fd, err = unix.Open(path, flags|unix.O_EXCL, 0o644)
	if err == nil {
		return fd, true, nil
	}
	if !errors.Is(err, unix.EEXIST) {
		return -1, false, err
	}
	fd, err = unix.Open(path, flags|unix.O_TRUNC, 0o644)
	return fd, false, err
}

// writeNewVolumeMeta records the metadata of volume id before its
// directory is made (writeNewJSON), dropping any cached copy of a file a
// crash left under the same name: the rewrite keeps its inode.
func (d *Controller) writeNewVolumeMeta(id string, m *volumeMeta) error {
	if err := writeNewJSON(d.store.volumeMetaPath(id), m); err != nil {
		return err
	}
	if d.store.cache != nil {
		d.store.cache.forget(id)
	}
	return nil
}
