package zfsmodel

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// Backing-file helpers: sizes from allocated blocks, sparse-aware copies.

func fileBytes(path string) int64 {
	var st syscall.Stat_t
	if err := syscall.Lstat(path, &st); err != nil {
		return 0
	}
	return st.Blocks * 512
}

// dirBytes sums the allocated blocks of the files below dir, skipping the
// top-level directories in skip (child filesystems' directories). As
// filepath.WalkDir would (the sum is the same) but without sorting each
// directory's entries or stat'ing dir first: a dataset query measures its
// directory every time, and a parent with a thousand children was read
// and sorted for each (issue 16). Symbolic links are counted, not
// followed (dir itself included: a link there measures 0); unreadable
// entries are skipped.
func dirBytes(dir string, skip map[string]bool) int64 {
	return walkBytes(dir, skip)
}

// walkBytes is dirBytes of one directory; skip applies to its entries.
// It reads the directory with getdents into a pooled buffer and stats
// files relative to it: os.ReadDir cost an *os.File with its finalizer, a
// fcntl, an 8 KiB buffer and a DirEntry per entry, for what is mostly an
// empty directory (a new dataset's; issue 16, seventh round).
func walkBytes(dir string, skip map[string]bool) int64 {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return 0
	}
	buf := direntBuffers.Get().(*[]byte)
	var total int64
	var subdirs []string
	for {
		// Entries read before an error are still counted, as WalkDir does.
		n, err := unix.Getdents(fd, *buf)
		if err != nil || n <= 0 {
			break
		}
		b := (*buf)[:n]
		for len(b) >= direntNameOff {
			reclen := int(binary.NativeEndian.Uint16(b[direntReclenOff:]))
			if reclen < direntNameOff || reclen > len(b) {
				break
			}
			typ, name := b[direntTypeOff], b[direntNameOff:reclen]
			b = b[reclen:]
			if i := bytes.IndexByte(name, 0); i >= 0 {
				name = name[:i]
			}
			if string(name) == "." || string(name) == ".." {
				continue
			}
			var st unix.Stat_t
			if typ == unix.DT_UNKNOWN {
				if unix.Fstatat(fd, string(name), &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
					continue
				}
				if st.Mode&unix.S_IFMT == unix.S_IFDIR {
					typ = unix.DT_DIR
				}
			}
			if typ == unix.DT_DIR {
				if !skip[string(name)] {
					subdirs = append(subdirs, string(name))
				}
				continue // directories are metadata, counted in fsBase
			}
			if unix.Fstatat(fd, string(name), &st, unix.AT_SYMLINK_NOFOLLOW) == nil {
				total += st.Blocks * 512
			}
		}
	}
	direntBuffers.Put(buf)
	unix.Close(fd)
	for _, sub := range subdirs {
		total += walkBytes(dir+"/"+sub, nil)
	}
	return total
}

// linux_dirent64: d_ino (8 bytes), d_off (8), d_reclen (2), d_type (1),
// d_name (NUL-terminated).
const (
	direntReclenOff = 16
	direntTypeOff   = 18
	direntNameOff   = 19
)

var direntBuffers = sync.Pool{New: func() any {
	b := make([]byte, 8<<10)
	return &b
}}

// copyFile copies a regular file keeping its holes: reflink when the
// filesystem can, else copy_file_range over the data extents only.
func copyFile(src, dst string, mode fs.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, mode.Perm())
	if err != nil {
		return err
	}
	if err := copyFileData(in, out); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

func copyFileData(in, out *os.File) error {
	st, err := in.Stat()
	if err != nil {
		return err
	}
	size := st.Size()
	if unix.IoctlFileClone(int(out.Fd()), int(in.Fd())) == nil {
		return nil
	}
	if err := out.Truncate(size); err != nil {
		return err
	}
	var off int64
	for off < size {
		data, err := unix.Seek(int(in.Fd()), off, unix.SEEK_DATA)
		if err != nil {
			if errors.Is(err, unix.ENXIO) { // only a hole remains
				return nil
			}
			return copyRange(in, out, off, size-off) // no SEEK_DATA: copy the rest
		}
		hole, err := unix.Seek(int(in.Fd()), data, unix.SEEK_HOLE)
		if err != nil {
			hole = size
		}
		if err := copyRange(in, out, data, hole-data); err != nil {
			return err
		}
		off = hole
	}
	return nil
}

// copyRange copies n bytes at off, with copy_file_range or plain I/O.
func copyRange(in, out *os.File, off, n int64) error {
	ioff, ooff := off, off
	for n > 0 {
		c, err := unix.CopyFileRange(int(in.Fd()), &ioff, int(out.Fd()), &ooff, int(min64(n, 1<<30)), 0)
		if err != nil || c == 0 {
			break
		}
		n -= int64(c)
	}
	if n == 0 {
		return nil
	}
	buf := make([]byte, 1<<20)
	for n > 0 {
		k := int(min64(n, int64(len(buf))))
		r, err := in.ReadAt(buf[:k], ioff)
		if r > 0 {
			if _, werr := out.WriteAt(buf[:r], ooff); werr != nil {
				return werr
			}
			ioff, ooff, n = ioff+int64(r), ooff+int64(r), n-int64(r)
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// copyTree copies the contents of src into dst (which must exist), skipping
// the top-level names in skip; for those it creates empty directories
// (a child's mountpoint, as a snapshot shows it).
func copyTree(src, dst string, skip map[string]bool) error {
	ents, err := os.ReadDir(src)
	if err != nil {
		return err
	}
	for _, e := range ents {
		s, d := filepath.Join(src, e.Name()), filepath.Join(dst, e.Name())
		if skip[e.Name()] {
			if err := os.MkdirAll(d, 0o755); err != nil {
				return err
			}
			continue
		}
		if err := copyEntry(s, d); err != nil {
			return err
		}
	}
	return nil
}

func copyEntry(src, dst string) error {
	st, err := os.Lstat(src)
	if err != nil {
		return err
	}
	switch {
	case st.Mode()&fs.ModeSymlink != 0:
		target, err := os.Readlink(src)
		if err != nil {
			return err
		}
		return os.Symlink(target, dst)
	case st.IsDir():
		if err := os.Mkdir(dst, st.Mode().Perm()); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
		if err := copyTree(src, dst, nil); err != nil {
			return err
		}
	case st.Mode().IsRegular():
		if err := copyFile(src, dst, st.Mode()); err != nil {
			return err
		}
	default:
		return nil // devices, fifos and sockets are not carried
	}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		_ = os.Lchown(dst, int(sys.Uid), int(sys.Gid))
	}
	if st.Mode()&fs.ModeSymlink == 0 {
		_ = os.Chmod(dst, st.Mode()&(fs.ModePerm|fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky))
	}
	return nil
}

// clearDir removes everything in dir except the top-level names in keep.
func clearDir(dir string, keep map[string]bool) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if keep[e.Name()] {
			continue
		}
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			return err
		}
	}
	return nil
}

// copyData copies a dataset's data (a directory or a zvol file) to dst.
func copyData(src, dst string, isDir bool, skip map[string]bool) error {
	if !isDir {
		return copyFile(src, dst, 0o600)
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	if err := copyTree(src, dst, skip); err != nil {
		return fmt.Errorf("copying %s: %w", src, err)
	}
	if st, err := os.Stat(src); err == nil {
		_ = os.Chmod(dst, st.Mode().Perm())
		if sys, ok := st.Sys().(*syscall.Stat_t); ok {
			_ = os.Lchown(dst, int(sys.Uid), int(sys.Gid))
		}
	}
	return nil
}
