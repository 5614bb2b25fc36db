package storage

import (
	"strings"

	"github.com/switchyard-csi/switchyard/simulators/zfsmodel"
)

// entryProp maps a ZFS property to the dataset entry attribute the
// middleware reports it as (get_props_of_interest_mapping).
type entryProp struct {
	zfs, api string
	xf       func(string) any
}

var entryProps = []entryProp{
	{"org.freenas:description", "comments", nil},
	{"org.freenas:quota_warning", "quota_warning", nil},
	{"org.freenas:quota_critical", "quota_critical", nil},
	{"org.freenas:refquota_warning", "refquota_warning", nil},
	{"org.freenas:refquota_critical", "refquota_critical", nil},
	{"org.truenas:managedby", "managedby", nil},
	{"dedup", "deduplication", upper},
	{"aclmode", "aclmode", upper},
	{"acltype", "acltype", upper},
	{"xattr", "xattr", upper},
	{"atime", "atime", upper},
	{"casesensitivity", "casesensitivity", upper},
	{"checksum", "checksum", upper},
	{"exec", "exec", upper},
	{"sync", "sync", upper},
	{"compression", "compression", upper},
	{"compressratio", "compressratio", nil},
	{"origin", "origin", nil},
	{"quota", "quota", nullNone},
	{"refquota", "refquota", nullNone},
	{"reservation", "reservation", nullNone},
	{"refreservation", "refreservation", nullNone},
	{"copies", "copies", nil},
	{"snapdir", "snapdir", upper},
	{"readonly", "readonly", upper},
	{"recordsize", "recordsize", nil},
	{"volsize", "volsize", nil},
	{"volblocksize", "volblocksize", nil},
	{"keyformat", "key_format", func(s string) any {
		if s == "none" {
			return nil
		}
		return strings.ToUpper(s)
	}},
	{"encryption", "encryption_algorithm", func(s string) any {
		if s == "off" {
			return nil
		}
		return strings.ToUpper(s)
	}},
	{"used", "used", nil},
	{"usedbychildren", "usedbychildren", nil},
	{"usedbydataset", "usedbydataset", nil},
	{"usedbyrefreservation", "usedbyrefreservation", nil},
	{"usedbysnapshots", "usedbysnapshots", nil},
	{"available", "available", nil},
	{"special_small_blocks", "special_small_block_size", nil},
	{"pbkdf2iters", "pbkdf2iters", nil},
	{"creation", "creation", nil},
	{"snapdev", "snapdev", upper},
}

// entryPropNames are the native properties an entry of every property
// reads (baseEntry): entryProps' and the mountpoint.
var entryPropNames = func() []string {
	out := []string{"mountpoint"}
	for _, p := range entryProps {
		out = append(out, p.zfs)
	}
	return out
}()

// internalUserProps are the user properties the middleware shows as
// attributes of their own (comments, managedby, ...) rather than in
// user_properties.
var internalUserProps = map[string]bool{
	"org.freenas:description": true, "org.freenas:quota_warning": true, "org.freenas:quota_critical": true,
	"org.freenas:refquota_warning": true, "org.freenas:refquota_critical": true, "org.truenas:managedby": true,
}

// entryOpts are the query-options.extra that shape entries.
type entryOpts struct {
	props     map[string]bool // properties to report (ZFS names); nil = all
	userProps bool            // report user_properties
}

// baseEntry builds a dataset's entry without its children.
func baseEntry(in *zfsmodel.Info, o entryOpts) map[string]any {
	typ := "FILESYSTEM"
	if in.Type == zfsmodel.Volume {
		typ = "VOLUME"
	}
	pool, _, _ := strings.Cut(in.Name, "/")
	// sized for every attribute at once: growing the map step by step to
	// ~55 entries rehashed it several times per entry (issue 16, sixth round)
	e := make(map[string]any, len(entryProps)+16)
	e["id"], e["name"], e["pool"], e["type"] = in.Name, in.Name, pool, typ
	e["encrypted"], e["encryption_root"], e["key_loaded"], e["locked"] = false, nil, false, false
	e["children"] = []any{}
	want := func(p string) bool { return o.props == nil || o.props[p] }
	for _, p := range entryProps {
		if !want(p.zfs) {
			continue
		}
		pv, ok := in.Props[p.zfs]
		switch {
		case ok && isUserProp(p.zfs):
			e[p.api] = userPropEntry(pv)
		case ok:
			e[p.api] = propEntry(p.zfs, pv, p.xf)
		case p.zfs == "origin":
			e[p.api] = noOrigin()
		}
	}
	if mp, ok := entryMountpoint(in, want("mountpoint")); ok {
		e["mountpoint"] = mp
	}
	up := map[string]any{}
	if o.userProps {
		for k, pv := range in.Props {
			if isUserProp(k) && !internalUserProps[k] {
				up[k] = userPropEntry(pv)
			}
		}
	}
	e["user_properties"] = up
	return e
}

// noOrigin is the origin of a dataset that is not a clone: libzfs
// reports an empty one.
func noOrigin() map[string]any {
	return map[string]any{"parsed": "", "rawvalue": "", "value": "", "source": "NONE", "source_info": nil}
}

// entryMountpoint is an entry's mountpoint and whether it has one: null
// for a volume, and for a filesystem (when wanted) whose mountpoint is
// none; "legacy"; else the path under the pool's altroot.
func entryMountpoint(in *zfsmodel.Info, wanted bool) (any, bool) {
	if in.Type == zfsmodel.Volume {
		return nil, true
	}
	pv, ok := in.Props["mountpoint"]
	if !wanted || !ok {
		return nil, false
	}
	switch pv.Value {
	case "none":
		return nil, true
	case "legacy":
		return "legacy", true
	}
	return apiMountpoint(pv.Value), true
}

// isInternal are the datasets pool.dataset.query hides (the system
// dataset, apps, ...).
func isInternal(name string) bool {
	for _, frag := range []string{"/.system", "/ix-applications/", "/ix-apps", "/.ix-virt"} {
		if strings.Contains(name, frag) {
			return true
		}
	}
	return false
}
