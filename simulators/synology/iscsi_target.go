package synology

import (
	"slices"
	"strconv"
	"strings"
)

// maxIQN is the longest iSCSI name (RFC 3720).
const maxIQN = 223

func init() {
	register("SYNO.Core.ISCSI.Target", "entry.cgi", 1, false, map[string]handler{
		"list": targetList, "get": targetGet, "create": targetCreate, "delete": targetDelete, "set": targetSet,
	})
}

func (s *Server) targetJSON(t *target, additional string) map[string]any {
	out := map[string]any{
		"target_id": t.ID, "name": t.Name, "iqn": t.IQN, "auth_type": t.AuthType,
		"max_sessions": t.MaxSessions, "status": "online", "is_enabled": true,
		"user": t.User, "mutual_user": t.MutualUser,
	}
	// DSM lists the mappings only when asked (additional ["mapped_lun"]);
	// democratic-csi and synology-csi both ask.
	if strings.Contains(additional, "mapped_lun") {
		m := []map[string]any{}
		for _, x := range t.Mapped {
			m = append(m, map[string]any{"lun_uuid": x.LunUUID, "mapping_index": x.Index})
		}
		out["mapped_luns"] = m
	}
	if strings.Contains(additional, "connected_sessions") {
		out["connected_sessions"] = []any{}
	}
	if strings.Contains(additional, "acls") {
		out["acls"] = []any{}
	}
	return out
}

func targetList(s *Server, c *call) (any, error) {
	out := []map[string]any{}
	for _, t := range s.st.Targets {
		out = append(out, s.targetJSON(t, c.p.Get("additional")))
	}
	return map[string]any{"targets": out, "total": len(out)}, nil
}

func (s *Server) targetArg(c *call) (*target, error) {
	id, err := strconv.Atoi(c.str("target_id"))
	if err != nil {
		return nil, fail(codeInvalidParam)
	}
	t := s.st.targetByID(id)
	if t == nil {
		return nil, fail(codeISCSINoSuchTarget)
	}
	return t, nil
}

func targetGet(s *Server, c *call) (any, error) {
	t, err := s.targetArg(c)
	if err != nil {
		return nil, err
	}
	return map[string]any{"target": s.targetJSON(t, c.p.Get("additional"))}, nil
}

// targetCreate makes a target; auth_type 1 (CHAP) needs user and
// password, 2 (mutual CHAP) mutual_user and mutual_password too.
func targetCreate(s *Server, c *call) (any, error) {
	name, iqn := c.str("name"), strings.ToLower(c.str("iqn"))
	if name == "" || iqn == "" || len(iqn) > maxIQN || !strings.HasPrefix(iqn, "iqn.") || len(name) > maxIQN {
		return nil, fail(codeInvalidParam)
	}
	for _, t := range s.st.Targets {
		if t.Name == name || t.IQN == iqn {
			return nil, fail(codeISCSITargetExists)
		}
	}
	if len(s.st.Targets) >= MaxTargets {
		return nil, fail(codeISCSIMaxTargets)
	}
	auth := 0
	if c.has("auth_type") {
		n, ok := c.int64("auth_type")
		if !ok || n < 0 || n > 2 {
			return nil, fail(codeISCSIBadAuth)
		}
		auth = int(n)
	}
	t := &target{ID: s.st.NextTgtID, Name: name, IQN: iqn, AuthType: auth}
	if auth >= 1 {
		t.User, t.Password = c.str("user"), c.str("password")
		if t.User == "" || len(t.Password) < 12 || len(t.Password) > 16 {
			return nil, fail(codeISCSIBadAuth) // CHAP secrets are 12-16 characters
		}
	}
	if auth == 2 {
		t.MutualUser, t.MutualPassword = c.str("mutual_user"), c.str("mutual_password")
		if t.MutualUser == "" || len(t.MutualPassword) < 12 || len(t.MutualPassword) > 16 || t.MutualPassword == t.Password {
			return nil, fail(codeISCSIBadAuth)
		}
	}
	if n, ok := c.int64("max_sessions"); ok {
		t.MaxSessions = int(n)
	}
	s.st.NextTgtID++
	s.st.Targets = append(s.st.Targets, t)
	return map[string]any{"target_id": t.ID}, s.commitLocked()
}

func targetDelete(s *Server, c *call) (any, error) {
	t, err := s.targetArg(c)
	if err != nil {
		return nil, err
	}
	s.st.Targets = slices.DeleteFunc(s.st.Targets, func(x *target) bool { return x == t })
	return nil, s.commitLocked()
}

func targetSet(s *Server, c *call) (any, error) {
	t, err := s.targetArg(c)
	if err != nil {
		return nil, err
	}
	if n, ok := c.int64("max_sessions"); ok {
		t.MaxSessions = int(n)
	}
	return nil, s.commitLocked()
}
