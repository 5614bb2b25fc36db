package synology

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"time"
)

// MaxShareName is DSM's longest shared folder name; MaxShareDesc its
// longest description.
const (
	MaxShareName = 32
	MaxShareDesc = 64
	MaxShares    = 256
)

var shareNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

func init() {
	register("SYNO.Core.Share", "entry.cgi", 1, false, map[string]handler{
		"list": shareList, "get": shareGet, "create": shareCreate, "set": shareSet, "delete": shareDelete, "clone": shareClone,
	})
	register("SYNO.Core.Share.Snapshot", "entry.cgi", 2, false, map[string]handler{
		"create": shareSnapCreate, "list": shareSnapList, "delete": shareSnapDelete,
	})
	register("SYNO.Core.Share.Permission", "entry.cgi", 1, false, map[string]handler{"list": permList, "set": permSet})
}

// shareInfo is the shareinfo parameter of create, set and clone.
type shareInfo struct {
	Name        string `json:"name"`
	VolPath     string `json:"vol_path"`
	Desc        string `json:"desc"`
	Quota       *int64 `json:"share_quota"` // MB
	RecycleBin  bool   `json:"enable_recycle_bin"`
	RecycleBinA bool   `json:"recycle_bin_admin_only"`
	NameOrg     string `json:"name_org"`
}

func (s *Server) shareJSON(sh *share) map[string]any {
	return map[string]any{
		"name": sh.Name, "uuid": sh.UUID, "vol_path": sh.VolPath, "desc": sh.Desc,
		"quota_value": sh.QuotaMB, "share_quota": sh.QuotaMB, "support_snapshot": true, "enable_share_cow": true,
		"enable_recycle_bin": sh.RecycleBin, "recycle_bin_admin_only": sh.RecycleBinA, "encryption": 0,
		"share_quota_used": dirSize(s.store.shareDir(sh.VolPath, sh.Name)) >> 20,
	}
}

func shareList(s *Server, _ *call) (any, error) {
	out := []map[string]any{}
	for _, sh := range s.st.Shares {
		out = append(out, s.shareJSON(sh))
	}
	return map[string]any{"shares": out, "total": len(out)}, nil
}

func (s *Server) shareArg(c *call, param string) (*share, error) {
	sh := s.st.share(c.str(param))
	if sh == nil {
		return nil, fail(codeShareNoSuch)
	}
	return sh, nil
}

// shareGet answers the share itself as data (not wrapped), as DSM does.
func shareGet(s *Server, c *call) (any, error) {
	sh, err := s.shareArg(c, "name")
	if err != nil {
		return nil, err
	}
	return s.shareJSON(sh), nil
}

func (s *Server) readShareInfo(c *call) (shareInfo, error) {
	var si shareInfo
	if err := json.Unmarshal([]byte(c.p.Get("shareinfo")), &si); err != nil {
		return si, fail(codeShareBadInput)
	}
	return si, nil
}

// checkNewShare checks a new share's name, description, volume and room.
func (s *Server) checkNewShare(name string, si shareInfo) error {
	if name == "" || len(name) > MaxShareName || !shareNameRE.MatchString(name) || len(si.Desc) > MaxShareDesc {
		return fail(codeShareBadInput)
	}
	if s.st.share(name) != nil {
		return fail(codeShareExists)
	}
	if len(s.st.Shares) >= MaxShares {
		return fail(codeShareMaxCount)
	}
	v := s.st.volume(si.VolPath)
	if v == nil {
		return fail(codeShareBadInput)
	}
	if si.Quota != nil && (*si.Quota < 0 || s.st.used(v.Path)+*si.Quota<<20 > v.Size) {
		return fail(codeShareBadInput)
	}
	return nil
}

func (s *Server) addShare(name string, si shareInfo, from string) (*share, error) {
	sh := &share{Name: name, UUID: newUUID(), VolPath: si.VolPath, Desc: si.Desc, RecycleBin: si.RecycleBin, RecycleBinA: si.RecycleBinA}
	if si.Quota != nil {
		sh.QuotaMB = *si.Quota
	}
	dir := s.store.shareDir(si.VolPath, name)
	var err error
	if from != "" {
		err = copyTree(from, dir)
	} else {
		err = os.MkdirAll(dir, 0o777)
	}
	if err == nil {
		err = os.Chmod(dir, 0o777)
	}
	if err != nil {
		s.log.Warn("share directory", "error", err)
		return nil, fail(codeUnknown)
	}
	s.st.Shares = append(s.st.Shares, sh)
	return sh, s.commitLocked()
}

