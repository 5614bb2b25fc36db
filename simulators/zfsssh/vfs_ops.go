package zfsssh

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path"
	"slices"
	"strings"
)

// Reading and changing files of the virtual filesystem.

// memWriter collects a write to an in-memory file and stores it on Close.
type memWriter struct {
	v    *vfs
	p    string
	buf  bytes.Buffer
	done bool
}

func (w *memWriter) Write(b []byte) (int, error) { return w.buf.Write(b) }

func (w *memWriter) Close() error {
	if w.done {
		return nil
	}
	w.done = true
	w.v.mu.Lock()
	e := w.v.mem[w.p]
	if e == nil {
		e = &memEntry{Mode: 0o644}
		w.v.mem[w.p] = e
	}
	e.Data = append(e.Data, w.buf.Bytes()...)
	w.v.mu.Unlock()
	return w.v.save()
}

// create opens p for writing (truncating unless appending).
func (v *vfs) create(p string, appendTo bool, u *account, root bool, uid int) (io.WriteCloser, error) {
	if p == "/dev/null" {
		return nopWriteCloser{io.Discard}, nil
	}
	fi, err := v.stat(p)
	switch {
	case err == nil && fi.kind == kindDir:
		return nil, errIsDir
	case err == nil && fi.kind == kindBlock:
		return os.OpenFile(fi.realPath, os.O_WRONLY, 0)
	case errors.Is(err, errNotExist):
		if perr := v.parentDir(p); perr != nil {
			return nil, perr
		}
	case err != nil:
		return nil, err
	}
	if !mayWrite(p, u, root) {
		return nil, errPerm
	}
	if realPath, ok := v.host.HostPath(p); ok {
		flags := os.O_WRONLY | os.O_CREATE | os.O_TRUNC
		if appendTo {
			flags = os.O_WRONLY | os.O_CREATE | os.O_APPEND
		}
		return os.OpenFile(realPath, flags, 0o644)
	}
	v.mu.Lock()
	e := v.mem[p]
	if e == nil {
		e = &memEntry{Mode: 0o644, UID: uid, GID: uid}
		v.mem[p] = e
	}
	if !appendTo {
		e.Data = nil
	}
	v.mu.Unlock()
	return &memWriter{v: v, p: p}, nil
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// open opens p for reading.
func (v *vfs) open(p string) (io.ReadCloser, error) {
	if p == "/dev/null" {
		return io.NopCloser(strings.NewReader("")), nil
	}
	fi, err := v.stat(p)
	if err != nil {
		return nil, err
	}
	if fi.kind == kindDir {
		return nil, errIsDir
	}
	if fi.realPath != "" {
		return os.Open(fi.realPath)
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	return io.NopCloser(bytes.NewReader(bytes.Clone(v.mem[p].Data))), nil
}

// readFile returns an in-memory or host file's content.
func (v *vfs) readFile(p string) ([]byte, error) {
	r, err := v.open(p)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(r)
}

// writeFile replaces p's content (used by saveconfig), creating parents.
func (v *vfs) writeFile(p string, data []byte) error {
	if realPath, ok := v.host.HostPath(p); ok {
		if err := os.MkdirAll(path.Dir(realPath), 0o755); err != nil {
			return err
		}
		return writeFileAtomic(realPath, data)
	}
	v.putFile(p, data, 0o600)
	return v.save()
}

func (v *vfs) mkdir(p string, mode uint32, uid int) error {
	if realPath, ok := v.host.HostPath(p); ok {
		return os.Mkdir(realPath, unixToGo(mode))
	}
	v.mu.Lock()
	v.mem[p] = &memEntry{Dir: true, Mode: mode, UID: uid, GID: uid}
	v.mu.Unlock()
	return v.save()
}

func (v *vfs) touch(p string, uid int) error {
	if realPath, ok := v.host.HostPath(p); ok {
		f, err := os.OpenFile(realPath, os.O_WRONLY|os.O_CREATE, 0o644)
		if err != nil {
			return err
		}
		return f.Close()
	}
	v.mu.Lock()
	if v.mem[p] == nil {
		v.mem[p] = &memEntry{Mode: 0o644, UID: uid, GID: uid}
	}
	v.mu.Unlock()
	return v.save()
}

func (v *vfs) chmod(p string, fi fileInfo, mode uint32) error {
	if fi.realPath != "" {
		return os.Chmod(fi.realPath, unixToGo(mode))
	}
	v.mu.Lock()
	if e := v.mem[p]; e != nil {
		e.Mode = mode
	}
	v.mu.Unlock()
	return v.save()
}

func (v *vfs) entry(p string, fi fileInfo) *memEntry {
	if fi.realPath != "" {
		if v.over[p] == nil {
			v.over[p] = &memEntry{}
		}
		return v.over[p]
	}
	return v.mem[p]
}

func (v *vfs) chown(p string, fi fileInfo, uid, gid int) error {
	v.mu.Lock()
	if e := v.entry(p, fi); e != nil {
		if uid >= 0 {
			e.UID = uid
		}
		if gid >= 0 {
			e.GID = gid
		}
	}
	v.mu.Unlock()
	if fi.realPath != "" && os.Geteuid() == 0 {
		// Running as root (the lab), the real directory follows too.
		_ = os.Lchown(fi.realPath, uid, gid)
	}
	return v.save()
}

func (v *vfs) addACL(p string, fi fileInfo, ops []string) error {
	v.mu.Lock()
	if e := v.entry(p, fi); e != nil {
		e.ACL = append(e.ACL, ops...)
	}
	v.mu.Unlock()
	return v.save()
}

// files lists the names of the regular files directly in dir whose names
// start with prefix, sorted.
func (v *vfs) files(dir, prefix string) []string {
	var out []string
	if hostDir, ok := v.host.HostPath(dir); ok {
		ents, _ := os.ReadDir(hostDir)
		for _, e := range ents {
			if e.Type().IsRegular() && strings.HasPrefix(e.Name(), prefix) {
				out = append(out, e.Name())
			}
		}
		return out // os.ReadDir sorts by name
	}
	v.mu.Lock()
	for p, e := range v.mem {
		if !e.Dir && path.Dir(p) == dir && strings.HasPrefix(path.Base(p), prefix) {
			out = append(out, path.Base(p))
		}
	}
	v.mu.Unlock()
	slices.Sort(out)
	return out
}

// removeFile deletes a regular file; a missing file is not an error.
func (v *vfs) removeFile(p string) error {
	if hostFile, ok := v.host.HostPath(p); ok {
		if err := os.Remove(hostFile); err != nil && !os.IsNotExist(err) {
			return err
		}
		return nil
	}
	v.mu.Lock()
	if e, ok := v.mem[p]; ok && !e.Dir {
		delete(v.mem, p)
	}
	v.mu.Unlock()
	return v.save()
}
