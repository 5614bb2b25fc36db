package dirvol

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// renameNoReplace moves a finished directory into place, failing with
// fs.ErrExist (never replacing) when newpath exists. Filesystems without
// RENAME_NOREPLACE fall back to a check and a plain rename, which the
// per-id locks make safe within this process.
func renameNoReplace(oldpath, newpath string) error {
	err := unix.Renameat2(unix.AT_FDCWD, oldpath, unix.AT_FDCWD, newpath, unix.RENAME_NOREPLACE)
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EOPNOTSUPP) {
		return renameChecked(oldpath, newpath)
	}
	if err != nil {
		return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: err}
	}
	return nil
}
