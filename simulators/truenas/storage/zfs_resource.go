package storage

import (
	"encoding/json"
	"path"
	"strconv"
	"strings"

	"github.com/switchyard-csi/switchyard/simulators/truenas/middleware"
	"github.com/switchyard-csi/switchyard/simulators/zfsmodel"
)

// zfs.resource.query (25.10+, plugins/zfs/resource_crud.py): the public,
// libzfs-backed query of filesystems and volumes. Its entries differ from
// pool.dataset's: {createtxg, guid (integers), name, pool, type,
// properties: {<zfs name>: {raw, source: {type, value}, value}},
// user_properties (null unless asked), children}.

// spaceProps are what an empty "properties" list returns (truenas_pylibzfs
// ZFS_SPACE_PROPERTIES, the set `zfs get space` shows).
var spaceProps = []string{"available", "used", "usedbychildren", "usedbydataset", "usedbyrefreservation", "usedbysnapshots"}

func (s *service) registerZFSResource() {
	if !s.v.AtLeast(25, 10, 0) {
		return
	}
	s.r.Add(middleware.Method{Name: "zfs.resource.query", Params: []string{"data"}, Handler: s.zfsResourceQuery})
}

func (s *service) zfsResourceQuerySchema() schema {
	f := []field{
		{name: "paths", typ: tList, def: []any{}, check: uniqueStrings},
		{name: "properties", typ: tList, null: true, def: []any{}},
		{name: "get_user_properties", typ: tBool, def: false},
		{name: "get_source", typ: tBool, def: true},
		{name: "nest_results", typ: tBool, def: false},
		{name: "get_children", typ: tBool, def: false},
	}
	if s.v.AtLeast(26, 0, 0) {
		f = append(f,
			field{name: "max_depth", typ: tInt, def: int64(0), check: rangeCheck(true, 0, 1<<31-1)},
			field{name: "exclude_internal_paths", typ: tBool, def: true},
			// tiering needs an Enterprise licence: a simulated system
			// has none, so the answer never carries tier information
			field{name: "get_tier", typ: tBool, def: false})
	}
	return schema{name: "data", pydantic: true, fields: f}
}

func uniqueStrings(v any) string {
	seen := map[any]bool{}
	for _, x := range v.([]any) {
		if _, ok := x.(string); !ok {
			return "Input should be a valid string"
		}
		if seen[x] {
			return "List must be unique"
		}
		seen[x] = true
	}
	return ""
}

func (s *service) zfsResourceQuery(_ *middleware.Call, params []json.RawMessage) (any, error) {
	if err := positional(params, 1); err != nil {
		return nil, err
	}
	a, err := s.zfsResourceQuerySchema().parse(param(params, 0))
	if err != nil {
		return nil, err
	}
	var paths []string
	for _, p := range a["paths"].([]any) {
		paths = append(paths, p.(string))
	}
	for _, p := range paths {
		if strings.Contains(p, "@") {
			return nil, middleware.Invalid("zfs.resource.query", "Querying snapshot information is unsupported at this time.")
		}
	}
	// 26: max_depth > 0 implies get_children, limited to that many
	// levels below each root; exclude_internal_paths (private) may let
	// the internal datasets through.
	maxDepth, _ := a.int("max_depth")
	children := a.boolean("get_children") || maxDepth > 0
	hide := func(n string) bool {
		return isInternal(n) && (!a.has("exclude_internal_paths") || a.boolean("exclude_internal_paths"))
	}
	deep := func(root, n string) bool {
		return maxDepth > 0 && int64(strings.Count(n, "/")-strings.Count(root, "/")) > maxDepth
	}
	if children && overlapping(paths) {
		return nil, middleware.Invalid("zfs.resource.query",
			"Paths must be non-overlapping - no path can be relative to another when get_children is set to True.")
	}
	var want map[string]bool // nil: none (properties null)
	if l, ok := a["properties"].([]any); ok {
		want = map[string]bool{}
		if len(l) == 0 {
			l = stringsAsAny(spaceProps)
		}
		for _, p := range l {
			if ps, ok := p.(string); ok {
				want[strings.ToLower(ps)] = true
			}
		}
	}
	var names []string
	if len(paths) == 0 {
		all, err := s.m.List("", children, zfsmodel.Filesystem|zfsmodel.Volume)
		if err != nil {
			return nil, err
		}
		for _, n := range all {
			pool, _, _ := strings.Cut(n, "/")
			if !hide(n) && !deep(pool, n) && (children || !strings.Contains(n, "/")) {
				names = append(names, n)
			}
		}
	} else {
		for _, p := range paths {
			if !s.m.Exists(p) {
				return nil, middleware.ValidationErrors{{Attribute: "zfs.resource.query", Message: pyRepr(p) + ": not found", Errno: middleware.ENOENT}}
			}
			found := []string{p}
			if children {
				found, _ = s.m.List(p, true, zfsmodel.Filesystem|zfsmodel.Volume)
			}
			for _, n := range found {
				if n == p || !hide(n) && !deep(p, n) {
					names = append(names, n)
				}
			}
		}
	}
	rows := make([]map[string]any, 0, len(names))
	for _, n := range names {
		in, err := s.m.Get(n)
		if err != nil {
			continue // destroyed meanwhile
		}
		e := zfsResourceEntry(in, want, a.boolean("get_user_properties"), a.boolean("get_source"))
		if s.v.AtLeast(26, 0, 0) {
			e["tier"] = nil // tiering is licensed: None without it
		}
		rows = append(rows, e)
	}
	if a.boolean("nest_results") {
		return nestResources(rows), nil
	}
	return rows, nil
}

