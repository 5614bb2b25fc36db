package synology

import (
	"os"
	"slices"
)

func (s *Server) snapJSON(sn *snapshot) map[string]any {
	parent := s.st.lunByUUID(sn.ParentUUID)
	pname, root := "", ""
	if parent != nil {
		pname, root = parent.Name, parent.Location
	}
	return map[string]any{
		"uuid": sn.UUID, "snapshot_id": sn.ID, "name": sn.Name, "description": sn.Description,
		"parent_uuid": sn.ParentUUID, "parent_name": pname, "status": "Healthy", "total_size": sn.Size,
		"time": sn.Time, "create_time": sn.Time, "taken_by": sn.TakenBy, "is_locked": sn.Locked,
		"is_app_consistent": sn.AppConsistent, "root_path": root,
	}
}

// lunTakeSnapshot snapshots a LUN: its data as it is now.
func lunTakeSnapshot(s *Server, c *call) (any, error) {
	l, err := s.lunArg(c, "src_lun_uuid")
	if err != nil {
		return nil, err
	}
	if l.DeleteAt != 0 {
		return nil, fail(codeISCSILunBusy)
	}
	n := 0
	for _, sn := range s.st.Snapshots {
		if sn.ParentUUID == l.UUID {
			n++
		}
	}
	if n >= MaxSnapshotsPerLun {
		return nil, fail(codeISCSIMaxSnaps)
	}
	sn := &snapshot{UUID: newUUID(), ID: s.st.NextSnap, ParentUUID: l.UUID, Name: c.str("snapshot_name"),
		Description: c.str("description"), TakenBy: c.str("taken_by"), Time: nowUnix(s.now), Size: l.Size,
		Locked: c.boolean("is_locked", false), AppConsistent: c.boolean("is_app_consistent", false)}
	if sn.Name == "" {
		sn.Name = "SnapShot-" + itoa(sn.ID)
	}
	if err := copySparse(s.store.lunFile(l.UUID), s.store.snapFile(sn.UUID), l.Size); err != nil {
		s.log.Warn("snapshot data", "error", err)
		return nil, fail(codeUnknown)
	}
	s.st.NextSnap++
	s.st.Snapshots = append(s.st.Snapshots, sn)
	return map[string]any{"snapshot_uuid": sn.UUID, "snapshot_id": sn.ID}, s.commitLocked()
}

func lunListSnapshots(s *Server, c *call) (any, error) {
	l, err := s.lunArg(c, "src_lun_uuid")
	if err != nil {
		return nil, err
	}
	out := []map[string]any{}
	for _, sn := range s.st.Snapshots {
		if sn.ParentUUID == l.UUID {
			out = append(out, s.snapJSON(sn))
		}
	}
	return map[string]any{"snapshots": out, "total": len(out)}, nil
}

func lunGetSnapshot(s *Server, c *call) (any, error) {
	sn := s.st.snapshotByUUID(c.str("snapshot_uuid"))
	if sn == nil {
		return nil, fail(codeISCSINoSuchSnap)
	}
	return map[string]any{"snapshot": s.snapJSON(sn)}, nil
}

func lunDeleteSnapshot(s *Server, c *call) (any, error) {
	u := c.str("snapshot_uuid")
	if s.st.snapshotByUUID(u) == nil {
		return nil, fail(codeISCSINoSuchSnap)
	}
	s.st.Snapshots = slices.DeleteFunc(s.st.Snapshots, func(sn *snapshot) bool { return sn.UUID == u })
	_ = os.Remove(s.store.snapFile(u))
	return nil, s.commitLocked()
}

// lunClone copies a LUN into a new one (dst_lun_name on dst_location, the
// source's volume by default).
func lunClone(s *Server, c *call) (any, error) {
	src, err := s.lunArg(c, "src_lun_uuid")
	if err != nil {
		return nil, err
	}
	if src.DeleteAt != 0 {
		return nil, fail(codeISCSILunBusy)
	}
	loc := c.str("dst_location")
	if loc == "" {
		loc = src.Location
	}
	name := c.str("dst_lun_name")
	if _, err := s.checkNewLun(name, loc, src.Size); err != nil {
		return nil, err
	}
	l, err := s.addLun(name, loc, src.Type, c.str("description"), src.Size, src.DevAttribs, s.store.lunFile(src.UUID))
	if err != nil {
		return nil, err
	}
	return map[string]any{"dst_lun_uuid": l.UUID}, nil
}

// lunCloneSnapshot makes a LUN from a snapshot of src_lun_uuid.
func lunCloneSnapshot(s *Server, c *call) (any, error) {
	src, err := s.lunArg(c, "src_lun_uuid")
	if err != nil {
		return nil, err
	}
	sn := s.st.snapshotByUUID(c.str("snapshot_uuid"))
	if sn == nil || sn.ParentUUID != src.UUID {
		return nil, fail(codeISCSINoSuchSnap)
	}
	name := c.str("cloned_lun_name")
	if _, err := s.checkNewLun(name, src.Location, sn.Size); err != nil {
		return nil, err
	}
	l, err := s.addLun(name, src.Location, src.Type, c.str("description"), sn.Size, src.DevAttribs, s.store.snapFile(sn.UUID))
	if err != nil {
		return nil, err
	}
	return map[string]any{"cloned_lun_uuid": l.UUID}, nil
}
