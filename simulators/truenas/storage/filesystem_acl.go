package storage

import (
	"encoding/json"
	"errors"
	"os"
	"path"
	"strconv"
	"strings"
	"syscall"

	"github.com/switchyard-csi/switchyard/simulators/truenas/middleware"
)

// filesystem.getacl / filesystem.setacl (plugins/filesystem_/acl.py). The
// ACL type of a path is its dataset's acltype (posix: POSIX1E, nfsv4:
// NFS4, off: DISABLED). The simulator cannot count on kernel ACLs where it
// runs, so a non-trivial ACL is kept beside the directory: in an extended
// attribute of the real directory (it survives a restart), or in memory
// where the filesystem has no user xattrs. The owner and the mode bits a
// POSIX ACL implies are applied for real.

const aclXattr = "user.truenas-sim.acl"

func (s *service) registerACL() {
	s.r.Add(middleware.Method{Name: "filesystem.getacl", Params: []string{"path", "simplified", "resolve_ids"}, Handler: s.getacl})
	s.r.Add(middleware.Method{Name: "filesystem.setacl", Job: true, Params: []string{"filesystem_acl"}, Handler: s.setacl,
		Validate: func(p []json.RawMessage) error {
			if err := positional(p, 1); err != nil {
				return err
			}
			_, err := s.setaclSchema().parse(param(p, 0))
			return err
		}})
}

// aclTypeOf is path_get_acltype for an API path.
func (s *service) aclTypeOf(apiPath string) string {
	ds := s.datasetContaining(apiPath)
	if ds == "" {
		return "DISABLED"
	}
	pv, err := s.m.GetProperty(ds, "acltype", true)
	if err != nil {
		return "DISABLED"
	}
	switch pv.Value {
	case "posix", "posixacl":
		return "POSIX1E"
	case "nfsv4":
		return "NFS4"
	}
	return "DISABLED"
}

// storedACL is what setacl left on a path (nil: a trivial ACL).
func (s *service) storedACL(host string) []any {
	var raw []byte
	buf := make([]byte, 64<<10)
	if n, err := syscall.Getxattr(host, aclXattr, buf); err == nil {
		raw = buf[:n]
	} else if v, ok := s.acls.Load(host); ok {
		raw = v.([]byte)
	}
	if raw == nil {
		return nil
	}
	var l []any
	if json.Unmarshal(raw, &l) != nil {
		return nil
	}
	return l
}

func (s *service) storeACL(host string, acl []any) error {
	if acl == nil {
		s.acls.Delete(host)
		if err := syscall.Removexattr(host, aclXattr); err != nil && !errors.Is(err, syscall.ENODATA) &&
			!errors.Is(err, syscall.ENOTSUP) && !errors.Is(err, syscall.EPERM) {
			return err
		}
		return nil
	}
	raw, _ := json.Marshal(acl)
	if err := syscall.Setxattr(host, aclXattr, raw, 0); err != nil {
		s.acls.Store(host, raw) // no user xattrs here: keep it in memory
	}
	return nil
}

func (s *service) getacl(_ *middleware.Call, params []json.RawMessage) (any, error) {
	if err := positional(params, 3); err != nil {
		return nil, err
	}
	p, err := stringParam(params, 0, "path")
	if err != nil {
		return nil, err
	}
	var resolve bool
	if raw := param(params, 2); len(raw) > 0 {
		if json.Unmarshal(raw, &resolve) != nil {
			return nil, middleware.Invalid("resolve_ids", "%s", map[bool]string{true: "Input should be a valid boolean", false: "Not a boolean"}[s.fsPydantic()])
		}
	}
	return s.aclOf(p, resolve)
}

func (s *service) aclOf(p string, resolve bool) (map[string]any, error) {
	clean := path.Clean(p)
	if !path.IsAbs(p) || !strings.HasPrefix(clean, altroot+"/") && clean != altroot {
		return nil, middleware.Errorf(18, "%s is external to TrueNAS", p) // EXDEV
	}
	host, ok := s.hostDir(clean)
	fi, err := os.Stat(host)
	if !ok || err != nil {
		return nil, middleware.Errorf(middleware.ENOENT, "Path not found.")
	}
	st, _ := fi.Sys().(*syscall.Stat_t)
	uid, gid := -1, -1
	if st != nil {
		uid, gid = int(st.Uid), int(st.Gid)
	}
	out := map[string]any{"path": p, "uid": uid, "gid": gid, "user": nil, "group": nil}
	if resolve {
		if uid == 0 {
			out["user"] = "root"
		}
		if gid == 0 {
			out["group"] = "root"
		}
	}
	mode := uint32(fi.Mode().Perm())
	switch s.aclTypeOf(clean) {
	case "POSIX1E":
		acl := s.storedACL(host)
		if acl == nil {
			acl = trivialPOSIX(mode)
		}
		out["acltype"], out["acl"], out["trivial"] = "POSIX1E", acl, len(acl) == 3
	case "NFS4":
		acl := s.storedACL(host)
		trivial := acl == nil
		if trivial {
			acl = trivialNFS4(mode)
		}
		out["acltype"], out["acl"], out["trivial"] = "NFS4", acl, trivial
		out["aclflags"] = map[string]any{"autoinherit": false, "protected": false, "defaulted": false}
	default:
		out["acltype"], out["acl"], out["trivial"] = "DISABLED", nil, true
	}
	return out, nil
}

