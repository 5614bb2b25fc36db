package storage

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/switchyard-csi/switchyard/simulators/truenas/middleware"
	"github.com/switchyard-csi/switchyard/simulators/zfsmodel"
)

func (s *service) registerFilesystem() {
	// The single argument's name: the legacy Dict's, then the pydantic
	// model's (single_argument_args) from 25.04.
	perm, own := "filesystem_permission", "filesystem_ownership"
	if s.fsPydantic() {
		perm, own = "filesystem_setperm", "filesystem_chown"
	}
	s.r.Add(middleware.Method{Name: "filesystem.setperm", Job: true, Params: []string{perm}, Handler: s.setperm})
	s.r.Add(middleware.Method{Name: "filesystem.chown", Job: true, Params: []string{own}, Handler: s.chown})
	s.r.Add(middleware.Method{Name: "filesystem.stat", Params: []string{"path"}, Handler: s.stat})
}

// fsPydantic: the filesystem methods moved to the pydantic API in 25.04.
func (s *service) fsPydantic() bool { return s.v.AtLeast(25, 4, 0) }

// unixPerm is the UnixPerm validator: an octal string of permission bits.
func unixPerm(v any) string {
	str, _ := v.(string)
	n, err := strconv.ParseUint(str, 8, 32)
	if err != nil {
		return "Not a valid integer. Must be octal."
	}
	if n&0o777 != n {
		return "Please supply a value between 000 and 777"
	}
	return ""
}

func (s *service) permSchema(setperm bool) schema {
	pyd := s.fsPydantic()
	name := "filesystem_permission"
	if !setperm {
		name = "filesystem_ownership"
	}
	if pyd {
		name = map[bool]string{true: "filesystem_setperm", false: "filesystem_chown"}[setperm]
	}
	opts := []field{{name: "recursive", typ: tBool, def: false}, {name: "traverse", typ: tBool, def: false}}
	if setperm {
		opts = append(opts, field{name: "stripacl", typ: tBool, def: false})
	}
	id := rangeCheck(pyd, -1, 2147483647)
	f := []field{
		{name: "path", typ: tStr, required: true},
		{name: "uid", typ: tInt, null: true, check: id},
		{name: "gid", typ: tInt, null: true, check: id},
		{name: "options", typ: tObj, obj: &schema{name: "options", pydantic: pyd, fields: opts},
			def: args{"recursive": false, "traverse": false, "stripacl": false}},
	}
	if setperm {
		f = append(f, field{name: "mode", typ: tStr, null: true, check: unixPerm})
	}
	if pyd {
		f = append(f, field{name: "user", typ: tStr, null: true}, field{name: "group", typ: tStr, null: true})
	}
	return schema{name: name, pydantic: pyd, fields: f}
}

// ownerOf is the owner a setperm/chown payload asks for: -1 leaves it
// unchanged.
func ownerOf(a args, method string, errs *middleware.ValidationErrors) (int, int) {
	uid, gid := -1, -1
	if n, ok := a.int("uid"); ok {
		uid = int(n)
	}
	if n, ok := a.int("gid"); ok {
		gid = int(n)
	}
	// the simulated host knows only root
	if u := a.str("user"); u != "" {
		if u == "root" {
			uid = 0
		} else {
			*errs = append(*errs, middleware.ValidationError{Attribute: method + ".user", Message: u + ": user does not exist"})
		}
	}
	if g := a.str("group"); g != "" {
		if g == "root" || g == "wheel" {
			gid = 0
		} else {
			*errs = append(*errs, middleware.ValidationError{Attribute: method + ".group", Message: g + ": group does not exist"})
		}
	}
	return uid, gid
}

