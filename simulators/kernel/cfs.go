package kernel

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// FS is the file access the configfs trees need: configfs is driven only
// by mkdir, rmdir, writes, reads and symlinks. Tests substitute a
// temporary directory that acts the same (package kerneltest).
type FS interface {
	Mkdir(p string) error
	Rmdir(p string) error
	ReadFile(p string) ([]byte, error)
	WriteFile(p string, data []byte) error
	Symlink(target, link string) error
	Readlink(p string) (string, error)
	Unlink(p string) error
	ReadDir(p string) ([]fs.DirEntry, error)
	Lstat(p string) (fs.FileInfo, error)
}

type osFS struct{}

func (osFS) Mkdir(p string) error                    { return os.Mkdir(p, 0o755) }
func (osFS) Rmdir(p string) error                    { return rmdir(p) }
func (osFS) ReadFile(p string) ([]byte, error)       { return os.ReadFile(p) }
func (osFS) Symlink(target, link string) error       { return os.Symlink(target, link) }
func (osFS) Readlink(p string) (string, error)       { return os.Readlink(p) }
func (osFS) Unlink(p string) error                   { return unlink(p) }
func (osFS) ReadDir(p string) ([]fs.DirEntry, error) { return os.ReadDir(p) }
func (osFS) Lstat(p string) (fs.FileInfo, error)     { return os.Lstat(p) }

// WriteFile writes like `echo v > attr`: configfs attributes take a whole
// value per write.
func (osFS) WriteFile(p string, data []byte) error {
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	return errors.Join(werr, f.Close())
}

// cfs wraps an FS with the idempotent operations the reconcilers use:
// each reads first and changes only what differs.
type cfs struct {
	fs      FS
	changes int // writes, mkdirs, rmdirs, links and unlinks done
}

func (c *cfs) exists(p string) bool {
	_, err := c.fs.Lstat(p)
	return err == nil
}

// attr reads an attribute ("" when absent; configfs's "(null)" too).
func (c *cfs) attr(p string) string {
	b, err := c.fs.ReadFile(p)
	if err != nil {
		return ""
	}
	v := strings.TrimSpace(string(b))
	if v == "(null)" {
		return ""
	}
	return v
}

// set writes v unless the attribute holds it already. Values are written
// without a newline: some attributes (LIO's CHAP credentials) keep every
// byte written.
func (c *cfs) set(p, v string) error {
	if c.attr(p) == v {
		return nil
	}
	return c.write(p, v)
}

// write writes v whatever the attribute holds (for triggers such as enable
// and revalidate_size).
func (c *cfs) write(p, v string) error {
	c.changes++
	if err := c.fs.WriteFile(p, []byte(v)); err != nil {
		return fmt.Errorf("writing %q to %s: %w", v, p, bare(err))
	}
	return nil
}

// writeSecret is write for credentials: the value never enters the error.
func (c *cfs) writeSecret(p, v string) error {
	if c.attr(p) == v {
		return nil
	}
	c.changes++
	if err := c.fs.WriteFile(p, []byte(v)); err != nil {
		return fmt.Errorf("writing %s: %w", p, bare(err))
	}
	return nil
}

func (c *cfs) mkdir(p string) error {
	if c.exists(p) {
		return nil
	}
	c.changes++
	if err := c.fs.Mkdir(p); err != nil {
		return fmt.Errorf("mkdir %s: %w", p, bare(err))
	}
	return nil
}

func (c *cfs) rmdir(p string) error {
	if !c.exists(p) {
		return nil
	}
	c.changes++
	if err := c.fs.Rmdir(p); err != nil {
		return fmt.Errorf("rmdir %s: %w", p, bare(err))
	}
	return nil
}

// linkTarget is where the symlink at p points (resolved; configfs
// answers with relative paths), or "" if p is no symlink.
func (c *cfs) linkTarget(p string) string {
	t, err := c.fs.Readlink(p)
	if err != nil {
		return ""
	}
	if !filepath.IsAbs(t) {
		t = filepath.Join(filepath.Dir(p), t)
	}
	return filepath.Clean(t)
}

// link makes p a symlink to target.
func (c *cfs) link(target, p string) error {
	if c.linkTarget(p) == filepath.Clean(target) {
		return nil
	}
	if err := c.unlink(p); err != nil {
		return err
	}
	c.changes++
	if err := c.fs.Symlink(target, p); err != nil {
		return fmt.Errorf("symlink %s -> %s: %w", p, target, bare(err))
	}
	return nil
}

func (c *cfs) unlink(p string) error {
	if !c.exists(p) {
		return nil
	}
	c.changes++
	if err := c.fs.Unlink(p); err != nil {
		return fmt.Errorf("unlink %s: %w", p, bare(err))
	}
	return nil
}

// names lists the subdirectories of a directory (configfs items and
// groups; attribute files and symlinks are left out), nil when it does
// not exist.
func (c *cfs) names(p string) []string {
	ents, err := c.fs.ReadDir(p)
	if err != nil {
		return nil
	}
	out := make([]string, 0, len(ents))
	for _, e := range ents {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	return out
}

// links lists the symlinks in a directory: name -> resolved target.
func (c *cfs) links(p string) map[string]string {
	out := map[string]string{}
	ents, _ := c.fs.ReadDir(p)
	for _, e := range ents {
		if e.Type()&fs.ModeSymlink == 0 {
			continue
		}
		if t := c.linkTarget(filepath.Join(p, e.Name())); t != "" {
			out[e.Name()] = t
		}
	}
	return out
}

func rmdir(p string) error {
	err := syscall.Rmdir(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return &fs.PathError{Op: "rmdir", Path: p, Err: err}
	}
	return nil
}

func unlink(p string) error {
	err := syscall.Unlink(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return &fs.PathError{Op: "unlink", Path: p, Err: err}
	}
	return nil
}

// bare drops the path an *fs.PathError or *os.LinkError repeats, since
// the messages here name the path already.
func bare(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}
