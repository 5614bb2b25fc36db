package zfsssh

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"
	"sync"
)

// The virtual filesystem joins three sources, in this order:
//   - devices: /dev/null, and /dev/zvol/<dataset> backed by Host.ZvolPath;
//   - the datasets' real directories, through Host.HostPath;
//   - a small in-memory tree for everything else (/etc, /run, /tmp, marker
//     files such as /var/run/nvmet-config-loaded, saveconfig files).
// Ownership and ACLs of real directories are kept in an overlay: the
// simulator need not run as root to let a driver chown a volume.

type fileKind int

const (
	kindFile fileKind = iota
	kindDir
	kindBlock
	kindChar
)

// memEntry is an in-memory file or directory, or the overlay of a real one.
type memEntry struct {
	Dir  bool     `json:"dir,omitempty"`
	Mode uint32   `json:"mode"` // permission and setuid/setgid/sticky bits, unix octal
	UID  int      `json:"uid"`
	GID  int      `json:"gid"`
	Data []byte   `json:"data,omitempty"`
	ACL  []string `json:"acl,omitempty"`
}

type fileInfo struct {
	kind     fileKind
	mode     uint32
	uid, gid int
	size     int64
	realPath string // the real file behind a host path or zvol
	acl      []string
}

var (
	errNotExist = errors.New("No such file or directory")
	errNotDir   = errors.New("Not a directory")
	errIsDir    = errors.New("Is a directory")
	errPerm     = errors.New("Permission denied")
	errNotPerm  = errors.New("Operation not permitted")
	errExist    = errors.New("File exists")
)

type vfs struct {
	host Host
	file string // persistence file; "" keeps the tree in memory only

	mu   sync.Mutex
	mem  map[string]*memEntry
	over map[string]*memEntry // overlay for host paths (mode unused)
}

type vfsState struct {
	Files   map[string]*memEntry `json:"files"`
	Overlay map[string]*memEntry `json:"overlay"`
}

func newVFS(host Host, stateFile string) (*vfs, error) {
	v := &vfs{host: host, file: stateFile, mem: map[string]*memEntry{}, over: map[string]*memEntry{}}
	if stateFile != "" {
		var st vfsState
		ok, err := readJSON(stateFile, &st)
		if err != nil {
			return nil, err
		}
		if ok {
			if st.Files != nil {
				v.mem = st.Files
			}
			if st.Overlay != nil {
				v.over = st.Overlay
			}
		}
	}
	return v, nil
}

// clean makes p absolute (relative to cwd) and folds /var/run into /run as
// on Debian, where it is a symlink.
func clean(cwd, p string) string {
	if !strings.HasPrefix(p, "/") {
		p = cwd + "/" + p
	}
	p = path.Clean(p)
	if p == "/var/run" || strings.HasPrefix(p, "/var/run/") {
		p = "/run" + strings.TrimPrefix(p, "/var/run")
	}
	return p
}

func (v *vfs) save() error {
	if v.file == "" {
		return nil
	}
	v.mu.Lock()
	data := vfsState{Files: v.mem, Overlay: v.over}
	buf, err := marshalJSON(data)
	v.mu.Unlock()
	if err != nil {
		return err
	}
	return writeFileAtomic(v.file, buf)
}

// ensureDir creates an in-memory directory (and parents) if absent.
func (v *vfs) ensureDir(p string, mode uint32, uid int) { //nolint:unparam // uid: every directory made so far is root's
	v.mu.Lock()
	defer v.mu.Unlock()
	for _, d := range ancestors(p, true) {
		if _, ok := v.mem[d]; !ok {
			v.mem[d] = &memEntry{Dir: true, Mode: mode, UID: uid, GID: uid}
		}
	}
}

// putFile stores an in-memory file, creating parent directories.
func (v *vfs) putFile(p string, data []byte, mode uint32) {
	v.ensureDir(path.Dir(p), 0o755, 0)
	v.mu.Lock()
	v.mem[p] = &memEntry{Mode: mode, Data: bytes.Clone(data)}
	v.mu.Unlock()
}

// ancestors lists "/", "/a", "/a/b" ... for p (including p when self).
func ancestors(p string, self bool) []string {
	out := []string{"/"}
	if p == "/" {
		return out
	}
	parts := strings.Split(strings.TrimPrefix(p, "/"), "/")
	if !self {
		parts = parts[:len(parts)-1]
	}
	cur := ""
	for _, part := range parts {
		cur += "/" + part
		out = append(out, cur)
	}
	return out
}

