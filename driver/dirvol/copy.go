package dirvol

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
)

// copier copies directory trees like `rsync -a` (which democratic-csi
// uses): file contents, permission bits (setuid, setgid and sticky
// included), ownership, modification times, symlinks (as links, never
// followed), FIFOs, sockets and device nodes. Hard links are copied as
// separate files and extended attributes are not copied, as with rsync -a.
// Every file and directory is fsynced, so a tree that has been renamed into
// place survives a power loss complete.
type copier struct {
	ctx context.Context
	// hook, when set, runs before each entry is copied (rel is the path
	// relative to the tree root, "." for the root); an error aborts the copy.
	// Tests use it to simulate a failure half-way.
	hook func(rel string) error
	// tolerateChownEPERM is true when not running as root: like rsync, a
	// non-root copy keeps contents and modes but cannot give files away.
	tolerateChownEPERM bool
	// reflink shares file blocks (FICLONE) where the file system can.
	reflink bool
}

// copyTree creates dst (which must not exist) as a copy of the directory src.
func (c *copier) copyTree(src, dst string) error {
	fi, err := os.Lstat(src)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a directory", src)
	}
	return c.copyEntry(src, dst, ".", fi)
}

func (c *copier) copyEntry(src, dst, rel string, fi fs.FileInfo) error {
	if err := c.ctx.Err(); err != nil {
		return err
	}
	if c.hook != nil {
		if err := c.hook(rel); err != nil {
			return err
		}
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fmt.Errorf("%s: no file owner information on this platform", src)
	}
	mode := fi.Mode()
	switch {
	case mode.IsDir():
		if err := os.Mkdir(dst, 0o700); err != nil {
			return err
		}
		entries, err := os.ReadDir(src)
		if err != nil {
			return err
		}
		for _, e := range entries {
			efi, err := e.Info()
			if err != nil {
				return err
			}
			if err := c.copyEntry(filepath.Join(src, e.Name()), filepath.Join(dst, e.Name()), filepath.Join(rel, e.Name()), efi); err != nil {
				return err
			}
		}
		if err := c.setAttrs(dst, st, fi, false); err != nil {
			return err
		}
		return syncDir(dst)
	case mode.IsRegular():
		if err := copyFile(src, dst, c.reflink); err != nil {
			return err
		}
		return c.setAttrs(dst, st, fi, false)
	case mode&fs.ModeSymlink != 0:
		target, err := os.Readlink(src)
		if err != nil {
			return err
		}
		if err := os.Symlink(target, dst); err != nil {
			return err
		}
		return c.setAttrs(dst, st, fi, true)
	default: // FIFO, socket, character or block device
		if err := unix.Mknod(dst, uint32(st.Mode), int(st.Rdev)); err != nil { //nolint:unconvert // Stat_t/Statfs_t field types differ between architectures
			return fmt.Errorf("creating special file %s: %w", dst, err)
		}
		return c.setAttrs(dst, st, fi, false)
	}
}

func copyFile(src, dst string, reflink bool) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if reflink {
		err = cloneOrCopy(out, in)
	} else {
		_, err = io.Copy(out, in) // copy_file_range / sendfile where the kernel has them
	}
	if err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}

// setAttrs gives dst the owner, mode and modification time of the source.
// Ownership first: chown clears the setuid and setgid bits.
func (c *copier) setAttrs(dst string, st *syscall.Stat_t, fi fs.FileInfo, symlink bool) error {
	if err := os.Lchown(dst, int(st.Uid), int(st.Gid)); err != nil {
		if !(c.tolerateChownEPERM && errors.Is(err, fs.ErrPermission)) {
			return err
		}
	}
	if !symlink { // a symlink's own mode is meaningless on Linux
		if err := unix.Chmod(dst, uint32(st.Mode)&0o7777); err != nil { //nolint:unconvert // Stat_t/Statfs_t field types differ between architectures
			return &fs.PathError{Op: "chmod", Path: dst, Err: err}
		}
	}
	mtime := unix.NsecToTimespec(fi.ModTime().UnixNano())
	ts := []unix.Timespec{mtime, mtime}
	if err := unix.UtimesNanoAt(unix.AT_FDCWD, dst, ts, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return &fs.PathError{Op: "utimes", Path: dst, Err: err}
	}
	return nil
}

// diskUsage is the space a tree occupies, like `du -s --block-size=1`
// (what democratic-csi reports as a snapshot's size): allocated blocks of
// every entry, hard-linked files counted once.
func diskUsage(ctx context.Context, root string) (int64, error) {
	type inode struct{ dev, ino uint64 }
	seen := map[inode]bool{}
	var total int64
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !ok {
			total += fi.Size()
			return nil
		}
		if !fi.IsDir() && st.Nlink > 1 {
			k := inode{uint64(st.Dev), uint64(st.Ino)} //nolint:unconvert // Stat_t/Statfs_t field types differ between architectures
			if seen[k] {
				return nil
			}
			seen[k] = true
		}
		total += int64(st.Blocks) * 512 //nolint:unconvert // Stat_t/Statfs_t field types differ between architectures
		return nil
	})
	return total, err
}

// removeTree removes path and everything below it; a missing path is not
// an error. Directories a workload made read-only (0555) are made writable
// first, where os.RemoveAll alone would fail without root.
func removeTree(path string) error {
	err := os.RemoveAll(path)
	if err == nil || !errors.Is(err, fs.ErrPermission) {
		return err
	}
	// Through an os.Root: a pod that swaps a directory for a symbolic link
	// mid-walk cannot make the chmod land outside the volume.
	root, rerr := os.OpenRoot(path)
	if rerr != nil {
		return err
	}
	_ = fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			_ = root.Chmod(p, 0o700)
		}
		return nil
	})
	root.Close()
	return os.RemoveAll(path)
}

// cloneOrCopy shares src's blocks with dst (FICLONE: a reflink on btrfs,
// xfs, and NFS 4.2 or SMB3 servers whose file system has them), so a
// snapshot of a large volume costs no space until either copy changes. Where
// the file system cannot, it copies the bytes (copy_file_range, which NFS
// 4.2 turns into a server-side copy).
func cloneOrCopy(out, in *os.File) error {
	if err := unix.IoctlFileClone(int(out.Fd()), int(in.Fd())); err == nil {
		return nil
	}
	_, err := io.Copy(out, in)
	return err
}
