// Package kerneltest is a stand-in machine for kernel.Reconciler in unit
// tests: configfs on a temporary directory that behaves like the real one
// (mkdir makes items with their default groups, rmdir refuses items still
// in use, nvmet's ordering rules are enforced), a sysfs for loop devices,
// a mount table and the commands the reconciler runs (losetup, mount,
// exportfs, the NFS daemons, smbd and Samba's tools) acting on them.
package kerneltest

import (
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
)

// ConfigFS is configfs on a temporary directory (it implements
// kernel.FS): mkdir makes an item with its default groups, rmdir refuses
// items that still hold items or links (or are linked to), attributes are
// files created by writing, and the nvmet and LIO ordering rules the
// reconciler must respect are enforced.
type ConfigFS struct {
	Root  string
	items map[string]bool // relative paths of the items made by mkdir
	// FailWrites refuses writes (EIO) to attributes whose path ends so.
	FailWrites []string
}

// itemKinds are where mkdir may make an item, and its default groups.
var itemKinds = []struct {
	pattern string
	groups  []string
}{
	{"nvmet/subsystems/*", []string{"namespaces", "allowed_hosts"}},
	{"nvmet/subsystems/*/namespaces/*", nil},
	{"nvmet/ports/*", []string{"subsystems", "referrals", "ana_groups"}},
	{"nvmet/hosts/*", nil},
	{"target/core/*", nil},
	{"target/core/*/*", []string{"attrib", "pr", "statistics", "wwn", "alua"}},
	{"target/iscsi", []string{"discovery_auth"}},
	{"target/iscsi/*", []string{"fabric_statistics"}},
	{"target/iscsi/*/tpgt_*", []string{"lun", "np", "acls", "attrib", "auth", "param"}},
	{"target/iscsi/*/tpgt_*/lun/*", []string{"statistics"}},
	{"target/iscsi/*/tpgt_*/np/*", nil},
	{"target/iscsi/*/tpgt_*/acls/*", []string{"attrib", "auth", "param"}},
	{"target/iscsi/*/tpgt_*/acls/*/lun_*", []string{"statistics"}},
}

var linkDirs = []string{
	"nvmet/subsystems/*/allowed_hosts",
	"nvmet/ports/*/subsystems",
	"target/iscsi/*/tpgt_*/lun/*",
	"target/iscsi/*/tpgt_*/acls/*/lun_*",
}

func newConfigFS(root string) *ConfigFS {
	for _, d := range []string{"nvmet/subsystems", "nvmet/ports", "nvmet/hosts", "target/core"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			panic(err)
		}
	}
	return &ConfigFS{Root: root, items: map[string]bool{}}
}

func (f *ConfigFS) rel(p string) (string, error) {
	r, err := filepath.Rel(f.Root, p)
	if err != nil || strings.HasPrefix(r, "..") {
		return "", &fs.PathError{Op: "configfs", Path: p, Err: syscall.EXDEV}
	}
	return filepath.ToSlash(r), nil
}

func match(pattern, rel string) bool {
	ok, _ := path.Match(pattern, rel)
	return ok
}

func (f *ConfigFS) Mkdir(p string) error {
	rel, err := f.rel(p)
	if err != nil {
		return err
	}
	for _, k := range itemKinds {
		if !match(k.pattern, rel) {
			continue
		}
		if err := os.Mkdir(p, 0o755); err != nil {
			return err
		}
		for _, g := range k.groups {
			if err := os.Mkdir(filepath.Join(p, g), 0o755); err != nil {
				return err
			}
		}
		if match("target/core/*", rel) { // an HBA has attributes
			_ = os.WriteFile(filepath.Join(p, "hba_info"), []byte("HBA Index: 1\n"), 0o644)
		}
		f.items[rel] = true
		return nil
	}
	return &fs.PathError{Op: "mkdir", Path: p, Err: syscall.EPERM}
}

func (f *ConfigFS) Rmdir(p string) error {
	rel, err := f.rel(p)
	if err != nil {
		return err
	}
	if !f.items[rel] {
		return &fs.PathError{Op: "rmdir", Path: p, Err: syscall.EPERM}
	}
	for it := range f.items {
		if strings.HasPrefix(it, rel+"/") {
			return &fs.PathError{Op: "rmdir", Path: p, Err: syscall.ENOTEMPTY}
		}
	}
	busy := false
	_ = filepath.WalkDir(f.Root, func(q string, d fs.DirEntry, err error) error {
		if err != nil || d.Type()&fs.ModeSymlink == 0 {
			return nil //nolint:nilerr // unreadable entries are skipped
		}
		t, _ := os.Readlink(q)
		if strings.HasPrefix(q, p+"/") || t == p || strings.HasPrefix(t, p+"/") {
			busy = true
		}
		return nil
	})
	if busy {
		return &fs.PathError{Op: "rmdir", Path: p, Err: syscall.EBUSY}
	}
	delete(f.items, rel)
	return os.RemoveAll(p)
}

func (f *ConfigFS) ReadFile(p string) ([]byte, error) { return os.ReadFile(p) }

