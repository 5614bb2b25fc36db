package sharing

import (
	"encoding/json"
	"sort"

	"github.com/switchyard-csi/switchyard/simulators/truenas/middleware"
)

// iscsi.targetextent (plugins/iscsi_/target_to_extent.py): an extent
// mapped into a target at a LUN.

// lunMapSize is SCST's LUN map size; LUN ids go up to lunMapSize-1.
const lunMapSize = 16383

func (s *Service) targetExtentFields(create bool) []field {
	if !create {
		f := []field{{name: "target", kind: kInt}, {name: "lunid", kind: kInt}, {name: "extent", kind: kInt}}
		if s.v.AtLeast(25, 4, 0) {
			// the update model derives from the entry, id included
			f = append(f, field{name: "id", kind: kInt})
		}
		return f
	}
	f := []field{
		{name: "target", kind: kInt, required: true},
		{name: "lunid", kind: kInt, null: true},
		{name: "extent", kind: kInt, required: true},
	}
	return f
}

func (s *Service) targetExtentArg(verb string) dialect {
	return s.iscsiArg("iscsi_targetextent_"+verb, "iscsi_target_to_extent_"+verb)
}

func (s *Service) registerTargetExtent(r *middleware.Registry) {
	s.addCRUD(r, crud{
		ns: nsTargetExt, verbose: "iSCSITargetToExtent",
		create: s.targetExtentCreate, createParams: []string{"iscsi_target_to_extent_create"},
		update: s.targetExtentUpdate, updateParams: []string{"id", "iscsi_target_to_extent_update"},
		del: s.targetExtentDelete, delParams: []string{"id", "force"},
	})
}

func (s *Service) targetExtentCreate(c *middleware.Call, params []json.RawMessage) (any, error) {
	if err := argCount(params, 1); err != nil {
		return nil, err
	}
	data, err := objArg(s.targetExtentArg("create"), params, 0, s.targetExtentFields(true), true)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.targetExtentValidate(data, "iscsi_targetextent_create", nil); err != nil {
		return nil, err
	}
	row, err := s.insert(nsTargetExt, data)
	if err != nil {
		return nil, err
	}
	s.log.Info("iSCSI LUN mapped", "id", row["id"], "target", row["target"], "extent", row["extent"], "lunid", row["lunid"])
	return row, nil
}

func (s *Service) targetExtentUpdate(c *middleware.Call, params []json.RawMessage) (any, error) {
	if err := argCount(params, 2); err != nil {
		return nil, err
	}
	d := s.targetExtentArg("update")
	id, err := intArg(d, params, 0, "id")
	if err != nil {
		return nil, err
	}
	data, err := objArg(d, params, 1, s.targetExtentFields(false), false)
	if err != nil {
		return nil, err
	}
	delete(data, "id")
	s.mu.Lock()
	defer s.mu.Unlock()
	old, err := s.instance(nsTargetExt, "iSCSITargetToExtent", id)
	if err != nil {
		return nil, err
	}
	updated := clone(old)
	for k, v := range data {
		updated[k] = v
	}
	if err := s.targetExtentValidate(updated, "iscsi_targetextent_update", old); err != nil {
		return nil, err
	}
	return s.replace(nsTargetExt, updated)
}

func (s *Service) targetExtentDelete(c *middleware.Call, params []json.RawMessage) (any, error) {
	if err := argCount(params, 2); err != nil {
		return nil, err
	}
	d := s.targetExtentArg("delete")
	id, err := intArg(d, params, 0, "id")
	if err != nil {
		return nil, err
	}
	force, err := boolArg(d, params, 1, "force")
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	te, err := s.instance(nsTargetExt, "iSCSITargetToExtent", id)
	if err != nil {
		return nil, err
	}
	if t := s.t[nsTarget].get(intOf(te["target"])); t != nil && s.inUse[strOf(t["name"])] && !force {
		return nil, middleware.Errorf(middleware.EFAULT, "Associated target %s:%s is in use.", s.basename(), strOf(t["name"]))
	}
	s.t[nsTargetExt].remove(id)
	if err := s.commit(nsTargetExt); err != nil {
		return nil, err
	}
	s.log.Info("iSCSI LUN unmapped", "id", id)
	return true, nil
}

// targetExtentValidate assigns a free LUN when none is given and refuses
// a LUN taken on the target or an extent mapped elsewhere
// (iSCSITargetToExtentService.validate). Callers hold s.mu.
func (s *Service) targetExtentValidate(data middleware.Row, schema string, old middleware.Row) error {
	target, extent := intOf(data["target"]), intOf(data["extent"])
	self := intOf(old["id"])
	if data["lunid"] == nil {
		var luns []int
		for _, te := range s.t[nsTargetExt].rows {
			if intOf(te["target"]) == target {
				luns = append(luns, intOf(te["lunid"]))
			}
		}
		sort.Ints(luns)
		lun := 0
		for _, l := range luns { // the lowest free LUN, else one past the highest
			if l == lun {
				lun++
			}
		}
		data["lunid"] = lun
	}
	lunid := intOf(data["lunid"])
	var errs middleware.ValidationErrors
	add := func(attr, msg string) {
		errs = append(errs, middleware.ValidationError{Attribute: schema + "." + attr, Message: msg})
	}
	if lunid < 0 || lunid > lunMapSize-1 {
		add("lunid", "LUN ID must be a positive integer and lower than "+itoa(lunMapSize-1))
	}
	changed := old == nil || intOf(old["lunid"]) != lunid || intOf(old["target"]) != target
	if changed {
		for _, te := range s.t[nsTargetExt].rows {
			if intOf(te["id"]) != self && intOf(te["target"]) == target && intOf(te["lunid"]) == lunid {
				add("lunid", "LUN ID is already being used for this target.")
				break
			}
		}
	}
	if old == nil || intOf(old["extent"]) != extent {
		for _, te := range s.t[nsTargetExt].rows {
			if intOf(te["id"]) != self && intOf(te["extent"]) == extent {
				add("extent", "Extent is already in use.")
				break
			}
		}
	}
	if len(errs) > 0 {
		return errs
	}
	if s.t[nsTarget].get(target) == nil || s.t[nsExtent].get(extent) == nil {
		// the real service relies on the database's foreign keys here
		return middleware.Errorf(middleware.EFAULT, "FOREIGN KEY constraint failed")
	}
	return nil
}
