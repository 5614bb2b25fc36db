package dirvol

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// An empty volume needs none of materialize's temporary tree: mkdir is
// itself atomic, so the directory appears whole or not at all. What is
// saved per create: the temporary directory, its
// chmod and the rename (and on delete, the rename to .del- and the tree
// walk), i.e. most of the syscalls per create+delete pair.
//
// Crash safety, and where it is kept:
//   - the metadata file is written in place and synced, and its directory
//     synced, before the volume directory exists (writeNewJSON), so a
//     volume that exists always has its whole metadata; a crash in
//     between leaves only a metadata file, perhaps torn, that the retry
//     (or the next create of the name) overwrites, and that nothing reads
//     or lists (lookups and listings start from the directories);
//   - the volume directory's entry is synced before CreateVolume answers,
//     so a volume the CO was told about survives a power cut. These three
//     fsyncs (file, metadata directory, volumes directory) are the
//     fewest POSIX allows for that order; nothing else is synced. On ext4
//     the file's fsync also writes its new name, and the metadata
//     directory's is left out (fsyncdir.go says why, and when);
//   - deletes are not synced: a delete lost to a crash leaves the volume,
//     and the CO, having no answer or repeating the call, deletes it again.
//
// It is used only when nothing must be applied to the directory after
// mkdir (no dirPermissions*, and a umask that leaves 0755 alone): a crash
// between mkdir and a chmod would leave a volume that looks finished with
// the wrong owner or mode.

// umaskKeeps755 reports whether mkdir(0755) yields 0755 in this process.
var umaskKeeps755 = func() bool {
	m := syscall.Umask(0)
	syscall.Umask(m)
	return m&0o755 == 0
}()

// plainEmpty reports whether an empty volume can be made with one mkdir.
func (d *Controller) plainEmpty() bool {
	return d.cfg.UID < 0 && d.cfg.GID < 0 && !d.cfg.HasMode && umaskKeeps755
}

// materializeEmpty makes parent/name an empty directory after commit has
// recorded its metadata; rollback undoes commit when mkdir fails.
func (d *Controller) materializeEmpty(parent, name string, commit func() error, rollback func()) error {
	final := filepath.Join(parent, name)
	// A copy a crash left half-made under this name (before a copy or a
	// permissioned create was retried as an empty one) goes first.
	// One lstat when there is none (RemoveAll of nothing costs three calls).
	if tmp := filepath.Join(parent, tmpPrefix+name); lexists(tmp) {
		if err := removeTree(tmp); err != nil {
			return d.fsError("removing an unfinished copy", err)
		}
	}
	if err := commit(); err != nil {
		return d.fsError("writing metadata", err)
	}
	err := os.Mkdir(final, 0o755)
	if errors.Is(err, fs.ErrNotExist) { // first volume: make v/ first
		if err = mkdirAllDurable(parent); err == nil {
			err = os.Mkdir(final, 0o755)
		}
	}
	if err != nil {
		rollback()
		if errors.Is(err, fs.ErrExist) {
			return d.fsError("creating the volume directory", fmt.Errorf("%s appeared meanwhile (made outside this driver?): %w", final, err))
		}
		return d.fsError("creating the volume directory", err)
	}
	if err := syncDir(parent); err != nil {
		return d.fsError("syncing "+parent, err)
	}
	return nil
}

// removeEmpty removes parent/name when it is an empty directory, and
// reports whether it did; anything else (files in it, not there) is left
// to dematerialize.
func removeEmpty(parent, name string) bool {
	return syscall.Rmdir(filepath.Join(parent, name)) == nil
}

// lexists reports whether path exists (without following a final link);
// an error other than "not there" counts as existing, so the caller's
// removal reports it.
func lexists(path string) bool {
	_, err := os.Lstat(path)
	return !errors.Is(err, fs.ErrNotExist)
}
