package storage

import (
	"encoding/json"
	"strings"

	"github.com/switchyard-csi/switchyard/simulators/truenas/middleware"
	"github.com/switchyard-csi/switchyard/simulators/zfsmodel"
)

// datasetExtra is query-options.extra of pool.dataset.query.
type datasetExtra struct {
	flat, children bool
	entry          entryOpts
	snaps          snapshotsExtra
	// measure: the entries need what only zfsmodel.Get gives, a freshly
	// measured dataset (a space figure among the properties asked for)
	// or its lists (children, snapshots). Without it the rows come from
	// zfsmodel.PeekProps: the middleware reads only the properties asked for,
	// and walking each dataset's directory and sorting its children was
	// most of the driver's DeleteVolume lookup (issue 16, seventh round).
	measure bool
}

// measuredProps are the properties whose value Get measures and Peek may
// show as last measured (zfsmodel's space accounting).
var measuredProps = []string{"used", "available", "referenced", "logicalreferenced", "logicalused", "written",
	"usedbydataset", "usedbysnapshots", "usedbychildren", "usedbyrefreservation"}

// needsMeasure tells whether the entries x describes read anything that
// zfsmodel.Peek leaves out or may show stale.
func (x datasetExtra) needsMeasure() bool {
	if x.children || x.snaps.list || x.snaps.count || x.entry.props == nil {
		return true
	}
	for _, p := range measuredProps {
		if x.entry.props[p] {
			return true
		}
	}
	return false
}

// snapshotsExtra are the extra.snapshots* options, which the middleware
// hands to its ZFS query: a "snapshots" list and/or a "snapshot_count"
// per dataset.
type snapshotsExtra struct {
	list, recursive, count bool
	// props: nil is every property (extra.snapshots_properties null),
	// an empty map none (the default []: no "properties" key at all).
	props map[string]bool
}

func parseDatasetExtra(extra map[string]any) datasetExtra {
	x := datasetExtra{flat: true, children: true, entry: entryOpts{userProps: true}}
	if b, ok := extra["flat"].(bool); ok {
		x.flat = b
	}
	if b, ok := extra["retrieve_children"].(bool); ok {
		x.children = b
	}
	for _, k := range []string{"retrieve_user_props", "user_properties"} {
		if b, ok := extra[k].(bool); ok {
			x.entry.userProps = b
		}
	}
	if l, ok := extra["properties"].([]any); ok {
		x.entry.props = stringSet(l)
	}
	x.snaps.list, _ = extra["snapshots"].(bool)
	x.snaps.recursive, _ = extra["snapshots_recursive"].(bool)
	x.snaps.count, _ = extra["snapshots_count"].(bool)
	x.snaps.props = map[string]bool{}
	if v, ok := extra["snapshots_properties"]; ok {
		if l, isList := v.([]any); isList {
			x.snaps.props = stringSet(l)
		} else if v == nil {
			x.snaps.props = nil
		}
	}
	x.measure = x.needsMeasure()
	return x
}

func stringSet(l []any) map[string]bool {
	m := map[string]bool{}
	for _, p := range l {
		if s, ok := p.(string); ok {
			m[s] = true
		}
	}
	return m
}

// addSnapshots fills entry's "snapshots" and "snapshot_count" as the
// middleware's dataset query does: each snapshot as {pool, name, type,
// snapshot_name, dataset, id, createtxg}, with "properties" only when
// snapshots_properties asks for some (null: all). snapshots_recursive adds
// the descendants' snapshots up to 25.04 (libzfs did); 25.10's query walks
// only the dataset's own snapshots whatever it says.
func (s *service) addSnapshots(entry map[string]any, in *zfsmodel.Info, x snapshotsExtra) {
	if !x.list && !x.count {
		return
	}
	names := in.Snapshots
	if x.recursive && x.list && !s.v.AtLeast(25, 10, 0) {
		if all, err := s.m.List(in.Name, true, zfsmodel.Snapshot); err == nil {
			names = all
		}
	}
	if x.count {
		entry["snapshot_count"] = len(in.Snapshots)
	}
	if !x.list {
		return
	}
	list := []any{}
	for _, n := range names {
		si, err := s.m.Get(n)
		if err != nil {
			continue // destroyed meanwhile
		}
		e := snapshotEntry(si, x.props, false, false)
		if x.props != nil && len(x.props) == 0 {
			delete(e, "properties")
		}
		list = append(list, e)
	}
	entry["snapshots"] = list
}

// singleName recognises the common [["id", "=", name]] filter so that only
// that dataset (and its descendants) is read, as the middleware does.
func singleName(filters []any) (string, bool) {
	if len(filters) != 1 {
		return "", false
	}
	f, ok := filters[0].([]any)
	if !ok || len(f) != 3 || f[1] != "=" || (f[0] != "id" && f[0] != "name") {
		return "", false
	}
	name, ok := f[2].(string)
	return name, ok
}

