package synology

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// makeSparse makes an empty file of size bytes that takes no space.
func makeSparse(path string, size int64) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if err := f.Truncate(size); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Whence values of lseek(2) that find data and holes in sparse files.
const (
	seekData = 3
	seekHole = 4
)

// copySparse copies src into a new file dst of size bytes, writing only
// src's data regions (a snapshot of an empty 1 GiB LUN costs nothing).
func copySparse(src, dst string, size int64) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	if err := makeSparse(dst, size); err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	defer out.Close()
	var off int64
	for off < size {
		start, err := in.Seek(off, seekData)
		if err != nil {
			if errors.Is(err, syscall.ENXIO) { // no data after off
				break
			}
			return err
		}
		end, err := in.Seek(start, seekHole)
		if err != nil {
			return err
		}
		if end > size {
			end = size
		}
		if start >= end {
			break
		}
		if _, err := in.Seek(start, io.SeekStart); err != nil {
			return err
		}
		if _, err := out.Seek(start, io.SeekStart); err != nil {
			return err
		}
		if _, err := io.CopyN(out, in, end-start); err != nil {
			return err
		}
		off = end
	}
	return out.Close()
}

// allocated is the space a file takes on disk.
func allocated(fi fs.FileInfo) int64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Blocks * 512
	}
	return fi.Size()
}

// copyTree copies the directory src into a new directory dst (regular
// files, directories and symlinks, with their modes).
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return os.MkdirAll(to, info.Mode().Perm()|0o700)
		case d.Type()&fs.ModeSymlink != 0:
			t, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(t, to)
		case d.Type().IsRegular():
			return copySparse(p, to, info.Size())
		}
		return nil
	})
}

// dirSize is the size of the files under dir.
func dirSize(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}
