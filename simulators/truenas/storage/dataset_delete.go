package storage

import (
	"encoding/json"
	"sort"
	"strings"

	"github.com/switchyard-csi/switchyard/simulators/truenas/middleware"
	"github.com/switchyard-csi/switchyard/simulators/zfsmodel"
)

func (s *service) deleteOptionsSchema() schema {
	return schema{name: "options", pydantic: s.pydantic(), fields: []field{
		{name: "recursive", typ: tBool, def: false},
		{name: "force", typ: tBool, def: false},
	}}
}

// datasetDelete is pool.dataset.delete(id, {recursive, force}): it
// refuses a dataset with children unless recursive, removes what is
// attached to the dataset and its descendants (shares, extents,
// namespaces: the dataset-delete hooks), then destroys it.
func (s *service) datasetDelete(c *middleware.Call, params []json.RawMessage) (any, error) {
	if err := positional(params, 2); err != nil {
		return nil, err
	}
	id, err := stringParam(params, 0, "id")
	if err != nil {
		return nil, err
	}
	o, err := s.deleteOptionsSchema().parse(param(params, 1))
	if err != nil {
		return nil, err
	}
	recursive := o.boolean("recursive")
	// PeekProps: the type is all the delete reads, and measuring the dataset
	// (a walk of its directory) for it was a few percent of the
	// simulator's CPU per delete (issue 16, sixth round), reading its
	// properties a few more (seventh). Its children are the subtree's
	// other members.
	in, err := s.m.PeekProps(id)
	if err != nil || in.Type == zfsmodel.Snapshot || isInternal(id) {
		return nil, middleware.NotFound("PoolDataset", id)
	}
	victims, err := s.m.List(id, true, zfsmodel.Filesystem|zfsmodel.Volume)
	if err != nil {
		return nil, callErrFull("Failed to delete dataset: ", err)
	}
	if !recursive && len(victims) > 1 {
		return nil, &middleware.CallError{Errno: middleware.ENOTEMPTY,
			Message: "Failed to delete dataset: cannot destroy " + pyRepr(id) + ": filesystem has children"}
	}
	root := !strings.Contains(id, "/")
	if root {
		// the pool's root dataset stays; recursive deletes its children
		victims = victims[1:]
		if !recursive {
			return nil, &middleware.CallError{Errno: middleware.EINVAL, Message: "Failed to delete dataset: cannot destroy " + pyRepr(id) + ": operation does not apply to pools"}
		}
	}
	// check what zfs destroy would refuse (clones, busy) before shares go
	for _, d := range s.destroyTargets(id, root) {
		if err := s.m.Destroy(d, zfsmodel.DestroyOptions{Recursive: recursive, Force: o.boolean("force"), DryRun: true}); err != nil {
			return nil, callErrFull("Failed to delete dataset: ", err)
		}
	}
	// deepest first, as the attachments of children go with them
	sort.SliceStable(victims, func(i, j int) bool { return strings.Count(victims[i], "/") > strings.Count(victims[j], "/") })
	for _, v := range victims {
		if err := s.r.DatasetDeleted(c, v); err != nil {
			return nil, err
		}
	}
	for _, d := range s.destroyTargets(id, root) {
		err := s.m.Destroy(d, zfsmodel.DestroyOptions{Recursive: recursive, Force: o.boolean("force")})
		if err != nil {
			if zfsmodel.KindOf(err) == zfsmodel.KindNotFound {
				return nil, &middleware.CallError{Errno: middleware.ENOENT, Message: "Dataset " + d + " does not exist"}
			}
			return nil, callErrFull("Failed to delete dataset: ", err)
		}
	}
	s.log.Debug("pool.dataset.delete", "name", id, "recursive", recursive)
	return true, nil
}

// destroyTargets is what zfs destroy runs on: the dataset, or the children
// of a pool's root dataset.
func (s *service) destroyTargets(id string, root bool) []string {
	if !root {
		return []string{id}
	}
	in, err := s.m.Get(id)
	if err != nil {
		return nil
	}
	return in.Children
}

// datasetPromote is pool.dataset.promote(id).
func (s *service) datasetPromote(_ *middleware.Call, params []json.RawMessage) (any, error) {
	if err := positional(params, 1); err != nil {
		return nil, err
	}
	id, err := stringParam(params, 0, "id")
	if err != nil {
		return nil, err
	}
	// Up to 25.10 the plugin looks the dataset up and checks its origin
	// first; 26 hands it to zfs.resource.promote, which raises
	// validation errors under its own name.
	in, gerr := s.m.Get(id)
	switch {
	case s.v.AtLeast(26, 0, 0) && (gerr != nil || strings.Contains(id, "@")):
		return nil, middleware.ValidationErrors{{Attribute: "zfs.resource.promote", Message: pyRepr(id) + " not found", Errno: middleware.ENOENT}}
	case s.v.AtLeast(26, 0, 0) && in.Origin == "":
		return nil, middleware.Invalid("zfs.resource.promote", "%s is ineligible for promotion.", pyRepr(id))
	case gerr != nil || strings.Contains(id, "@"):
		return nil, middleware.Errorf(middleware.ENOENT, "Dataset \"%s\" does not exist.", id)
	case in.Origin == "":
		return nil, middleware.Errorf(middleware.EBADMSG, "Only cloned datasets can be promoted.")
	}
	if err := s.m.Promote(id); err != nil {
		return nil, callErrFull("", err)
	}
	return nil, nil
}

