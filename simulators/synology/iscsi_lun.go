package synology

import (
	"os"
	"regexp"
	"slices"
	"strconv"
	"time"
)

// Limits of the simulated DSM.
const (
	// MaxLunName is the longest LUN name accepted (DSM's UI limit is 128
	// characters too); longer names are refused with code 120.
	MaxLunName = 128
	// MaxLuns and MaxTargets are per NAS (DSM's smallest models allow 128
	// LUNs and 128 targets).
	MaxLuns    = 128
	MaxTargets = 128
	// MaxSnapshotsPerLun is DSM's limit of snapshots per LUN.
	MaxSnapshotsPerLun = 256
)

var lunNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// lunTypes are the LUN types, their numbers in answers and the file
// system they need ("" = any). The numbers are the simulator's.
var lunTypes = map[string]struct {
	num int
	fs  string
}{
	"FILE": {1, "ext4"}, "THIN": {256, "ext4"}, "ADV": {257, "ext4"}, "BLOCK": {2, ""},
	"BLUN": {263, "btrfs"}, "BLUN_THICK": {259, "btrfs"},
}

func init() {
	register("SYNO.Core.ISCSI.LUN", "entry.cgi", 1, false, map[string]handler{
		"list": lunList, "get": lunGet, "create": lunCreate, "set": lunSet, "delete": lunDelete,
		"map_target": lunMapTarget, "unmap_target": lunUnmapTarget,
		"take_snapshot": lunTakeSnapshot, "list_snapshot": lunListSnapshots, "get_snapshot": lunGetSnapshot,
		"delete_snapshot": lunDeleteSnapshot, "clone": lunClone, "clone_snapshot": lunCloneSnapshot,
	})
}

func (s *Server) lunJSON(l *lun) map[string]any {
	status := "normal"
	if l.DeleteAt != 0 {
		status = "deleting"
	}
	var alloc int64
	if fi, err := os.Stat(s.store.lunFile(l.UUID)); err == nil {
		alloc = allocated(fi)
	}
	attribs := l.DevAttribs
	if attribs == nil {
		attribs = []devAttrib{}
	}
	return map[string]any{
		"uuid": l.UUID, "lun_id": l.ID, "name": l.Name, "description": l.Description,
		"type": lunTypes[l.Type].num, "type_str": l.Type, "location": l.Location,
		"size": l.Size, "allocated_size": alloc, "status": status, "is_action_locked": l.DeleteAt != 0,
		"flashcache_status": "no_cache", "dev_attribs": attribs, "create_time": l.Created,
	}
}

func lunList(s *Server, _ *call) (any, error) {
	out := []map[string]any{}
	for _, l := range s.st.LUNs {
		out = append(out, s.lunJSON(l))
	}
	return map[string]any{"luns": out, "total": len(out)}, nil
}

// lunArg finds the LUN a uuid parameter names (18990531 when none).
func (s *Server) lunArg(c *call, name string) (*lun, error) {
	l := s.st.lunByUUID(c.str(name))
	if l == nil {
		return nil, fail(codeISCSINoSuchLun)
	}
	return l, nil
}

func lunGet(s *Server, c *call) (any, error) {
	l, err := s.lunArg(c, "uuid")
	if err != nil {
		return nil, err
	}
	return map[string]any{"lun": s.lunJSON(l)}, nil
}

// checkNewLun checks a new LUN's name and room on its volume.
func (s *Server) checkNewLun(name, location string, size int64) (*volume, error) {
	if name == "" || len(name) > MaxLunName || !lunNameRE.MatchString(name) {
		return nil, fail(codeInvalidParam)
	}
	if s.st.lunByName(name) != nil {
		return nil, fail(codeISCSILunExists)
	}
	v := s.st.volume(location)
	if v == nil {
		return nil, fail(codeInvalidParam)
	}
	if len(s.st.LUNs) >= MaxLuns {
		return nil, fail(codeISCSIMaxLuns)
	}
	if size <= 0 {
		return nil, fail(codeInvalidParam)
	}
	if s.st.used(location)+size > v.Size {
		return nil, fail(codeISCSINoSpace)
	}
	return v, nil
}

func (s *Server) addLun(name, location, typ, desc string, size int64, attribs []devAttrib, from string) (*lun, error) {
	l := &lun{UUID: newUUID(), ID: s.st.NextLunID, Name: name, Description: desc, Type: typ, Location: location,
		Size: size, DevAttribs: attribs, Created: nowUnix(s.now)}
	var err error
	if from != "" {
		err = copySparse(from, s.store.lunFile(l.UUID), size)
	} else {
		err = makeSparse(s.store.lunFile(l.UUID), size)
	}
	if err != nil {
		s.log.Warn("LUN file", "error", err)
		return nil, fail(codeUnknown)
	}
	s.st.NextLunID++
	s.st.LUNs = append(s.st.LUNs, l)
	return l, s.commitLocked()
}

func lunCreate(s *Server, c *call) (any, error) {
	name, location := c.str("name"), c.str("location")
	size, ok := c.int64("size")
	if !ok {
		return nil, fail(codeInvalidParam)
	}
	v, err := s.checkNewLun(name, location, size)
	if err != nil {
		return nil, err
	}
	typ := c.str("type")
	if typ == "" {
		typ = "BLUN"
		if v.FSType == "ext4" {
			typ = "THIN"
		}
	}
	lt, known := lunTypes[typ]
	if !known {
		return nil, fail(codeISCSIBadLunType)
	}
	if lt.fs != "" && lt.fs != v.FSType {
		return nil, fail(18990318) // the LUN type does not suit the volume's file system
	}
	var attribs []devAttrib
	if c.has("dev_attribs") {
		if err := c.jsonParam("dev_attribs", &attribs); err != nil {
			return nil, err
		}
	}
	l, err := s.addLun(name, location, typ, c.str("description"), size, attribs, "")
	if err != nil {
		return nil, err
	}
	return map[string]any{"uuid": l.UUID}, nil
}