func rwx(bits uint32) map[string]any {
	return map[string]any{"READ": bits&4 != 0, "WRITE": bits&2 != 0, "EXECUTE": bits&1 != 0}
}

// trivialPOSIX is what getfacl shows for a path without an ACL: the mode.
func trivialPOSIX(mode uint32) []any {
	ace := func(tag string, bits uint32) any {
		return map[string]any{"default": false, "tag": tag, "id": -1, "perms": rwx(bits)}
	}
	return []any{ace("USER_OBJ", mode>>6&7), ace("GROUP_OBJ", mode>>3&7), ace("OTHER", mode&7)}
}

// trivialNFS4 is the simplified form of the ACL ZFS derives from a mode.
func trivialNFS4(mode uint32) []any {
	basic := func(bits uint32) string {
		switch {
		case bits == 7:
			return "MODIFY"
		case bits&5 == 5:
			return "READ"
		case bits&1 != 0:
			return "TRAVERSE"
		}
		return ""
	}
	var out []any
	for _, e := range []struct {
		tag  string
		bits uint32
	}{{"owner@", mode >> 6 & 7}, {"group@", mode >> 3 & 7}, {"everyone@", mode & 7}} {
		b := basic(e.bits)
		if e.tag == "owner@" && e.bits == 7 {
			b = "FULL_CONTROL"
		}
		if b == "" {
			continue
		}
		out = append(out, map[string]any{"tag": e.tag, "id": -1, "type": "ALLOW",
			"perms": map[string]any{"BASIC": b}, "flags": map[string]any{"BASIC": "NOINHERIT"}})
	}
	return out
}

func (s *service) setaclSchema() schema {
	pyd := s.fsPydantic()
	id := rangeCheck(pyd, -1, 2147483647)
	opts := &schema{name: "options", pydantic: pyd, fields: []field{
		{name: "stripacl", typ: tBool, def: false}, {name: "recursive", typ: tBool, def: false},
		{name: "traverse", typ: tBool, def: false}, {name: "canonicalize", typ: tBool, def: true},
		{name: "validate_effective_acl", typ: tBool, def: true},
	}}
	flags := &schema{name: "nfs41_flags", pydantic: pyd, fields: []field{
		{name: "autoinherit", typ: tBool, def: false}, {name: "protected", typ: tBool, def: false},
		{name: "defaulted", typ: tBool, def: false},
	}}
	return schema{name: "filesystem_acl", pydantic: pyd, fields: []field{
		{name: "path", typ: tStr, required: true},
		{name: "dacl", typ: tList, required: true},
		{name: "options", typ: tObj, obj: opts, def: args{"stripacl": false, "recursive": false, "traverse": false,
			"canonicalize": true, "validate_effective_acl": true}},
		{name: "nfs41_flags", typ: tObj, obj: flags, def: args{"autoinherit": false, "protected": false, "defaulted": false}},
		{name: "uid", typ: tInt, null: true, check: id, def: int64(-1)},
		{name: "user", typ: tStr, null: true},
		{name: "gid", typ: tInt, null: true, check: id, def: int64(-1)},
		{name: "group", typ: tStr, null: true},
		{name: "acltype", typ: tStr, null: true, enum: []string{"NFS4", "POSIX1E"}},
	}}
}

var posixTags = map[string]bool{"USER_OBJ": true, "GROUP_OBJ": true, "OTHER": true, "MASK": true, "USER": true, "GROUP": true}
var nfs4Tags = map[string]bool{"owner@": true, "group@": true, "everyone@": true, "USER": true, "GROUP": true}

