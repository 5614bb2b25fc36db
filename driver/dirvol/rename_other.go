//go:build !linux

package dirvol

// renameNoReplace moves a finished directory into place, failing with
// fs.ErrExist when newpath exists (checked, then renamed: the per-id locks
// make this safe within this process).
func renameNoReplace(oldpath, newpath string) error { return renameChecked(oldpath, newpath) }