// destroySnapshotsSpec is the "snapshots" argument of destroy_snapshots.
func destroySnapshotsSpec(pyd bool) *schema {
	return &schema{name: "snapshots", pydantic: pyd, fields: []field{
		{name: "all", typ: tBool, def: false},
		{name: "recursive", typ: tBool, def: false},
		{name: "snapshots", typ: tList, def: []any{}},
	}}
}

// destroySnapshotsArgs reads destroy_snapshots' two arguments (name,
// snapshots): the legacy schema's in 24.10 (snapshots optional, "all"
// true by default), the pydantic model's from 25.04 (snapshots required).
func (s *service) destroySnapshotsArgs(params []json.RawMessage) (string, args, error) {
	if !s.v.AtLeast(25, 4, 0) {
		// 24.10's legacy schema: Str('name') and Dict('snapshots'), whose
		// "all" defaults to true there (false in 25.04's model)
		if err := positional(params, 2); err != nil {
			return "", nil, err
		}
		name, err := stringParam(params, 0, "name")
		if err != nil {
			return "", nil, err
		}
		spec := destroySnapshotsSpec(false)
		spec.fields[0].def = true
		a, err := spec.parse(param(params, 1))
		if err != nil {
			return "", nil, err
		}
		return name, a, nil
	}
	if err := positional(params, 2); err != nil {
		return "", nil, err
	}
	name, err := stringParam(params, 0, "name")
	if err != nil {
		if len(param(params, 0)) == 0 {
			return "", nil, middleware.Invalid("name", "Field required")
		}
		return "", nil, middleware.Invalid("name", "Input should be a valid string")
	}
	if raw := param(params, 1); len(raw) == 0 || string(raw) == "null" {
		return "", nil, middleware.Invalid("snapshots", "Field required")
	}
	spec, err := destroySnapshotsSpec(true).parse(param(params, 1))
	return name, spec, err
}

// datasetDestroySnapshots is the pool.dataset.destroy_snapshots job: it
// destroys all, named, or ranges ({start, end}) of a dataset's snapshots
// (recursive: also its descendants') and returns the names destroyed.
func (s *service) datasetDestroySnapshots(c *middleware.Call, params []json.RawMessage) (any, error) {
	name, spec, err := s.destroySnapshotsArgs(params)
	if err != nil {
		return nil, err
	}
	if !s.m.Exists(name) || strings.Contains(name, "@") {
		return nil, &middleware.CallError{Errno: middleware.ENOENT, Message: name + " does not exist"}
	}
	progress(c, 0, "Destroying snapshots")
	var datasets []string
	if spec.boolean("recursive") {
		datasets, _ = s.m.List(name, true, zfsmodel.Filesystem|zfsmodel.Volume)
	} else {
		datasets = []string{name}
	}
	destroyed := []string{}
	for _, ds := range datasets {
		in, err := s.m.Get(ds)
		if err != nil {
			continue
		}
		for _, snap := range selectSnapshots(in.Snapshots, spec) {
			if err := s.m.Destroy(snap, zfsmodel.DestroyOptions{}); err != nil {
				return nil, callErrFull("", err)
			}
			destroyed = append(destroyed, snap)
		}
	}
	progress(c, 100, "Snapshots destroyed")
	return destroyed, nil
}

// selectSnapshots picks from a dataset's snapshots (oldest first) those a
// destroy_snapshots spec names.
func selectSnapshots(snaps []string, spec args) []string {
	if spec.boolean("all") {
		return append([]string{}, snaps...)
	}
	short := func(full string) string { _, s, _ := strings.Cut(full, "@"); return s }
	pick := map[string]bool{}
	l, _ := spec["snapshots"].([]any)
	for _, it := range l {
		switch x := it.(type) {
		case string:
			pick[x] = true
		case map[string]any:
			start, _ := x["start"].(string)
			end, _ := x["end"].(string)
			in := start == ""
			for _, sn := range snaps {
				if short(sn) == start {
					in = true
				}
				if in {
					pick[short(sn)] = true
				}
				if short(sn) == end {
					in = false
				}
			}
		}
	}
	var out []string
	for _, sn := range snaps {
		if pick[short(sn)] {
			out = append(out, sn)
		}
	}
	return out
}