// lunSet changes a LUN: new_size grows it (DSM cannot shrink a LUN),
// name and description rename and describe it.
func lunSet(s *Server, c *call) (any, error) {
	l, err := s.lunArg(c, "uuid")
	if err != nil {
		return nil, err
	}
	if l.DeleteAt != 0 {
		return nil, fail(codeISCSILunBusy)
	}
	if c.has("new_size") {
		n, ok := c.int64("new_size")
		if !ok || n < l.Size {
			return nil, fail(codeInvalidParam)
		}
		v := s.st.volume(l.Location)
		if v != nil && s.st.used(l.Location)-l.Size+n > v.Size {
			return nil, fail(codeISCSINoSpace)
		}
		if err := os.Truncate(s.store.lunFile(l.UUID), n); err != nil {
			return nil, fail(codeUnknown)
		}
		l.Size = n
	}
	if c.has("new_name") || c.has("name") {
		n := c.str("new_name")
		if n == "" {
			n = c.str("name")
		}
		if n != l.Name {
			if len(n) > MaxLunName || !lunNameRE.MatchString(n) {
				return nil, fail(codeInvalidParam)
			}
			if s.st.lunByName(n) != nil {
				return nil, fail(codeISCSILunExists)
			}
			l.Name = n
		}
	}
	if c.has("description") {
		l.Description = c.str("description")
	}
	return nil, s.commitLocked()
}

// lunDelete starts deleting LUNs (uuid, or the list uuids): DSM answers at
// once and removes them in the background; until then they are listed
// with status "deleting".
func lunDelete(s *Server, c *call) (any, error) {
	ids := c.strs("uuids")
	if u := c.str("uuid"); u != "" {
		ids = append(ids, u)
	}
	if len(ids) == 0 {
		return nil, fail(codeInvalidParam)
	}
	for _, id := range ids {
		if s.st.lunByUUID(id) == nil {
			return nil, fail(codeISCSINoSuchLun)
		}
	}
	at := s.now().Add(s.opts.DeleteDelay)
	for _, id := range ids {
		l := s.st.lunByUUID(id)
		if l.DeleteAt == 0 {
			l.DeleteAt = at.UnixMilli()
		}
	}
	if s.opts.DeleteDelay < 0 {
		s.reapLocked()
	} else {
		time.AfterFunc(s.opts.DeleteDelay+10*time.Millisecond, func() {
			s.mu.Lock()
			s.reapLocked()
			s.mu.Unlock()
			s.flush()
		})
	}
	return nil, s.commitLocked()
}

// reapLocked removes the LUNs whose background deletion is done, with
// their mappings, snapshots and data.
func (s *Server) reapLocked() {
	now := s.now().UnixMilli()
	changed := false
	s.st.LUNs = slices.DeleteFunc(s.st.LUNs, func(l *lun) bool {
		if l.DeleteAt == 0 || l.DeleteAt > now && s.opts.DeleteDelay >= 0 {
			return false
		}
		changed = true
		for _, t := range s.st.Targets {
			t.Mapped = slices.DeleteFunc(t.Mapped, func(m mapping) bool { return m.LunUUID == l.UUID })
		}
		s.st.Snapshots = slices.DeleteFunc(s.st.Snapshots, func(sn *snapshot) bool {
			if sn.ParentUUID == l.UUID {
				_ = os.Remove(s.store.snapFile(sn.UUID))
				return true
			}
			return false
		})
		_ = os.Remove(s.store.lunFile(l.UUID))
		return true
	})
	if changed {
		if err := s.commitLocked(); err != nil {
			s.log.Warn("saving after LUN deletion", "error", err)
		}
	}
}

func (s *Server) targetsArg(c *call) ([]*target, error) {
	var out []*target
	for _, v := range c.strs("target_ids") {
		id, err := strconv.Atoi(v)
		if err != nil {
			return nil, fail(codeInvalidParam)
		}
		t := s.st.targetByID(id)
		if t == nil {
			return nil, fail(codeISCSINoSuchTarget)
		}
		out = append(out, t)
	}
	if len(out) == 0 {
		return nil, fail(codeInvalidParam)
	}
	return out, nil
}

// lunMapTarget maps a LUN into targets; its mapping_index is the next
// free one of each target, from 1 as DSM numbers them.
func lunMapTarget(s *Server, c *call) (any, error) {
	l, err := s.lunArg(c, "uuid")
	if err != nil {
		return nil, err
	}
	ts, err := s.targetsArg(c)
	if err != nil {
		return nil, err
	}
	for _, t := range ts {
		if slices.ContainsFunc(t.Mapped, func(m mapping) bool { return m.LunUUID == l.UUID }) {
			continue
		}
		idx := 1
		for slices.ContainsFunc(t.Mapped, func(m mapping) bool { return m.Index == idx }) {
			idx++
		}
		t.Mapped = append(t.Mapped, mapping{LunUUID: l.UUID, Index: idx})
	}
	return nil, s.commitLocked()
}

func lunUnmapTarget(s *Server, c *call) (any, error) {
	l, err := s.lunArg(c, "uuid")
	if err != nil {
		return nil, err
	}
	ts, err := s.targetsArg(c)
	if err != nil {
		return nil, err
	}
	for _, t := range ts {
		t.Mapped = slices.DeleteFunc(t.Mapped, func(m mapping) bool { return m.LunUUID == l.UUID })
	}
	return nil, s.commitLocked()
}
