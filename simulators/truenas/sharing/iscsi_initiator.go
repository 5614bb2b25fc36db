package sharing

import (
	"encoding/json"
	"strings"

	"github.com/switchyard-csi/switchyard/simulators/truenas/middleware"
)

// iscsi.initiator (plugins/iscsi_/initiator.py): groups of initiator IQNs
// allowed to log in to the targets that name them; an empty list allows
// every initiator.

// storedInitiators is what the middleware's compress and extend make of a
// list: it is kept as one text column, "ALL" when empty, else the names
// joined by newlines, and read back split at whitespace, so "ALL" alone
// reads back as the empty list (every initiator).
func storedInitiators(data middleware.Row) {
	v, ok := data["initiators"]
	if !ok {
		return
	}
	text := strings.Join(strsOf(v), "\n")
	if text == "" {
		text = "ALL"
	}
	out := []any{}
	if text != "ALL" {
		for _, f := range strings.Fields(text) {
			out = append(out, f)
		}
	}
	data["initiators"] = out
}

func (s *Service) registerInitiator(r *middleware.Registry) {
	fields := []field{
		{name: "initiators", kind: kStrList, def: []any{}},
		{name: "comment", kind: kStr, def: ""},
	}
	arg := func(verb string) dialect { return s.iscsiArg("iscsi_initiator_"+verb, "iscsi_initiator_"+verb) }
	s.addCRUD(r, crud{
		ns: nsInitiator, verbose: "iSCSITargetAuthorizedInitiator",
		createParams: []string{"iscsi_initiator_create"},
		create: func(c *middleware.Call, params []json.RawMessage) (any, error) {
			if err := argCount(params, 1); err != nil {
				return nil, err
			}
			data, err := objArg(arg("create"), params, 0, fields, true)
			if err != nil {
				return nil, err
			}
			storedInitiators(data)
			s.mu.Lock()
			defer s.mu.Unlock()
			return s.insert(nsInitiator, data)
		},
		updateParams: []string{"id", "iscsi_initiator_update"},
		update: func(c *middleware.Call, params []json.RawMessage) (any, error) {
			if err := argCount(params, 2); err != nil {
				return nil, err
			}
			id, err := intArg(arg("update"), params, 0, "id")
			if err != nil {
				return nil, err
			}
			upd := fields
			if s.v.AtLeast(25, 4, 0) {
				// the update model derives from the entry, id included
				upd = append(append([]field{}, fields...), field{name: "id", kind: kInt})
			}
			data, err := objArg(arg("update"), params, 1, upd, false)
			if err != nil {
				return nil, err
			}
			delete(data, "id")
			s.mu.Lock()
			defer s.mu.Unlock()
			old, err := s.instance(nsInitiator, "iSCSITargetAuthorizedInitiator", id)
			if err != nil {
				return nil, err
			}
			for k, v := range data {
				old[k] = v
			}
			storedInitiators(old)
			return s.replace(nsInitiator, old)
		},
		delParams: []string{"id"},
		del: func(c *middleware.Call, params []json.RawMessage) (any, error) {
			if err := argCount(params, 1); err != nil {
				return nil, err
			}
			id, err := intArg(arg("delete"), params, 0, "id")
			if err != nil {
				return nil, err
			}
			s.mu.Lock()
			defer s.mu.Unlock()
			if _, err := s.instance(nsInitiator, "iSCSITargetAuthorizedInitiator", id); err != nil {
				return nil, err
			}
			// the groups' foreign key is ON DELETE SET NULL
			s.rewriteGroups(func(g map[string]any) map[string]any {
				if g["initiator"] != nil && intOf(g["initiator"]) == id {
					g["initiator"] = nil
				}
				return g
			})
			s.t[nsInitiator].remove(id)
			if err := s.commit(nsInitiator, nsTarget); err != nil {
				return nil, err
			}
			return true, nil
		},
	})
}