func shareCreate(s *Server, c *call) (any, error) {
	si, err := s.readShareInfo(c)
	if err != nil {
		return nil, err
	}
	name := c.str("name")
	if err := s.checkNewShare(name, si); err != nil {
		return nil, err
	}
	sh, err := s.addShare(name, si, "")
	if err != nil {
		return nil, err
	}
	return map[string]any{"name": sh.Name}, nil
}

// shareSet changes a share's quota (share_quota, MB) and description.
func shareSet(s *Server, c *call) (any, error) {
	sh, err := s.shareArg(c, "name")
	if err != nil {
		return nil, err
	}
	si, err := s.readShareInfo(c)
	if err != nil {
		return nil, err
	}
	if si.Quota != nil {
		v := s.st.volume(sh.VolPath)
		if *si.Quota < 0 || v != nil && s.st.used(v.Path)-sh.QuotaMB<<20+*si.Quota<<20 > v.Size {
			return nil, fail(codeShareBadInput)
		}
		sh.QuotaMB = *si.Quota
	}
	if si.Desc != "" {
		if len(si.Desc) > MaxShareDesc {
			return nil, fail(codeShareBadInput)
		}
		sh.Desc = si.Desc
	}
	return nil, s.commitLocked()
}

// shareDelete deletes the shares of the name list with their snapshots.
func shareDelete(s *Server, c *call) (any, error) {
	names := c.strs("name")
	if len(names) == 0 {
		return nil, fail(codeShareBadInput)
	}
	for _, n := range names {
		if s.st.share(n) == nil {
			return nil, fail(codeShareNoSuch)
		}
	}
	for _, n := range names {
		sh := s.st.share(n)
		_ = os.RemoveAll(s.store.shareDir(sh.VolPath, sh.Name))
		for _, sn := range sh.Snapshots {
			_ = os.RemoveAll(s.store.shareSnapDir(sh.Name, sn.Time))
		}
		s.st.Shares = slices.DeleteFunc(s.st.Shares, func(x *share) bool { return x == sh })
	}
	return nil, s.commitLocked()
}

// shareClone copies shareinfo.name_org (or its snapshot) into a new share;
// a missing source or snapshot is 3300, as on DSM.
func shareClone(s *Server, c *call) (any, error) {
	si, err := s.readShareInfo(c)
	if err != nil {
		return nil, err
	}
	src := s.st.share(si.NameOrg)
	if src == nil {
		return nil, fail(codeShareGeneric)
	}
	from := s.store.shareDir(src.VolPath, src.Name)
	quota := src.QuotaMB
	if c.has("snapshot") {
		snap := c.str("snapshot")
		i := slices.IndexFunc(src.Snapshots, func(x *shareSnapshot) bool { return x.Time == snap })
		if i < 0 {
			return nil, fail(codeShareGeneric)
		}
		from = s.store.shareSnapDir(src.Name, snap)
	}
	if si.VolPath == "" {
		si.VolPath = src.VolPath
	}
	if si.Quota == nil {
		si.Quota = &quota
	}
	name := c.str("name")
	if err := s.checkNewShare(name, si); err != nil {
		return nil, err
	}
	sh, err := s.addShare(name, si, from)
	if err != nil {
		return nil, err
	}
	return map[string]any{"name": sh.Name}, nil
}

