package dirvol

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// materialize makes parent/name appear complete or not at all: fill builds
// the tree in parent/.tmp-<name>, commit records its metadata, and the tree
// is then renamed into place. On any failure the temporary tree is removed
// (and rollback undoes commit when the rename fails), so nothing is ever
// left under the final name. A temporary tree left by a crash is removed
// first; calls on one name are serialised, so it cannot be in use.
func (d *Controller) materialize(parent, name string, fill func(tmp string) error, commit func() error, rollback func()) (err error) {
	if err := mkdirAllDurable(parent); err != nil {
		return d.fsError("creating "+parent, err)
	}
	tmp := filepath.Join(parent, tmpPrefix+name)
	final := filepath.Join(parent, name)
	if err := removeTree(tmp); err != nil {
		return d.fsError("removing an unfinished copy", err)
	}
	defer func() {
		if err != nil {
			_ = removeTree(tmp)
		}
	}()
	if err := fill(tmp); err != nil {
		return err
	}
	if err := commit(); err != nil {
		return d.fsError("writing metadata", err)
	}
	if err := renameNoReplace(tmp, final); err != nil {
		rollback()
		if errors.Is(err, fs.ErrExist) {
			return d.fsError("moving the new directory into place", fmt.Errorf("%s appeared meanwhile (made outside this driver?): %w", final, err))
		}
		return d.fsError("moving the new directory into place", err)
	}
	if err := syncDir(parent); err != nil {
		return d.fsError("syncing "+parent, err)
	}
	return nil
}

// dematerialize removes parent/name: it is first renamed to
// parent/.del-<name> (so a failure half-way never leaves a partial tree
// under the name), then forget runs (metadata removal), then the tree is
// removed. A missing directory is not an error; leftovers of an earlier
// crashed create or delete of the same name are removed too.
func (d *Controller) dematerialize(parent, name string, forget func() error) error {
	final := filepath.Join(parent, name)
	del := filepath.Join(parent, delPrefix+name)
	for _, stale := range []string{del, filepath.Join(parent, tmpPrefix+name)} {
		if err := removeTree(stale); err != nil {
			return d.fsError("removing leftovers", err)
		}
	}
	if err := os.Rename(final, del); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return d.fsError("removing "+final, err)
	}
	if err := forget(); err != nil {
		return d.fsError("removing metadata", err)
	}
	if err := removeTree(del); err != nil {
		return d.fsError("removing "+final, err)
	}
	return nil
}