func (v *vfs) stat(p string) (fileInfo, error) {
	switch {
	case p == "/dev/null":
		return fileInfo{kind: kindChar, mode: 0o666}, nil
	case strings.HasPrefix(p, "/dev/zvol/"):
		if file, ok := v.host.ZvolPath(strings.TrimPrefix(p, "/dev/zvol/")); ok {
			fi := fileInfo{kind: kindBlock, mode: 0o660, gid: 6, realPath: file}
			if st, err := os.Stat(file); err == nil {
				fi.size = st.Size()
			}
			return fi, nil
		}
	}
	if realPath, ok := v.host.HostPath(p); ok {
		st, err := os.Stat(realPath)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return fileInfo{}, errNotExist
			}
			return fileInfo{}, errNotDir
		}
		fi := fileInfo{kind: kindFile, mode: goToUnix(st.Mode()), size: st.Size(), realPath: realPath}
		if st.IsDir() {
			fi.kind = kindDir
		}
		v.mu.Lock()
		if o := v.over[p]; o != nil {
			fi.uid, fi.gid, fi.acl = o.UID, o.GID, append([]string(nil), o.ACL...)
		}
		v.mu.Unlock()
		return fi, nil
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if e := v.mem[p]; e != nil {
		fi := fileInfo{kind: kindFile, mode: e.Mode, uid: e.UID, gid: e.GID, size: int64(len(e.Data)), acl: append([]string(nil), e.ACL...)}
		if e.Dir {
			fi.kind = kindDir
		}
		return fi, nil
	}
	// A path below an in-memory file is "Not a directory", as on Linux.
	for _, a := range ancestors(p, false) {
		if e := v.mem[a]; e != nil && !e.Dir {
			return fileInfo{}, errNotDir
		}
	}
	return fileInfo{}, errNotExist
}

// mayWrite is the simulator's permission model: root may change anything;
// other users only /tmp and their home. Dataset directories are root's.
func mayWrite(p string, u *account, root bool) bool {
	if root || p == "/dev/null" {
		return true
	}
	return p == "/tmp" || strings.HasPrefix(p, "/tmp/") || p == u.home || strings.HasPrefix(p, u.home+"/")
}

// parentDir checks that p's parent exists and is a directory.
func (v *vfs) parentDir(p string) error {
	fi, err := v.stat(path.Dir(p))
	if err != nil {
		return err
	}
	if fi.kind != kindDir {
		return errNotDir
	}
	return nil
}

// list returns the in-memory paths, sorted.
func (v *vfs) list() []string {
	v.mu.Lock()
	defer v.mu.Unlock()
	var out []string
	for p := range v.mem {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

func goToUnix(m fs.FileMode) uint32 {
	u := uint32(m.Perm())
	if m&fs.ModeSetuid != 0 {
		u |= 0o4000
	}
	if m&fs.ModeSetgid != 0 {
		u |= 0o2000
	}
	if m&fs.ModeSticky != 0 {
		u |= 0o1000
	}
	return u
}

func unixToGo(u uint32) fs.FileMode {
	m := fs.FileMode(u & 0o777)
	if u&0o4000 != 0 {
		m |= fs.ModeSetuid
	}
	if u&0o2000 != 0 {
		m |= fs.ModeSetgid
	}
	if u&0o1000 != 0 {
		m |= fs.ModeSticky
	}
	return m
}

// chownMem sets the owner of an in-memory entry (used for seeding).
func (v *vfs) chownMem(p string, uid int) {
	v.mu.Lock()
	if e := v.mem[p]; e != nil {
		e.UID, e.GID = uid, uid
	}
	v.mu.Unlock()
}

// FileState describes a file of the simulated host, for assertions.
type FileState struct {
	Dir      bool
	Block    bool     // a zvol device
	Mode     uint32   // permission bits, unix octal (0o755)
	UID, GID int      // owner (chown is recorded even when the simulator is not root)
	ACL      []string // the setfacl / nfs4_setfacl changes applied, in order
	Data     []byte   // content, for files kept in memory
}

// File describes path (as the simulated host sees it); ok is false when it
// does not exist.
func (s *Server) File(path string) (FileState, bool) {
	p := clean("/", path)
	fi, err := s.fs.stat(p)
	if err != nil {
		return FileState{}, false
	}
	st := FileState{Dir: fi.kind == kindDir, Block: fi.kind == kindBlock, Mode: fi.mode, UID: fi.uid, GID: fi.gid, ACL: fi.acl}
	if fi.realPath == "" && fi.kind == kindFile {
		st.Data, _ = s.fs.readFile(p)
	}
	return st, true
}