// datasetRows builds the entries a query filters.
func (s *service) datasetRows(filters []any, x datasetExtra) ([]middleware.Row, error) {
	var names []string
	if name, ok := singleName(filters); ok {
		if strings.Contains(name, "@") || !s.m.Exists(name) {
			return nil, nil
		}
		if x.children {
			names, _ = s.m.List(name, true, zfsmodel.Filesystem|zfsmodel.Volume)
		} else {
			names = []string{name}
		}
	} else {
		// Without children every row stands alone: build only those the
		// names let through (dataset_prefilter.go), listing only the
		// subtree that can hold them.
		prefilter := !x.children && len(filters) > 0 && nameOnly(filters)
		root := ""
		if prefilter {
			root = s.existingRoot(filters)
		}
		var err error
		if names, err = s.m.List(root, true, zfsmodel.Filesystem|zfsmodel.Volume); err != nil {
			return nil, err
		}
		if prefilter {
			names = namesMatching(names, filters)
		}
	}
	// the native properties the entries read (zfsmodel reads only these)
	asked := entryPropNames
	if x.entry.props != nil {
		asked = make([]string, 0, len(x.entry.props))
		for p := range x.entry.props {
			asked = append(asked, p)
		}
	}
	entries := map[string]map[string]any{}
	kids := map[string][]string{}
	var order []string
	for _, n := range names {
		if isInternal(n) {
			continue
		}
		var in *zfsmodel.Info
		var err error
		if x.measure {
			in, err = s.m.GetProps(n, asked...)
		} else {
			in, err = s.m.PeekProps(n, asked...)
		}
		if err != nil {
			continue // destroyed meanwhile
		}
		entries[n] = baseEntry(in, x.entry)
		s.addSnapshots(entries[n], in, x.snaps)
		kids[n] = in.Children
		order = append(order, n)
	}
	if x.children {
		for _, n := range order {
			list := []any{}
			for _, k := range kids[n] {
				if e, ok := entries[k]; ok {
					list = append(list, e)
				}
			}
			entries[n]["children"] = list
		}
	}
	rows := make([]middleware.Row, 0, len(order))
	for _, n := range order {
		if !x.flat && strings.Contains(n, "/") {
			continue
		}
		rows = append(rows, entries[n])
	}
	return rows, nil
}

func (s *service) datasetQuery(_ *middleware.Call, params []json.RawMessage) (any, error) {
	if err := positional(params, 2); err != nil {
		return nil, err
	}
	filters, opts, err := middleware.ParseQuery(params, "pool_dataset_query")
	if err != nil {
		return nil, err
	}
	rows, err := s.datasetRows(filters, parseDatasetExtra(opts.Extra))
	if err != nil {
		return nil, err
	}
	return middleware.Query(rows, filters, opts)
}

// getInstance runs query [["id", "=", id]] with options and returns the
// first row, or InstanceNotFound "<verbose> <id> does not exist".
func getInstance(params []json.RawMessage, verbose string, query middleware.Handler) (any, error) {
	if err := positional(params, 2); err != nil {
		return nil, err
	}
	var id any
	if raw := param(params, 0); len(raw) > 0 {
		if err := json.Unmarshal(raw, &id); err != nil {
			return nil, middleware.Invalid("id", "Invalid JSON")
		}
	}
	if id == nil {
		return nil, middleware.Invalid("id", "attribute required")
	}
	f, _ := json.Marshal([]any{[]any{"id", "=", id}})
	opts := param(params, 1)
	if len(opts) > 0 && string(opts) != "null" {
		var o map[string]any
		if err := json.Unmarshal(opts, &o); err != nil {
			return nil, middleware.Invalid("options", "Not a dictionary")
		}
		delete(o, "get") // get_instance always takes the first match itself
		opts, _ = json.Marshal(o)
	}
	qp := []json.RawMessage{f}
	if len(opts) > 0 {
		qp = append(qp, opts)
	}
	res, err := query(nil, qp)
	if err != nil {
		return nil, err
	}
	switch l := res.(type) {
	case []middleware.Row:
		if len(l) > 0 {
			return l[0], nil
		}
	case middleware.Row:
		return l, nil
	}
	return nil, middleware.NotFound(verbose, id)
}

func (s *service) datasetGetInstance(_ *middleware.Call, params []json.RawMessage) (any, error) {
	return getInstance(params, "PoolDataset", s.datasetQuery)
}

// datasetEntry is get_instance of name for the handlers' results
// (create and update answer with the dataset's entry), without encoding
// the id and filters to JSON for the query to decode them again, nor
// compiling the filter (issue 16, seventh round), nor building the entry's
// maps: a datasetAnswer writes it (eighth round).
// TestDatasetEntryIsGetInstance compares it with the method.
func (s *service) datasetEntry(name string) (any, error) {
	if a := s.datasetAnswerOf(name); a != nil {
		return a, nil
	}
	return nil, middleware.NotFound("PoolDataset", name)
}