func (f *ConfigFS) WriteFile(p string, data []byte) error {
	rel, err := f.rel(p)
	if err != nil {
		return err
	}
	if fi, err := os.Stat(filepath.Dir(p)); err != nil || !fi.IsDir() {
		return &fs.PathError{Op: "open", Path: p, Err: syscall.ENOENT}
	}
	for _, suffix := range f.FailWrites {
		if strings.HasSuffix(p, suffix) {
			return &fs.PathError{Op: "write", Path: p, Err: syscall.EIO}
		}
	}
	v := strings.TrimSpace(string(data))
	dir, name := filepath.Dir(p), filepath.Base(p)
	attr := func(n string) string {
		b, _ := os.ReadFile(filepath.Join(dir, n))
		return strings.TrimSpace(string(b))
	}
	einval := &fs.PathError{Op: "write", Path: p, Err: syscall.EINVAL}
	switch {
	case match("nvmet/subsystems/*/namespaces/*/device_*", rel) && attr("enable") == "1":
		return &fs.PathError{Op: "write", Path: p, Err: syscall.EBUSY}
	case match("nvmet/subsystems/*/namespaces/*/enable", rel) && v == "1" && attr("device_path") == "":
		return einval
	case match("nvmet/subsystems/*/attr_allow_any_host", rel) && v == "1" && len(f.linksIn(filepath.Join(dir, "allowed_hosts"))) > 0:
		return einval
	case match("nvmet/ports/*/addr_*", rel) && len(f.linksIn(filepath.Join(dir, "subsystems"))) > 0:
		return &fs.PathError{Op: "write", Path: p, Err: syscall.EACCES}
	case match("target/core/*/*/enable", rel) && v == "1" && !strings.Contains(attr("control"), "udev_path="):
		return einval
	case match("target/core/*/*/wwn/vpd_unit_serial", rel) && f.soLinked(filepath.Dir(dir)):
		return einval
	}
	if name == "control" { // control accumulates parameters
		old, _ := os.ReadFile(p)
		data = append(old, data...)
	}
	return os.WriteFile(p, data, 0o644)
}

func (f *ConfigFS) linksIn(dir string) []string {
	ents, _ := os.ReadDir(dir)
	var out []string
	for _, e := range ents {
		if e.Type()&fs.ModeSymlink != 0 {
			out = append(out, e.Name())
		}
	}
	return out
}

func (f *ConfigFS) soLinked(so string) bool {
	linked := false
	_ = filepath.WalkDir(filepath.Join(f.Root, "target", "iscsi"), func(q string, d fs.DirEntry, err error) error {
		if err == nil && d.Type()&fs.ModeSymlink != 0 {
			if t, _ := os.Readlink(q); t == so {
				linked = true
			}
		}
		return nil
	})
	return linked
}

func (f *ConfigFS) Symlink(target, link string) error {
	rel, err := f.rel(link)
	if err != nil {
		return err
	}
	trel, err := f.rel(target)
	if err != nil || !f.items[trel] {
		return &fs.PathError{Op: "symlink", Path: link, Err: syscall.ENOENT}
	}
	ok := false
	for _, d := range linkDirs {
		ok = ok || match(d, path.Dir(rel))
	}
	if !ok {
		return &fs.PathError{Op: "symlink", Path: link, Err: syscall.EPERM}
	}
	if match("nvmet/subsystems/*/allowed_hosts", path.Dir(rel)) {
		b, _ := os.ReadFile(filepath.Join(filepath.Dir(filepath.Dir(link)), "attr_allow_any_host"))
		if strings.TrimSpace(string(b)) == "1" {
			return &fs.PathError{Op: "symlink", Path: link, Err: syscall.EINVAL}
		}
	}
	return os.Symlink(target, link)
}

func (f *ConfigFS) Readlink(p string) (string, error) { return os.Readlink(p) }

func (f *ConfigFS) Unlink(p string) error {
	fi, err := os.Lstat(p)
	if err != nil {
		return err
	}
	if fi.Mode()&fs.ModeSymlink == 0 {
		return &fs.PathError{Op: "unlink", Path: p, Err: syscall.EPERM}
	}
	return os.Remove(p)
}

func (f *ConfigFS) ReadDir(p string) ([]fs.DirEntry, error) { return os.ReadDir(p) }
func (f *ConfigFS) Lstat(p string) (fs.FileInfo, error)     { return os.Lstat(p) }

// Tree lists every item, link and non-empty attribute under the root,
// one per line ("d path", "l path -> target", "a path = value"), for
// assertions that see the whole picture.
func (f *ConfigFS) Tree() []string {
	var out []string
	_ = filepath.WalkDir(f.Root, func(q string, d fs.DirEntry, err error) error {
		if err != nil || q == f.Root {
			return nil //nolint:nilerr // unreadable entries are skipped
		}
		rel, _ := f.rel(q)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			t, _ := os.Readlink(q)
			tr, _ := f.rel(t)
			out = append(out, "l "+rel+" -> "+tr)
		case d.IsDir():
			if f.items[rel] {
				out = append(out, "d "+rel)
			}
		default:
			b, _ := os.ReadFile(q)
			if v := strings.TrimSpace(string(b)); v != "" {
				out = append(out, "a "+rel+" = "+v)
			}
		}
		return nil
	})
	return out
}
