package storage

import (
	"encoding/json"
	"strings"

	"github.com/switchyard-csi/switchyard/simulators/truenas/middleware"
	"github.com/switchyard-csi/switchyard/simulators/zfsmodel"
)

// pydanticTypeSplit is what the 25.10 create model (a union of a
// FILESYSTEM and a VOLUME model) rejects: attributes of the other type,
// and a VOLUME without volsize.
func pydanticTypeSplit(a args) middleware.ValidationErrors {
	var errs middleware.ValidationErrors
	add := func(k, msg string) {
		errs = append(errs, middleware.ValidationError{Attribute: "pool_dataset_create." + k, Message: msg})
	}
	if a.str("type") == "VOLUME" {
		for _, k := range fsOnly {
			if a.has(k) {
				add(k, "Extra inputs are not permitted")
			}
		}
		if !a.has("volsize") {
			add("volsize", "Field required")
		}
	} else {
		for _, k := range volOnly {
			if a.has(k) {
				add(k, "Extra inputs are not permitted")
			}
		}
	}
	return errs
}

func (s *service) datasetCreate(c *middleware.Call, params []json.RawMessage) (any, error) {
	if err := positional(params, 1); err != nil {
		return nil, err
	}
	a, err := s.datasetSchema(false).parse(param(params, 0))
	if err != nil {
		return nil, err
	}
	pyd := s.pydantic()
	name, typ := a.str("name"), a.str("type")
	if pyd {
		errs := pydanticTypeSplit(a)
		if !validDatasetName(name) {
			errs = append(errs, middleware.ValidationError{Attribute: "pool_dataset_create.name",
				Message: "Value error, Please provide a valid dataset name according to ZFS standards"})
		}
		if len(errs) > 0 {
			return nil, errs
		}
	}
	v := &dsValidation{s: s, attr: "pool_dataset_create", a: a, typ: typ, name: name, create: true}
	switch {
	case !strings.Contains(name, "/"):
		v.add("name", "You need a full name, e.g. pool/newdataset")
	case !validDatasetName(name):
		v.add("name", "Invalid dataset name")
	case !pyd && len(name) > 200:
		v.add("name", "Dataset name length should be less than or equal to 200")
	case strings.HasSuffix(name, " "):
		v.add("name", "Trailing spaces are not permitted in dataset names")
	default:
		v.parName = name[:strings.LastIndex(name, "/")]
		if a.boolean("create_ancestors") {
			// the nearest existing ancestor must at least be the pool
			for !s.m.Exists(v.parName) && strings.Contains(v.parName, "/") {
				v.parName = v.parName[:strings.LastIndex(v.parName, "/")]
			}
		}
		if in, err := s.parentInfo(v.parName, typ); err == nil {
			v.parent = in
		}
		if typ == "FILESYSTEM" {
			applyShareType(a)
		}
		v.run()
	}
	if len(v.errs) > 0 {
		return nil, v.errs
	}
	if v.parent.Type == zfsmodel.Volume {
		v.add("name", "%s: parent may not be a ZFS volume", v.parent.Name)
	}
	mountpoint := altroot + "/" + name
	if s.pathExists(mountpoint) {
		v.add("name", "Path %s already exists", mountpoint)
	}
	if a.boolean("encryption") {
		v.add("encryption", "Encrypted datasets are not simulated")
	}
	if len(v.errs) > 0 {
		return nil, v.errs
	}
	props, opts := s.createProps(a, typ)
	ztype := zfsmodel.Filesystem
	if typ == "VOLUME" {
		ztype = zfsmodel.Volume
	}
	failed := "Failed to create dataset: "
	if s.v.AtLeast(26, 0, 0) {
		failed = "Failed to create dataset " + name + ": "
	}
	if s.m.Exists(name) {
		return nil, &middleware.CallError{Errno: middleware.EEXIST, Message: failed + "dataset already exists"}
	}
	if opts.Parents {
		// ancestors first; the dataset itself without -p, so that a
		// concurrent create of the same name fails instead of succeeding twice
		opts.Parents = false
		if parent := name[:strings.LastIndex(name, "/")]; !s.m.Exists(parent) {
			if err := s.m.Create(parent, zfsmodel.Filesystem, nil, zfsmodel.CreateOptions{Parents: true}); err != nil {
				return nil, callErr(failed, err)
			}
		}
	}
	if err := s.m.Create(name, ztype, props, opts); err != nil {
		return nil, callErr(failed, err)
	}
	s.log.Debug("pool.dataset.create", "name", name, "type", typ)
	return s.datasetEntry(name)
}

// applyShareType sets the ACL and case properties a share_type implies.
func applyShareType(a args) {
	switch a.str("share_type") {
	case "SMB":
		a["casesensitivity"], a["acltype"], a["aclmode"] = "INSENSITIVE", "NFSV4", "RESTRICTED"
	case "APPS", "MULTIPROTOCOL", "NFS":
		a["casesensitivity"], a["atime"], a["acltype"], a["aclmode"] = "SENSITIVE", "OFF", "NFSV4", "PASSTHROUGH"
	}
}

// createProps turns validated create arguments into zfs create's
// properties and flags.
func (s *service) createProps(a args, typ string) (map[string]string, zfsmodel.CreateOptions) {
	props := map[string]string{}
	if typ == "FILESYSTEM" {
		if at := a.str("acltype"); at != "" && at != "INHERIT" {
			a["aclinherit"] = "DISCARD"
			if at == "NFSV4" {
				a["aclinherit"] = "PASSTHROUGH"
			}
		}
		if !a.has("xattr") || a.str("xattr") == "INHERIT" {
			a["xattr"] = "SA" // middleware always creates filesystems with xattr=sa
		}
	}
	for _, p := range dsProps {
		v, ok := a[p.api]
		if !ok || p.inheritable && v == "INHERIT" || p.api == "volsize" {
			continue
		}
		if p.api == "comments" && v == "INHERIT" {
			continue
		}
		props[p.zfs] = zfsValue(p, v)
	}
	for _, it := range listOf(a["user_properties"]) {
		props[it.str("key")] = it.str("value")
	}
	opts := zfsmodel.CreateOptions{Parents: a.boolean("create_ancestors")}
	if typ == "VOLUME" {
		opts.Volsize, _ = a.int("volsize")
		opts.Blocksize = volblocksizes[a.str("volblocksize")]
		opts.Sparse = a.boolean("sparse")
		if opts.Sparse {
			props["refreservation"] = "none"
		}
	}
	return props, opts
}

// listOf returns the object items of a validated list attribute.
func listOf(v any) []args {
	l, _ := v.([]any)
	out := make([]args, 0, len(l))
	for _, it := range l {
		if a, ok := it.(args); ok {
			out = append(out, a)
		}
	}
	return out
}