// permPathValidate is _common_perm_path_validate: the path must exist,
// be beneath /mnt, not be a pool's mountpoint nor on a read-only dataset.
func (s *service) permPathValidate(method, p string, recursive bool, errs *middleware.ValidationErrors) (string, error) {
	add := func(msg string) {
		*errs = append(*errs, middleware.ValidationError{Attribute: method + ".path", Message: msg})
	}
	if !path.IsAbs(p) {
		add("Must be an absolute path")
		return "", nil
	}
	clean := path.Clean(p)
	if !strings.HasPrefix(clean, altroot+"/") {
		add("Changes to permissions on paths that are not beneath the directory /mnt are not permitted: " + p)
		return "", nil
	}
	host, ok := s.hostDir(clean)
	if !ok {
		return "", middleware.Errorf(middleware.ENOENT, "Path %s not found", p)
	}
	st, err := os.Lstat(host)
	if err != nil {
		return "", middleware.Errorf(middleware.ENOENT, "Path %s not found", p)
	}
	switch {
	case st.Mode().IsRegular() && recursive:
		add("Recursive operations on a file are invalid.")
	case strings.Count(clean, "/") == 2:
		add(`The specified path is a ZFS pool mountpoint "(` + p + `)" `)
	default:
		if ds := s.datasetContaining(clean); ds != "" {
			if pv, err := s.m.GetProperty(ds, "readonly", true); err == nil && pv.Value == "on" {
				add(p + ": dataset underlying path has the readonly property enabled.")
			}
		}
	}
	return host, nil
}

// mounts maps the /mnt mountpoints of mounted filesystems to their names.
func (s *service) mounts() map[string]string {
	out := map[string]string{}
	names, _ := s.m.List("", true, zfsmodel.Filesystem)
	for _, n := range names {
		if mp := s.datasetMountpoint(n); mp != "" {
			out[mp] = n
		}
	}
	return out
}

// datasetContaining is the filesystem mounted at the longest prefix of an
// API path.
func (s *service) datasetContaining(p string) string {
	m := s.mounts()
	for cur := p; cur != "/"; cur = path.Dir(cur) {
		if n, ok := m[cur]; ok {
			return n
		}
	}
	return ""
}

// apply changes mode and owner of host (and, recursive, what is below it
// in the same dataset; traverse: also in child datasets). Owner changes
// need root: without it they are skipped, as the simulator cannot make
// them.
func (s *service) apply(apiPath, host string, mode int64, uid, gid int, recursive, traverse bool) error {
	skip := map[string]bool{}
	if recursive && !traverse {
		for mp := range s.mounts() {
			if strings.HasPrefix(mp, path.Clean(apiPath)+"/") {
				if h, ok := s.hostDir(mp); ok {
					skip[h] = true
				}
			}
		}
	}
	one := func(p string) error {
		if mode >= 0 {
			if err := syscall.Chmod(p, uint32(mode)); err != nil {
				return err
			}
		}
		if uid != -1 || gid != -1 {
			if err := os.Lchown(p, uid, gid); err != nil {
				if errors.Is(err, fs.ErrPermission) && os.Geteuid() != 0 {
					s.log.Debug("ownership change skipped: not root", "path", p)
					return nil
				}
				return err
			}
		}
		return nil
	}
	if !recursive {
		return one(host)
	}
	return filepath.WalkDir(host, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && skip[p] {
			return filepath.SkipDir
		}
		if d.Type()&fs.ModeSymlink != 0 {
			return nil
		}
		return one(p)
	})
}