func (s *service) setacl(c *middleware.Call, params []json.RawMessage) (any, error) {
	if err := positional(params, 1); err != nil {
		return nil, err
	}
	sc := s.setaclSchema()
	a, err := sc.parse(param(params, 0))
	if err != nil {
		return nil, err
	}
	o := a.sub("options")
	dacl, _ := a["dacl"].([]any)
	if s.fsPydantic() && len(dacl) > 0 && o.boolean("stripacl") {
		return nil, middleware.Invalid(sc.name, "Value error, Simultaneosuly setting and removing ACL from path is not supported")
	}
	var errs middleware.ValidationErrors
	p := a.str("path")
	host, err := s.permPathValidate("filesystem.setacl", p, o.boolean("recursive"), &errs)
	if err != nil {
		return nil, err
	}
	uid, gid := -1, -1
	if n, ok := a.int("uid"); ok {
		uid = int(n)
	}
	if n, ok := a.int("gid"); ok {
		gid = int(n)
	}
	if u := a.str("user"); u != "" {
		if uid != -1 {
			errs = append(errs, middleware.ValidationError{Attribute: "filesystem.setacl.user", Message: "User and uid may not be specified simultaneously."})
		} else if u == "root" {
			uid = 0
		} else {
			errs = append(errs, middleware.ValidationError{Attribute: "filesystem.setacl.user", Message: u + ": user does not exist."})
		}
	}
	if g := a.str("group"); g != "" {
		if gid != -1 {
			errs = append(errs, middleware.ValidationError{Attribute: "filesystem.setacl.group", Message: "group and gid may not be specified simultaneously."})
		} else if g == "root" || g == "wheel" {
			gid = 0
		} else {
			errs = append(errs, middleware.ValidationError{Attribute: "filesystem.setacl.group", Message: g + ": group does not exist."})
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}
	current := s.aclTypeOf(path.Clean(p))
	if at := a.str("acltype"); at != "" && at != current {
		return nil, middleware.Invalid("filesystem.setacl.dacl.acltype", "ACL type is invalid for selected path")
	}
	progress(c, 0, "Preparing to set acl.")
	var stored []any
	mode := int64(-1)
	switch current {
	case "DISABLED":
		return nil, middleware.Errorf(95, "%s: ACLs disabled on path.", p) // EOPNOTSUPP
	case "POSIX1E":
		if !o.boolean("stripacl") {
			var bits [3]uint32
			for i, e := range dacl {
				ace, _ := e.(map[string]any)
				tag, _ := ace["tag"].(string)
				if !posixTags[tag] {
					return nil, middleware.Invalid("filesystem_acl.dacl."+strconv.Itoa(i)+".tag", "Input should be 'USER_OBJ', 'GROUP_OBJ', 'OTHER', 'MASK', 'USER' or 'GROUP'")
				}
				if def, _ := ace["default"].(bool); def {
					continue
				}
				perms, _ := ace["perms"].(map[string]any)
				var b uint32
				for bit, k := range map[uint32]string{4: "READ", 2: "WRITE", 1: "EXECUTE"} {
					if v, _ := perms[k].(bool); v {
						b |= bit
					}
				}
				switch tag {
				case "USER_OBJ":
					bits[0] = b
				case "GROUP_OBJ":
					bits[1] = b
				case "OTHER":
					bits[2] = b
				}
			}
			mode = int64(bits[0]<<6 | bits[1]<<3 | bits[2])
			if len(dacl) > 3 {
				stored = normalizeACEs(dacl)
			}
		}
	case "NFS4":
		for i, e := range dacl {
			ace, _ := e.(map[string]any)
			if tag, _ := ace["tag"].(string); !nfs4Tags[tag] {
				return nil, middleware.Invalid("filesystem_acl.dacl."+strconv.Itoa(i)+".tag", "Input should be 'owner@', 'group@', 'everyone@', 'USER' or 'GROUP'")
			}
		}
		if !o.boolean("stripacl") && len(dacl) > 0 {
			stored = normalizeACEs(dacl)
		}
	}
	progress(c, 50, "Setting ACL.")
	if err := s.storeACL(host, stored); err != nil {
		return nil, middleware.Errorf(middleware.EFAULT, "%v", err)
	}
	if err := s.apply(p, host, mode, uid, gid, false, false); err != nil {
		return nil, middleware.Errorf(middleware.EFAULT, "%v", err)
	}
	progress(c, 100, "Finished setting ACL.")
	return s.aclOf(p, false)
}

// normalizeACEs fills the id every entry reads back with (-1 unless given).
func normalizeACEs(dacl []any) []any {
	out := make([]any, 0, len(dacl))
	for _, e := range dacl {
		ace, _ := e.(map[string]any)
		c := map[string]any{}
		for k, v := range ace {
			c[k] = v
		}
		if _, ok := c["id"]; !ok || c["id"] == nil {
			c["id"] = -1
		}
		delete(c, "who")
		out = append(out, c)
	}
	return out
}