// shareSnapCreate snapshots a share; the answer is the snapshot's name,
// its time "GMT+00-2006.01.02-15.04.05" (unique: a second snapshot in the
// same second waits for the next).
func shareSnapCreate(s *Server, c *call) (any, error) {
	sh, err := s.shareArg(c, "name")
	if err != nil {
		return nil, err
	}
	var info struct {
		Desc string `json:"desc"`
		Lock bool   `json:"lock"`
	}
	if c.has("snapinfo") {
		if err := c.jsonParam("snapinfo", &info); err != nil {
			return nil, err
		}
	}
	t := s.now().UTC()
	name := t.Format("GMT+00-2006.01.02-15.04.05")
	for slices.ContainsFunc(sh.Snapshots, func(x *shareSnapshot) bool { return x.Time == name }) {
		t = t.Add(time.Second)
		name = t.Format("GMT+00-2006.01.02-15.04.05")
	}
	dir := s.store.shareSnapDir(sh.Name, name)
	if err := copyTree(s.store.shareDir(sh.VolPath, sh.Name), dir); err != nil {
		s.log.Warn("share snapshot", "error", err)
		return nil, fail(codeUnknown)
	}
	sh.Snapshots = append(sh.Snapshots, &shareSnapshot{Time: name, UUID: newUUID(), Desc: info.Desc, Lock: info.Lock, Size: dirSize(dir)})
	return name, s.commitLocked()
}

func shareSnapList(s *Server, c *call) (any, error) {
	sh, err := s.shareArg(c, "name")
	if err != nil {
		return nil, err
	}
	out := []map[string]any{}
	for _, sn := range sh.Snapshots {
		out = append(out, map[string]any{"time": sn.Time, "ruuid": sn.UUID, "desc": sn.Desc, "lock": sn.Lock,
			"snap_size": itoa(int(sn.Size)), "schedule_snapshot": false})
	}
	return map[string]any{"snapshots": out, "total": len(out)}, nil
}

// shareSnapDelete deletes snapshots by name; the answer lists the ones
// that could not be deleted (none, or an error for an unknown one).
func shareSnapDelete(s *Server, c *call) (any, error) {
	sh, err := s.shareArg(c, "name")
	if err != nil {
		return nil, err
	}
	names := c.strs("snapshots")
	for _, n := range names {
		if !slices.ContainsFunc(sh.Snapshots, func(x *shareSnapshot) bool { return x.Time == n }) {
			return nil, fail(codeShareNoSnapTag)
		}
	}
	for _, n := range names {
		sh.Snapshots = slices.DeleteFunc(sh.Snapshots, func(x *shareSnapshot) bool { return x.Time == n })
		_ = os.RemoveAll(s.store.shareSnapDir(sh.Name, n))
	}
	return []any{}, s.commitLocked()
}

// permList lists the users given access to a share.
func permList(s *Server, c *call) (any, error) {
	sh, err := s.shareArg(c, "name")
	if err != nil {
		return nil, err
	}
	items := []map[string]any{}
	for u, p := range sh.Permissions {
		items = append(items, map[string]any{"name": u, "is_readonly": p == "ro", "is_writable": p == "rw", "is_deny": p == "deny", "is_admin": u == DefaultUser})
	}
	slices.SortFunc(items, func(a, b map[string]any) int {
		if a["name"].(string) < b["name"].(string) {
			return -1
		}
		return 1
	})
	return map[string]any{"items": items, "total": len(items)}, nil
}

// permSet sets users' access (is_writable, is_readonly, is_deny; none of
// them removes the user's entry).
func permSet(s *Server, c *call) (any, error) {
	sh, err := s.shareArg(c, "name")
	if err != nil {
		return nil, err
	}
	var perms []struct {
		Name     string `json:"name"`
		ReadOnly bool   `json:"is_readonly"`
		Writable bool   `json:"is_writable"`
		Deny     bool   `json:"is_deny"`
	}
	if err := c.jsonParam("permissions", &perms); err != nil {
		return nil, err
	}
	if sh.Permissions == nil {
		sh.Permissions = map[string]string{}
	}
	for _, p := range perms {
		if _, ok := s.opts.Users[p.Name]; !ok || p.Name == "" {
			return nil, fail(codeShareBadInput)
		}
		switch {
		case p.Deny:
			sh.Permissions[p.Name] = "deny"
		case p.Writable:
			sh.Permissions[p.Name] = "rw"
		case p.ReadOnly:
			sh.Permissions[p.Name] = "ro"
		default:
			delete(sh.Permissions, p.Name)
		}
	}
	return nil, s.commitLocked()
}