func stringsAsAny(l []string) []any {
	out := make([]any, len(l))
	for i, s := range l {
		out[i] = s
	}
	return out
}

// overlapping: one path is another's descendant.
func overlapping(paths []string) bool {
	for _, p := range paths {
		for _, q := range paths {
			if p != q && strings.HasPrefix(q, p+"/") {
				return true
			}
		}
	}
	return false
}

// zfsResourceEntry is one entry; want nil retrieves no properties.
func zfsResourceEntry(in *zfsmodel.Info, want map[string]bool, userProps, withSource bool) map[string]any {
	pool, _, _ := strings.Cut(in.Name, "/")
	typ := "FILESYSTEM"
	if in.Type == zfsmodel.Volume {
		typ = "VOLUME"
	}
	props := map[string]any{}
	var user map[string]any
	if userProps {
		user = map[string]any{}
	}
	for k, pv := range in.Props {
		if isUserProp(k) {
			if user != nil {
				user[userPropName(k)] = pv.Value
			}
			continue
		}
		if !want[k] {
			continue
		}
		p := map[string]any{"raw": pv.Value, "value": resourceValue(k, pv.Value), "source": nil}
		if withSource {
			var from any
			if pv.Source == zfsmodel.SourceInherited {
				from = pv.From
			}
			p["source"] = map[string]any{"type": sourceName(pv.Source), "value": from}
		}
		props[k] = p
	}
	e := map[string]any{
		"createtxg": in.CreateTXG, "guid": in.GUID, "name": in.Name, "pool": pool, "type": typ,
		"properties": props, "children": []any{},
	}
	if user != nil {
		e["user_properties"] = user
	} else {
		e["user_properties"] = nil
	}
	return e
}

// userPropName renames the middleware's own user properties as
// normalize_asdict_result does.
func userPropName(k string) string {
	for _, p := range entryProps {
		if p.zfs == k && strings.Contains(k, ":") {
			return p.api
		}
	}
	return k
}

// resourceValue is the parsed value: integers for numbers, booleans for
// yes/no (mounted), floats for ratios, the raw text otherwise.
func resourceValue(prop, raw string) any {
	switch {
	case raw == "yes" && prop == "mounted":
		return true
	case raw == "no" && prop == "mounted":
		return false
	case prop == "compressratio" || prop == "refcompressratio":
		if f, err := strconv.ParseFloat(raw, 64); err == nil {
			return f
		}
	}
	if n, err := strconv.ParseInt(raw, 10, 64); err == nil {
		return n
	}
	return raw
}

// nestResources attaches each entry to its nearest listed ancestor.
func nestResources(rows []map[string]any) []map[string]any {
	byName := map[string]map[string]any{}
	for _, r := range rows {
		byName[r["name"].(string)] = r
	}
	var roots []map[string]any
	for _, r := range rows {
		name := r["name"].(string)
		attached := false
		for p := path.Dir(name); p != "." && p != "/"; p = path.Dir(p) {
			if parent, ok := byName[p]; ok {
				parent["children"] = append(parent["children"].([]any), r)
				attached = true
				break
			}
		}
		if !attached {
			roots = append(roots, r)
		}
	}
	return roots
}
