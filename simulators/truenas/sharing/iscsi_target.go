package sharing

import (
	"encoding/json"
	"regexp"

	"github.com/switchyard-csi/switchyard/simulators/truenas/middleware"
)

// iscsi.target (plugins/iscsi_/targets.py). A target's IQN is
// iscsi.global's basename + ":" + name.

var reTargetName = regexp.MustCompile(`^[-a-z0-9\.:]+$`)

// targetFields are the same on create and update (defaults apply on
// create only, in decode).
func (s *Service) targetFields() []field {
	pyd := s.v.AtLeast(25, 4, 0)
	name := field{name: "name", kind: kStr, required: true}
	if pyd {
		name.minLen, name.maxLen = 1, 120
	}
	f := []field{
		name,
		{name: "alias", kind: kStr, null: true},
		{name: "mode", kind: kStr, enum: strs("ISCSI", "FC", "BOTH"), def: "ISCSI"},
		{name: "groups", kind: kObjList, def: []any{}, sub: []field{
			{name: "portal", kind: kInt, required: true},
			{name: "initiator", kind: kInt, null: true},
			{name: "authmethod", kind: kStr, enum: strs("NONE", "CHAP", "CHAP_MUTUAL"), def: "NONE"},
			{name: "auth", kind: kInt, null: true},
		}},
		{name: "auth_networks", kind: kStrList, def: []any{}},
	}
	if s.v.AtLeast(25, 4, 0) {
		f = append(f, field{name: "iscsi_parameters", kind: kObj, null: true, sub: []field{
			{name: "QueuedCommands", kind: kInt, null: true, enum: []any{32, 128}},
		}})
	}
	return f
}

func (s *Service) targetArg(verb string) dialect {
	return s.iscsiArg("iscsi_target_"+verb, "iscsi_target_"+verb)
}

