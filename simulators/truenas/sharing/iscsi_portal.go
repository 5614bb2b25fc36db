package sharing

import (
	"encoding/json"
	"net"
	"sort"

	"github.com/switchyard-csi/switchyard/simulators/truenas/middleware"
)

// iscsi.portal (plugins/iscsi_/portal.py): the addresses targets listen on.

func (s *Service) portalFields() []field {
	nonEmpty := 0
	if s.v.AtLeast(25, 4, 0) {
		nonEmpty = 1
	}
	f := []field{
		{name: "comment", kind: kStr, def: ""},
		{name: "listen", kind: kObjList, required: true, sub: []field{{name: "ip", kind: kStr, required: true, minLen: nonEmpty}}},
	}
	if !s.v.AtLeast(25, 4, 0) {
		f = append(f,
			field{name: "discovery_authmethod", kind: kStr, enum: strs("NONE", "CHAP", "CHAP_MUTUAL"), def: "NONE"},
			field{name: "discovery_authgroup", kind: kInt, null: true})
	}
	return f
}

func (s *Service) portalArg(verb string) dialect {
	return s.iscsiArg("iscsiportal_"+verb, "iscsi_portal_"+verb)
}

func (s *Service) registerPortal(r *middleware.Registry) {
	s.addCRUD(r, crud{
		ns: nsPortal, verbose: "ISCSIPortal",
		view:   func(row middleware.Row, _ middleware.QueryOptions) middleware.Row { return s.portalView(row) },
		create: s.portalCreate, createParams: []string{"iscsi_portal_create"},
		update: s.portalUpdate, updateParams: []string{"id", "iscsi_portal_update"},
		del: s.portalDelete, delParams: []string{"id"},
	})
	addConst(r, "iscsi.portal.listen_ip_choices", map[string]any{"0.0.0.0": "0.0.0.0", "::": "::"})
}

// portalView adds the global listen port to each address. Callers hold s.mu.
func (s *Service) portalView(r middleware.Row) middleware.Row {
	port := intOf(s.t[nsISCSIGlobal].get(1)["listen_port"])
	var out []any
	for _, m := range objs(r["listen"]) {
		out = append(out, map[string]any{"ip": m["ip"], "port": port})
	}
	r["listen"] = out
	return r
}

func (s *Service) portalCreate(c *middleware.Call, params []json.RawMessage) (any, error) {
	if err := argCount(params, 1); err != nil {
		return nil, err
	}
	d := s.portalArg("create")
	data, err := objArg(d, params, 0, s.portalFields(), true)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.portalValidate(d, data, "iscsiportal_create", 0); err != nil {
		return nil, err
	}
	t := s.t[nsPortal]
	data["id"] = t.nextID()
	data["tag"] = len(t.rows) + 1 // tags count up from 1
	row := normalize(data)
	t.put(row)
	if err := s.commit(nsPortal); err != nil {
		return nil, err
	}
	s.log.Info("iSCSI portal created", "id", row["id"], "tag", row["tag"])
	return s.portalView(clone(row)), nil
}

func (s *Service) portalUpdate(c *middleware.Call, params []json.RawMessage) (any, error) {
	if err := argCount(params, 2); err != nil {
		return nil, err
	}
	d := s.portalArg("update")
	id, err := intArg(d, params, 0, "id")
	if err != nil {
		return nil, err
	}
	data, err := objArg(d, params, 1, s.portalFields(), false)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	old, err := s.instance(nsPortal, "ISCSIPortal", id)
	if err != nil {
		return nil, err
	}
	for k, v := range data {
		old[k] = v
	}
	if err := s.portalValidate(d, old, "iscsiportal_update", id); err != nil {
		return nil, err
	}
	row := normalize(old)
	s.t[nsPortal].put(row)
	if err := s.commit(nsPortal); err != nil {
		return nil, err
	}
	return s.portalView(clone(row)), nil
}

// portalDelete also drops the portal from every target's groups and
// renumbers the remaining portals' tags from 1.
func (s *Service) portalDelete(c *middleware.Call, params []json.RawMessage) (any, error) {
	if err := argCount(params, 1); err != nil {
		return nil, err
	}
	id, err := intArg(s.portalArg("delete"), params, 0, "id")
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.instance(nsPortal, "ISCSIPortal", id); err != nil {
		return nil, err
	}
	s.rewriteGroups(func(g map[string]any) map[string]any {
		if intOf(g["portal"]) == id {
			return nil
		}
		return g
	})
	t := s.t[nsPortal]
	t.remove(id)
	byTag := append([]middleware.Row(nil), t.rows...)
	sort.SliceStable(byTag, func(i, j int) bool { return intOf(byTag[i]["tag"]) < intOf(byTag[j]["tag"]) })
	for i, r := range byTag {
		r = clone(r) // stored rows are not changed in place (persist.go)
		r["tag"] = float64(i + 1)
		t.put(r)
	}
	if err := s.commit(nsPortal, nsTarget); err != nil {
		return nil, err
	}
	s.log.Info("iSCSI portal deleted", "id", id)
	return true, nil
}

// portalValidate is ISCSIPortalService.__validate. Callers hold s.mu.
func (s *Service) portalValidate(d dialect, data middleware.Row, schema string, self int) error {
	var errs middleware.ValidationErrors
	listen := objs(data["listen"])
	if len(listen) == 0 {
		return middleware.Invalid(schema+".listen", "At least one listen entry is required.")
	}
	for i, x := range listen {
		ip := strOf(x["ip"])
		if net.ParseIP(ip) == nil {
			msg := "'" + ip + "' does not appear to be an IPv4 or IPv6 address"
			if d.pydantic {
				msg = "Value error, value is not a valid IPv4 or IPv6 address"
			}
			errs = append(errs, middleware.ValidationError{Attribute: d.at("listen." + itoa(i) + ".ip"), Message: msg})
			continue
		}
		for _, other := range s.t[nsPortal].rows {
			if intOf(other["id"]) == self {
				continue
			}
			for _, y := range objs(other["listen"]) {
				if strOf(y["ip"]) == ip {
					errs = append(errs, middleware.ValidationError{Attribute: schema + ".listen", Message: "'" + ip + "' IP is already in use."})
				}
			}
		}
	}
	if method := strOf(data["discovery_authmethod"]); method != "" {
		group := intOf(data["discovery_authgroup"])
		switch {
		case data["discovery_authgroup"] != nil && len(s.authByTag(group)) == 0:
			errs = append(errs, middleware.ValidationError{Attribute: schema + ".discovery_authgroup",
				Message: `Auth Group "` + itoa(group) + `" not found.`, Errno: middleware.ENOENT})
		case data["discovery_authgroup"] == nil && (method == "CHAP" || method == "CHAP_MUTUAL"):
			errs = append(errs, middleware.ValidationError{Attribute: schema + ".discovery_authgroup",
				Message: "This field is required if discovery method is set to CHAP or CHAP Mutual."})
		}
	}
	if len(errs) > 0 {
		return errs
	}
	return nil
}

// rewriteGroups applies f to every group of every target; f returns the
// new group or nil to drop it. Callers hold s.mu.
func (s *Service) rewriteGroups(f func(map[string]any) map[string]any) {
	tb := s.t[nsTarget]
	for i, t := range tb.rows {
		t = clone(t) // stored rows are not changed in place (persist.go): f may change the groups
		out := []any{}
		for _, g := range objs(t["groups"]) {
			if ng := f(g); ng != nil {
				out = append(out, ng)
			}
		}
		t["groups"] = out
		tb.set(i, t)
	}
}
