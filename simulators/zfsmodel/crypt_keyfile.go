package zfsmodel

import (
	"errors"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// keylocation=file://<path> names a file on the ZFS host. The simulated
// host's files are its mounted filesystems (what its NFS and SMB shares
// and zvols serve), so the path is resolved inside those, never on the
// machine that runs the simulator: a key location like file:///etc/shadow,
// or a symbolic link a client wrote into a share pointing out of it, is a
// file the simulated host does not have, and zfs's answer for that is
// "Failed to open key material file: No such file or directory".

// fetchKey reads key material from a key location: stdin for "prompt",
// the file for file:// (keylocation=https:// is not modelled). The model
// must not be locked: a key file is looked up under its read lock.
func (m *Model) fetchKey(location, format string, stdin io.Reader) keyInput {
	switch {
	case location == "prompt":
		km, err := readKeyMaterial(stdin, format)
		return keyInput{km, err}
	case strings.HasPrefix(location, "file://"):
		f, err := m.openKeyFile(strings.TrimPrefix(location, "file://"))
		if err != nil {
			return keyInput{err: errors.New("Failed to open key material file: " + strerror(err))}
		}
		defer f.Close()
		km, err := readKeyMaterial(f, format)
		return keyInput{km, err}
	case strings.HasPrefix(location, "https://"), strings.HasPrefix(location, "http://"):
		return keyInput{err: errors.New("URI scheme is not supported")}
	}
	return keyInput{err: errors.New("Invalid keylocation")}
}

// openKeyFile opens the absolute path p of the simulated host: inside the
// filesystem mounted at its longest prefix, through an os.Root on that
// filesystem's directory, so neither ".." nor a symbolic link leads out
// of it. Anything else does not exist there.
func (m *Model) openKeyFile(p string) (*os.File, error) {
	if !strings.HasPrefix(p, "/") {
		return nil, os.ErrNotExist
	}
	if err := m.beginRead(); err != nil {
		return nil, err
	}
	d, rel := m.mountAt(path.Clean(p))
	dir := ""
	if d != nil {
		dir = m.fsDir(d)
		// A child filesystem's data sits in its parent's directory here;
		// on a host it is a mount of its own, and when it is not mounted
		// (mountAt found the parent) its files are not there.
		first, _, _ := strings.Cut(rel, "/")
		if childDirNames(d)[first] {
			d = nil
		}
	}
	m.mu.RUnlock()
	if d == nil || rel == "" {
		return nil, os.ErrNotExist
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, os.ErrNotExist
	}
	defer root.Close()
	f, err := root.Open(filepath.FromSlash(rel))
	switch {
	case err == nil:
		return f, nil
	case errors.Is(err, os.ErrPermission):
		return nil, err
	}
	// Not there, or only reachable by leaving the filesystem.
	return nil, os.ErrNotExist
}