func (s *Service) registerTarget(r *middleware.Registry) {
	del := []string{"id", "force"}
	if s.v.AtLeast(25, 4, 0) { // 24.10's delete takes no delete_extents
		del = append(del, "delete_extents")
	}
	s.addCRUD(r, crud{
		ns: nsTarget, verbose: "iSCSITarget",
		create: s.targetCreate, createParams: []string{"iscsi_target_create"},
		update: s.targetUpdate, updateParams: []string{"id", "iscsi_target_update"},
		del: s.targetDelete, delParams: del,
	})
	r.Add(middleware.Method{Name: "iscsi.target.validate_name", Params: []string{"name", "existing_id"}, Handler: func(c *middleware.Call, params []json.RawMessage) (any, error) {
		if err := argCount(params, 2); err != nil {
			return nil, err
		}
		var name string
		if !given(params, 0) || json.Unmarshal(params[0], &name) != nil {
			return nil, middleware.Invalid("name", "Input should be a valid string")
		}
		existing := 0
		if given(params, 1) && string(params[1]) != "null" {
			id, err := intArg(pydantic(""), params, 1, "existing_id")
			if err != nil {
				return nil, err
			}
			existing = id
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		if msg := s.targetNameError(name, existing); msg != "" {
			return msg, nil
		}
		return nil, nil
	}})
}

// targetNameError is iscsi.target.validate_name ("" when the name is free).
// Callers hold s.mu.
func (s *Service) targetNameError(name string, self int) string {
	if !reTargetName.MatchString(name) {
		return "Only lowercase alphanumeric characters plus dot (.), dash (-), and colon (:) are allowed."
	}
	for _, t := range s.t[nsTarget].rows {
		if intOf(t["id"]) != self && strOf(t["name"]) == name {
			return "Target with this name already exists"
		}
	}
	return ""
}

func (s *Service) targetCreate(c *middleware.Call, params []json.RawMessage) (any, error) {
	if err := argCount(params, 1); err != nil {
		return nil, err
	}
	d := s.targetArg("create")
	data, err := objArg(d, params, 0, s.targetFields(), true)
	if err != nil {
		return nil, err
	}
	if err := s.targetNameFormat(d, data); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.targetValidate(data, "iscsi_target_create", 0); err != nil {
		return nil, err
	}
	if s.v.AtLeast(25, 4, 0) {
		data["rel_tgt_id"] = s.freeNumber(nsTarget, "rel_tgt_id", 1)
	}
	if s.v.AtLeast(25, 4, 0) {
		if _, ok := data["iscsi_parameters"]; !ok {
			data["iscsi_parameters"] = nil
		}
	}
	row, err := s.insert(nsTarget, data)
	if err != nil {
		return nil, err
	}
	s.log.Info("iSCSI target created", "id", row["id"], "iqn", s.basename()+":"+strOf(row["name"]))
	return row, nil
}

func (s *Service) targetUpdate(c *middleware.Call, params []json.RawMessage) (any, error) {
	if err := argCount(params, 2); err != nil {
		return nil, err
	}
	d := s.targetArg("update")
	id, err := intArg(d, params, 0, "id")
	if err != nil {
		return nil, err
	}
	data, err := objArg(d, params, 1, s.targetFields(), false)
	if err != nil {
		return nil, err
	}
	if err := s.targetNameFormat(d, data); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	old, err := s.instance(nsTarget, "iSCSITarget", id)
	if err != nil {
		return nil, err
	}
	for k, v := range data {
		old[k] = v
	}
	schema := "iscsi_target_update"
	if !s.v.AtLeast(25, 4, 0) {
		schema = "iscsi_target_create" // the old do_update validated under the create schema
	}
	if err := s.targetValidate(old, schema, id); err != nil {
		return nil, err
	}
	return s.replace(nsTarget, old)
}

// targetNameFormat is the pydantic model's check of the name (25.04+);
// before, the service's validate_name reports a bad name.
func (s *Service) targetNameFormat(d dialect, data middleware.Row) error {
	name, ok := data["name"].(string)
	if !ok || !d.pydantic || reTargetName.MatchString(name) {
		return nil
	}
	return middleware.Invalid(d.at("name"), "Value error, Name can only contain lowercase alphanumeric charactersplus dot (.), dash (-), and colon (:)")
}

// targetValidate is iSCSITargetService.__validate. Callers hold s.mu.
func (s *Service) targetValidate(data middleware.Row, schema string, self int) error {
	var errs middleware.ValidationErrors
	add := func(attr, msg string, errno int) {
		errs = append(errs, middleware.ValidationError{Attribute: schema + "." + attr, Message: msg, Errno: errno})
	}
	if msg := s.targetNameError(strOf(data["name"]), self); msg != "" {
		add("name", msg, 0)
	}
	if alias, ok := data["alias"].(string); ok {
		switch {
		case containsRune(alias, '"'):
			add("alias", "Double quotes are not allowed", 0)
		case alias == "target":
			add("alias", "target is a reserved word", 0)
		default:
			for _, t := range s.t[nsTarget].rows {
				if intOf(t["id"]) != self && strOf(t["alias"]) == alias {
					add("alias", "Alias already exists", 0)
					break
				}
			}
		}
	}
	if strOf(data["mode"]) != "ISCSI" {
		add("mode", "Fibre Channel not enabled", 0)
	}
	var portals []int
	for i, g := range objs(data["groups"]) {
		at := "groups." + itoa(i) + "."
		portal := intOf(g["portal"])
		switch {
		case containsInt(portals, portal):
			add(at+"portal", "Portal "+itoa(portal)+" cannot be duplicated on a target", 0)
		case s.t[nsPortal].get(portal) == nil:
			add(at+"portal", itoa(portal)+" Portal not found in database", 0)
		default:
			portals = append(portals, portal)
		}
		if g["initiator"] != nil && intOf(g["initiator"]) != 0 && s.t[nsInitiator].get(intOf(g["initiator"])) == nil {
			add(at+"initiator", itoa(intOf(g["initiator"]))+" Initiator not found in database", 0)
		}
		method := strOf(g["authmethod"])
		auth := 0
		if g["auth"] != nil {
			auth = intOf(g["auth"])
		}
		switch {
		case auth == 0 && (method == "CHAP" || method == "CHAP_MUTUAL"):
			add(at+"auth", "Authentication group is required for CHAP and CHAP Mutual", 0)
		case auth != 0 && method == "CHAP_MUTUAL":
			creds := s.authByTag(auth)
			if len(creds) == 0 {
				add(at+"auth", "Authentication group not found", middleware.ENOENT)
			} else if strOf(creds[0]["peeruser"]) == "" {
				add(at+"auth", "Authentication group "+itoa(auth)+" does not support CHAP Mutual", 0)
			}
		}
	}
	if s.v.AtLeast(25, 4, 0) {
		for i, n := range strsOf(data["auth_networks"]) {
			if _, ok := parseNetwork(n); !ok {
				add("auth_networks."+itoa(i), `Auth network "`+n+`" is not a valid IPv4 or IPv6 network`, 0)
			}
		}
	}
	if len(errs) > 0 {
		return errs
	}
	return nil
}

func (s *Service) targetDelete(c *middleware.Call, params []json.RawMessage) (any, error) {
	n := 3
	if !s.v.AtLeast(25, 4, 0) {
		n = 2
	}
	if err := argCount(params, n); err != nil {
		return nil, err
	}
	d := s.targetArg("delete")
	id, err := intArg(d, params, 0, "id")
	if err != nil {
		return nil, err
	}
	force, err := boolArg(d, params, 1, "force")
	if err != nil {
		return nil, err
	}
	withExtents, err := boolArg(d, params, 2, "delete_extents")
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t, err := s.instance(nsTarget, "iSCSITarget", id)
	if err != nil {
		return nil, err
	}
	name := strOf(t["name"])
	if s.inUse[name] && !force {
		return nil, middleware.Errorf(middleware.EFAULT, "Target %s is in use.", name)
	}
	for _, te := range s.t[nsTargetExt].find(func(r middleware.Row) bool { return intOf(r["target"]) == id }) {
		s.t[nsTargetExt].remove(intOf(te["id"]))
		if withExtents {
			s.dropExtent(intOf(te["extent"]))
		}
	}
	s.t[nsTarget].remove(id)
	delete(s.inUse, name)
	if err := s.commit(nsTarget, nsTargetExt, nsExtent); err != nil {
		return nil, err
	}
	s.log.Info("iSCSI target deleted", "id", id, "name", name, "delete_extents", withExtents)
	return true, nil
}

// freeNumber returns the smallest value >= from of key that no row of ns
// uses. Callers hold s.mu.
func (s *Service) freeNumber(ns, key string, from int) int {
	used := map[int]bool{}
	for _, r := range s.t[ns].rows {
		used[intOf(r[key])] = true
	}
	n := from
	for used[n] {
		n++
	}
	return n
}

func containsRune(s string, r rune) bool {
	for _, c := range s {
		if c == r {
			return true
		}
	}
	return false
}

func containsInt(l []int, n int) bool {
	for _, x := range l {
		if x == n {
			return true
		}
	}
	return false
}