func (s *service) setperm(c *middleware.Call, params []json.RawMessage) (any, error) {
	if err := positional(params, 1); err != nil {
		return nil, err
	}
	sc := s.permSchema(true)
	a, err := sc.parse(param(params, 0))
	if err != nil {
		return nil, err
	}
	o := a.sub("options")
	mode, hasMode := a["mode"].(string)
	if s.fsPydantic() && !hasMode && !o.boolean("stripacl") {
		return nil, middleware.Invalid(sc.name, "Value error, Payload must either explicitly specify permissions or contain the stripacl option.")
	}
	progress(c, 0, "Preparing to set permissions.")
	var errs middleware.ValidationErrors
	uid, gid := ownerOf(a, "filesystem.setperm", &errs)
	p := a.str("path")
	host, err := s.permPathValidate("filesystem.setperm", p, o.boolean("recursive"), &errs)
	if err != nil {
		return nil, err
	}
	n := int64(-1)
	if hasMode {
		n, _ = strconv.ParseInt(mode, 8, 64)
		if n == 0 {
			errs = append(errs, middleware.ValidationError{Attribute: "filesystem.setperm.mode", Message: "Empty permissions are not permitted."})
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}
	if o.boolean("recursive") {
		progress(c, 10, "Recursively setting permissions on "+p+".")
	}
	if err := s.apply(p, host, n, uid, gid, o.boolean("recursive"), o.boolean("traverse")); err != nil {
		return nil, middleware.Errorf(middleware.EFAULT, "%v", err)
	}
	progress(c, 100, "Finished setting permissions.")
	return nil, nil
}

func (s *service) chown(c *middleware.Call, params []json.RawMessage) (any, error) {
	if err := positional(params, 1); err != nil {
		return nil, err
	}
	sc := s.permSchema(false)
	a, err := sc.parse(param(params, 0))
	if err != nil {
		return nil, err
	}
	if s.fsPydantic() && a["uid"] == nil && a["gid"] == nil && a["user"] == nil && a["group"] == nil {
		return nil, middleware.Invalid(sc.name, "Value error, At least one of uid, gid, user, and group must be set in chown payload")
	}
	progress(c, 0, "Preparing to change owner.")
	var errs middleware.ValidationErrors
	uid, gid := ownerOf(a, "filesystem.chown", &errs)
	if !s.fsPydantic() && uid == -1 && gid == -1 {
		errs = append(errs, middleware.ValidationError{Attribute: "filesystem.chown.uid", Message: "Please specify either user or group to change."})
	}
	o := a.sub("options")
	p := a.str("path")
	host, err := s.permPathValidate("filesystem.chown", p, o.boolean("recursive"), &errs)
	if err != nil {
		return nil, err
	}
	if len(errs) > 0 {
		return nil, errs
	}
	if o.boolean("recursive") {
		progress(c, 10, "Recursively changing owner of "+p+".")
	}
	if err := s.apply(p, host, -1, uid, gid, o.boolean("recursive"), o.boolean("traverse")); err != nil {
		return nil, middleware.Errorf(middleware.EFAULT, "%v", err)
	}
	progress(c, 100, "Finished changing owner.")
	return nil, nil
}

// stat is filesystem.stat(path) on the dataset's real directory.
func (s *service) stat(_ *middleware.Call, params []json.RawMessage) (any, error) {
	if err := positional(params, 1); err != nil {
		return nil, err
	}
	p, err := stringParam(params, 0, "path")
	if err != nil {
		return nil, err
	}
	if !path.IsAbs(p) {
		return nil, middleware.Errorf(middleware.EINVAL, "%s: path must be absolute", p)
	}
	clean := path.Clean(p)
	host, ok := s.hostDir(clean)
	if !ok {
		return nil, middleware.Errorf(middleware.ENOENT, "Path %s not found", p)
	}
	fi, err := os.Lstat(host)
	if err != nil {
		return nil, middleware.Errorf(middleware.ENOENT, "Path %s not found", p)
	}
	st, _ := fi.Sys().(*syscall.Stat_t)
	if st == nil {
		return nil, middleware.Errorf(middleware.EFAULT, "cannot stat %s", p)
	}
	typ := "OTHER"
	switch {
	case fi.IsDir():
		typ = "DIRECTORY"
	case fi.Mode().IsRegular():
		typ = "FILE"
	case fi.Mode()&fs.ModeSymlink != 0:
		typ = "SYMLINK"
	}
	_, isMount := s.mounts()[clean]
	ts := func(t syscall.Timespec) float64 { return float64(t.Sec) + float64(t.Nsec)/1e9 }
	name := func(id uint32) any {
		if id == 0 {
			return "root"
		}
		return nil
	}
	return map[string]any{
		"realpath": clean, "type": typ, "size": st.Size, "allocation_size": st.Blocks * 512,
		"mode": st.Mode, "mount_id": 0, "uid": st.Uid, "gid": st.Gid,
		"atime": ts(st.Atim), "mtime": ts(st.Mtim), "ctime": ts(st.Ctim), "btime": ts(st.Ctim),
		"dev": st.Dev, "inode": st.Ino, "nlink": st.Nlink, "acl": false,
		"is_mountpoint": isMount, "is_ctldir": false, "attributes": []any{},
		"user": name(st.Uid), "group": name(st.Gid),
	}, nil
}
