package storage

import (
	"encoding/json"
	"strings"

	"github.com/switchyard-csi/switchyard/simulators/truenas/middleware"
	"github.com/switchyard-csi/switchyard/simulators/zfsmodel"
)

func (s *service) datasetUpdate(c *middleware.Call, params []json.RawMessage) (any, error) {
	if err := positional(params, 2); err != nil {
		return nil, err
	}
	id, err := stringParam(params, 0, "id")
	if err != nil {
		return nil, err
	}
	a, err := s.datasetSchema(true).parse(param(params, 1))
	if err != nil {
		return nil, err
	}
	// A filesystem's validation reads the dataset's type, ACL settings
	// and user properties; only a volume's checks its used space (volsize
	// against what is available) and its block size, so only a volume is
	// measured here and read whole (issue 16, seventh round). The answer
	// is measured by datasetEntry either way.
	cur, err := s.m.PeekProps(id, fsValidationProps...)
	if err == nil && cur.Type == zfsmodel.Volume {
		cur, err = s.m.Get(id)
	}
	if err != nil || cur.Type == zfsmodel.Snapshot || isInternal(id) {
		return nil, middleware.ValidationErrors{{Attribute: "id", Message: id + " does not exist", Errno: middleware.ENOENT}}
	}
	typ := "FILESYSTEM"
	if cur.Type == zfsmodel.Volume {
		typ = "VOLUME"
		a["volblocksize"] = human("volblocksize", propRaw(cur, "volblocksize"))
	}
	v := &dsValidation{s: s, attr: "pool_dataset_update", a: a, typ: typ, name: id, cur: cur}
	v.parName = id
	if i := strings.LastIndex(id, "/"); i >= 0 {
		v.parName = id[:i]
	}
	if in, err := s.parentInfo(v.parName, typ); err == nil {
		v.parent = in
	}
	v.run()
	if n, ok := a.int("volsize"); ok && typ == "VOLUME" && n < cur.Volsize {
		v.add("volsize", "You cannot shrink a zvol from GUI, this may lead to data loss.")
	}
	if len(v.errs) > 0 {
		return nil, v.errs
	}
	if err := s.applyUpdate(id, a); err != nil {
		return nil, err
	}
	s.log.Debug("pool.dataset.update", "name", id)
	return s.datasetEntry(id)
}

// propChange is one property set or inherited by an update.
type propChange struct {
	api, zfs, value string
	inherit         bool
}

// updateChanges lists what an update does, in the middleware's order:
// native and obfuscated user properties, then user_properties_update.
func updateChanges(a args) []propChange {
	var out []propChange
	for _, p := range dsProps {
		v, ok := a[p.api]
		if !ok || p.createOnly {
			continue
		}
		if p.inheritable && v == "INHERIT" {
			out = append(out, propChange{api: p.api, zfs: p.zfs, inherit: true})
			if p.zfs == "acltype" {
				out = append(out, propChange{api: "aclmode", zfs: "aclmode", inherit: true},
					propChange{api: "aclinherit", zfs: "aclinherit", inherit: true})
			}
			continue
		}
		val := zfsValue(p, v)
		out = append(out, propChange{api: p.api, zfs: p.zfs, value: val})
		if p.zfs == "acltype" {
			switch val {
			case "nfsv4":
				out = append(out, propChange{api: "aclinherit", zfs: "aclinherit", value: "passthrough"})
			case "posix", "off":
				out = append(out, propChange{api: "aclmode", zfs: "aclmode", value: "discard"},
					propChange{api: "aclinherit", zfs: "aclinherit", value: "discard"})
			}
		}
	}
	for _, up := range listOf(a["user_properties_update"]) {
		switch {
		case up.has("value"):
			out = append(out, propChange{api: up.str("key"), zfs: up.str("key"), value: up.str("value")})
		case up.boolean("remove"):
			out = append(out, propChange{api: up.str("key"), zfs: up.str("key"), inherit: true})
		}
	}
	return out
}

// applyUpdate sets and inherits properties one at a time, as libzfs does,
// so that a failure names the property. An update that only sets is tried
// as one change first (one record written under the model's lock instead
// of one per property, which serialised concurrent updates: issue 16); if
// that fails, nothing was set, and the one-at-a-time path finds and names
// the property, leaving the earlier ones set as before.
func (s *service) applyUpdate(id string, a args) error {
	changes := updateChanges(a)
	if len(changes) > 1 {
		all := map[string]string{}
		for _, ch := range changes {
			if ch.inherit {
				all = nil
				break
			}
			all[ch.zfs] = ch.value
		}
		if len(all) == len(changes) && s.m.SetProperties(id, all) == nil {
			return nil
		}
	}
	for _, ch := range changes {
		var err error
		if ch.inherit {
			err = s.m.InheritProperty(id, ch.zfs, false, false)
		} else {
			err = s.m.SetProperty(id, ch.zfs, ch.value)
		}
		if err == nil {
			continue
		}
		errno := middleware.EINVAL
		if zfsmodel.KindOf(err) == zfsmodel.KindOutOfSpace {
			errno = middleware.ENOSPC
		}
		if s.pydantic() {
			return middleware.ValidationErrors{{Attribute: "pool.dataset.update",
				Message: "Failed to update properties: " + zfsReason(err), Errno: errno}}
		}
		return middleware.ValidationErrors{{Attribute: "pool_dataset_update." + ch.api, Message: zfsReason(err), Errno: errno}}
	}
	return nil
}
