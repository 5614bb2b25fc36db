package zfsmodel

import (
	"os"
	"path"
	"path/filepath"
	"strings"
)

// remount recomputes the mount table entries of d and its descendants,
// after a create, rename, receive or a change of mountpoint or canmount.
func (m *Model) remount(d *dataset) {
	m.unmountTree(d)
	m.mountTree(d)
}

func (m *Model) unmountTree(d *dataset) {
	if d.mountedAt != "" && m.mounts[d.mountedAt] == d {
		delete(m.mounts, d.mountedAt)
	}
	d.mountedAt = ""
	for _, c := range d.children {
		m.unmountTree(c)
	}
}

func (m *Model) mountTree(d *dataset) {
	if d.typ != Filesystem {
		return
	}
	if m.isMounted(d) {
		mp := m.mountpoint(d)
		if _, taken := m.mounts[mp]; !taken { // like a second mount on a busy mountpoint: it fails
			m.mounts[mp] = d
			d.mountedAt = mp
		}
	}
	for _, c := range d.sortedChildren() {
		m.mountTree(c)
	}
}

// HostPath maps an absolute path as zfs reports it, inside a mounted
// filesystem ("/tank/k8s/vols/pvc-1" or ".../pvc-1/sub"), to the directory
// on this machine that holds it. ok=false when no mounted filesystem
// contains the path or it would escape it.
func (m *Model) HostPath(p string) (string, bool) {
	if !strings.HasPrefix(p, "/") {
		return "", false
	}
	clean := path.Clean(p)
	if err := m.beginRead(); err != nil {
		return "", false
	}
	defer m.mu.RUnlock()
	d, rel := m.mountAt(clean)
	if d == nil {
		return "", false
	}
	return filepath.Join(m.fsDir(d), filepath.FromSlash(rel)), true
}

// mountAt finds the filesystem mounted at the longest prefix of a clean
// absolute path.
func (m *Model) mountAt(clean string) (*dataset, string) {
	if !strings.HasPrefix(clean, "/") {
		return nil, ""
	}
	for cur := clean; ; cur = path.Dir(cur) {
		if d := m.mounts[cur]; d != nil {
			return d, strings.TrimPrefix(clean[len(cur):], "/")
		}
		if cur == "/" {
			return nil, ""
		}
	}
}

// ZvolPath returns the sparse file that backs the zvol (what
// /dev/zvol/<dataset> stands for); ok=false if there is no such volume, or
// its encryption key is not loaded (zfs then makes no device node).
func (m *Model) ZvolPath(dataset string) (string, bool) {
	if err := m.beginRead(); err != nil {
		return "", false
	}
	defer m.mu.RUnlock()
	d := m.lookup(dataset)
	if d == nil || d.typ != Volume || !m.keyLoaded(d) {
		return "", false
	}
	return m.dataPath(d), true
}

// datasetForPath resolves a path argument (zfs list /tank/a) like
// zfs_path_to_zhandle: the filesystem mounted where the path is.
func (m *Model) datasetForPath(arg string) (*dataset, error) {
	p := arg
	if !strings.HasPrefix(p, "/") {
		p = "/" + p // the emulated commands run in "/"
	}
	d, _ := m.mountAt(path.Clean(p))
	if d == nil {
		return nil, newErr(KindNotFound, "'%s': not a ZFS filesystem", arg)
	}
	host := filepath.Join(m.fsDir(d), strings.TrimPrefix(path.Clean(p)[len(m.mountpoint(d)):], "/"))
	if _, err := os.Stat(host); err != nil {
		return nil, newErr(KindNotFound, "cannot open '%s': No such file or directory", arg)
	}
	return d, nil
}
