package node

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"

	mount "k8s.io/mount-utils"
)

// maxStackedMounts bounds how many mounts unmountAll peels off one path:
// a path mounted twice (a retried mount that did succeed) needs two.
const maxStackedMounts = 8

// isMountPoint reports whether path is a mount point. It uses IsMountPoint,
// not IsLikelyNotMountPoint, because the latter misses bind mounts within
// one filesystem, which is all hostpath and publish make. A missing path is
// not a mount point; a broken one (stale NFS) is.
func isMountPoint(m mount.Interface, path string) (bool, error) {
	mounted, _, err := mountState(m, path)
	return mounted, err
}

// mountState is isMountPoint that also says whether the mount is broken.
func mountState(m mount.Interface, path string) (mounted, corrupted bool, err error) {
	ok, err := m.IsMountPoint(path)
	switch {
	case err == nil:
		return ok, false, nil
	case errors.Is(err, fs.ErrNotExist):
		return false, false, nil
	case mount.IsCorruptedMnt(err):
		return true, true, nil
	}
	return false, false, err
}

// sameFile reports whether a and b are the same file or directory after
// following mounts: true for a bind mount and its source.
func sameFile(a, b string) bool {
	fa, err := os.Stat(a)
	if err != nil {
		return false
	}
	fb, err := os.Stat(b)
	if err != nil {
		return false
	}
	return os.SameFile(fa, fb)
}

// mountedReadOnly reports whether the topmost mount at path has the ro flag.
func mountedReadOnly(m mount.Interface, path string) (bool, error) {
	mps, err := m.List()
	if err != nil {
		return false, err
	}
	if p, err := filepath.EvalSymlinks(path); err == nil {
		path = p
	}
	ro := false
	for _, mp := range mps { // later entries are mounted on top
		if mp.Path == path {
			ro = slices.Contains(mp.Opts, "ro")
		}
	}
	return ro, nil
}

// unmountAll unmounts path until it is no longer a mount point. A broken
// mount whose unmount fails (a stale NFS server) is detached lazily so the
// node is not blocked on it.
func (s *Service) unmountAll(ctx context.Context, path string) error {
	for range maxStackedMounts {
		mounted, corrupted, err := mountState(s.host.Mounter, path)
		if err != nil {
			return fmt.Errorf("check mount point %s: %w", path, err)
		}
		if !mounted {
			return nil
		}
		err = s.host.Mounter.Unmount(path)
		if err == nil {
			continue
		}
		if !corrupted {
			return fmt.Errorf("unmount %s: %w", path, err)
		}
		if _, lerr := s.host.Exec.Run(ctx, Command{Name: "umount", Args: []string{"--force", "--lazy", path}}); lerr != nil {
			return fmt.Errorf("unmount broken mount %s: %v; forced lazy unmount: %w", path, err, lerr)
		}
	}
	return fmt.Errorf("%s is still a mount point after %d unmounts", path, maxStackedMounts)
}

// removeMountPath removes an unmounted target or staging path (a directory
// or, for block volumes, a file). A non-empty directory is left alone and
// reported: deleting its contents could destroy data written while it was
// not mounted.
func removeMountPath(path string) error {
	err := os.Remove(path)
	switch {
	case err == nil, errors.Is(err, fs.ErrNotExist):
		return nil
	case errors.Is(err, syscall.ENOTEMPTY), errors.Is(err, syscall.EEXIST):
		return errNotEmpty
	}
	return err
}

var errNotEmpty = errors.New("directory is not empty")
