package storage

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/switchyard-csi/switchyard/simulators/truenas/middleware"
	"github.com/switchyard-csi/switchyard/simulators/zfsmodel"
)

func (s *service) registerSnapshot() {
	ns := s.snapshotNS()
	add := func(name string, params []string, h middleware.Handler) {
		s.r.Add(middleware.Method{Name: ns + "." + name, Params: params, Handler: h})
	}
	add("query", []string{"filters", "options"}, s.snapshotQuery)
	add("get_instance", []string{"id", "options"}, s.snapshotGetInstance)
	add("create", []string{"data"}, s.snapshotCreate)
	add("delete", []string{"id", "options"}, s.snapshotDelete)
	add("clone", []string{"data"}, s.snapshotClone)
	add("update", []string{"id", "data"}, s.snapshotUpdate)
	add("rollback", []string{"id", "options"}, s.snapshotRollback)
}

// snapSchemaName is a legacy schema name, or the pydantic-era one (prefixed
// with the namespace, as pool_snapshot_create).
func (s *service) snapSchemaName(legacy, verb string) string {
	if s.pydantic() {
		return "pool_snapshot_" + verb
	}
	return legacy
}

func (s *service) snapshotCreateSchema() schema {
	f := []field{
		{name: "dataset", typ: tStr, required: true},
		{name: "name", typ: tStr},
		{name: "naming_schema", typ: tStr},
		{name: "recursive", typ: tBool, def: false},
		{name: "exclude", typ: tList, def: []any{}},
		{name: "vmware_sync", typ: tBool, def: false},
		{name: "properties", typ: tObj, def: args{}},
	}
	if !s.pydantic() || s.v.AtLeast(26, 0, 0) { // gone in 25.10's model, back in 26's
		f = append(f, field{name: "suspend_vms", typ: tBool, def: false})
	}
	return schema{name: s.snapSchemaName("snapshot_create", "create"), pydantic: s.pydantic(), fields: f}
}

// strftime expands the codes naming schemas use.
func strftime(layout string, t time.Time) string {
	r := strings.NewReplacer("%Y", t.Format("2006"), "%m", t.Format("01"), "%d", t.Format("02"),
		"%H", t.Format("15"), "%M", t.Format("04"), "%S", t.Format("05"), "%y", t.Format("06"),
		"%z", t.Format("-0700"), "%s", strconv.FormatInt(t.Unix(), 10), "%%", "%")
	return r.Replace(layout)
}

func (s *service) snapshotCreate(c *middleware.Call, params []json.RawMessage) (any, error) {
	if err := positional(params, 1); err != nil {
		return nil, err
	}
	sc := s.snapshotCreateSchema()
	a, err := sc.parse(param(params, 0))
	if err != nil {
		return nil, err
	}
	var errs middleware.ValidationErrors
	add := func(attr, msg string) {
		errs = append(errs, middleware.ValidationError{Attribute: attr, Message: msg})
	}
	ds := a.str("dataset")
	name := a.str("name")
	switch {
	case s.pydantic() && a.has("name") && a.has("naming_schema"):
		add(sc.name+".naming_schema", "Extra inputs are not permitted")
	case s.pydantic() && !a.has("name") && !a.has("naming_schema"):
		add(sc.name+".name", "Field required")
	case a.has("name") && a.has("naming_schema"):
		add("snapshot_create.naming_schema", "You can't specify name and naming schema at the same time")
	case a.has("naming_schema"):
		name = strftime(a.str("naming_schema"), time.Now())
	case !a.has("name"):
		add("snapshot_create.naming_schema", "You must specify either name or naming schema")
	}
	exclude, _ := a["exclude"].([]any)
	if len(exclude) > 0 {
		if !a.boolean("recursive") && !s.pydantic() {
			add("snapshot_create.exclude", "This option has no sense for non-recursive snapshots")
		}
		for _, k := range []string{"vmware_sync", "properties"} {
			if v := a[k]; v == true || len(a.sub(k)) > 0 {
				add("snapshot_create."+k, "This option is not supported when excluding datasets")
			}
		}
	}
	full := ds + "@" + name
	if name != "" && !validSnapshotName(full) {
		add("snapshot_create.name", "Invalid snapshot name")
	}
	if len(errs) > 0 {
		return nil, errs
	}
	props := map[string]string{}
	for k, v := range a.sub("properties") {
		props[k] = jsonScalar(v)
	}
	names := []string{full}
	recursive := a.boolean("recursive")
	if len(exclude) > 0 && recursive {
		names = s.snapshotTargets(ds, name, exclude)
		recursive = false
	}
	if !s.m.Exists(ds) {
		return nil, &middleware.CallError{Errno: middleware.ENOENT, Message: fmt.Sprintf("Failed to snapshot %s: Dataset %s not found", full, ds)}
	}
	if err := s.m.Snapshot(names, props, recursive); err != nil {
		if zfsmodel.KindOf(err) == zfsmodel.KindExists && s.v.AtLeast(26, 0, 0) {
			return nil, middleware.ValidationErrors{{Attribute: "pool.snapshot.create", Message: name + " already exists.", Errno: middleware.EEXIST}}
		}
		return nil, callErr("Failed to snapshot "+full+": ", err)
	}
	s.log.Debug("snapshot taken", "name", full)
	return s.snapshotResult(full)
}

// snapshotTargets lists ds and its descendants minus the excluded
// datasets (and theirs), each with @name.
func (s *service) snapshotTargets(ds, name string, exclude []any) []string {
	all, _ := s.m.List(ds, true, zfsmodel.Filesystem|zfsmodel.Volume)
	var out []string
next:
	for _, d := range all {
		for _, x := range exclude {
			if e, _ := x.(string); e != "" && (d == e || strings.HasPrefix(d, e+"/")) {
				continue next
			}
		}
		out = append(out, d+"@"+name)
	}
	return out
}

// validSnapshotName is validate_snapshot_name: a valid dataset name, "@",
// and a snapshot name of the same characters.
func validSnapshotName(full string) bool {
	ds, snap, ok := strings.Cut(full, "@")
	if !ok || snap == "" || strings.ContainsAny(snap, "@/") || !validDatasetName(ds) {
		return false
	}
	return validDatasetName("x/" + snap)
}

// jsonScalar renders a JSON value as a property value.
func jsonScalar(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case bool:
		if x {
			return "on"
		}
		return "off"
	case nil:
		return "none"
	case json.Number:
		return x.String()
	case int64:
		return strconv.FormatInt(x, 10)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func (s *service) snapshotNotFound(id string) error {
	return &middleware.InstanceNotFound{Message: "Snapshot " + id + " not found"}
}

func (s *service) snapshotDelete(_ *middleware.Call, params []json.RawMessage) (any, error) {
	if err := positional(params, 2); err != nil {
		return nil, err
	}
	id, err := stringParam(params, 0, "id")
	if err != nil {
		return nil, err
	}
	o, err := schema{name: "options", pydantic: s.pydantic(), fields: []field{
		{name: "defer", typ: tBool, def: false},
		{name: "recursive", typ: tBool, def: false},
	}}.parse(param(params, 1))
	if err != nil {
		return nil, err
	}
	if s.pydantic() && !strings.Contains(id, "@") {
		return nil, middleware.Invalid("pool.snapshot.delete", "Invalid snapshot name: %s", pyRepr(id))
	}
	in, err := s.m.Get(id)
	if err != nil || in.Type != zfsmodel.Snapshot {
		return nil, s.snapshotNotFound(id)
	}
	deferred := o.boolean("defer")
	if len(in.Clones) > 0 && !deferred {
		return nil, middleware.Invalid("options.defer", "Please set this attribute as %s snapshot has dependent clones: %s",
			pyRepr(id), strings.Join(in.Clones, ", "))
	}
	if err := s.m.Destroy(id, zfsmodel.DestroyOptions{Defer: deferred, Recursive: o.boolean("recursive")}); err != nil {
		return nil, callErrFull("", err)
	}
	return true, nil
}

func (s *service) snapshotClone(_ *middleware.Call, params []json.RawMessage) (any, error) {
	if err := positional(params, 1); err != nil {
		return nil, err
	}
	a, err := schema{name: s.snapSchemaName("snapshot_clone", "clone"), pydantic: s.pydantic(), fields: []field{
		{name: "snapshot", typ: tStr, required: true},
		{name: "dataset_dst", typ: tStr, required: true},
		{name: "dataset_properties", typ: tObj, def: args{}},
	}}.parse(param(params, 0))
	if err != nil {
		return nil, err
	}
	props := map[string]string{}
	for k, v := range a.sub("dataset_properties") {
		props[k] = jsonScalar(v)
	}
	snap, dst := a.str("snapshot"), a.str("dataset_dst")
	if in, err := s.m.Get(snap); err != nil || in.Type != zfsmodel.Snapshot {
		return nil, &middleware.CallError{Errno: middleware.ENOENT, Message: "Failed to clone snapshot: Snapshot " + snap + " not found"}
	}
	if err := s.m.Clone(snap, dst, props, false); err != nil {
		return nil, callErr("Failed to clone snapshot: ", err)
	}
	s.log.Debug("cloned snapshot", "snapshot", snap, "dataset", dst)
	return true, nil
}

func (s *service) snapshotUpdate(_ *middleware.Call, params []json.RawMessage) (any, error) {
	if err := positional(params, 2); err != nil {
		return nil, err
	}
	id, err := stringParam(params, 0, "id")
	if err != nil {
		return nil, err
	}
	pyd := s.pydantic()
	item := &schema{name: "user_property", pydantic: pyd, fields: []field{
		{name: "key", typ: tStr, required: true, pattern: ".*:.*"},
		{name: "value", typ: tStr, required: pyd},
	}}
	f := []field{{name: "user_properties_update", typ: tList, items: item, def: []any{}}}
	if pyd {
		f = append(f, field{name: "user_properties_remove", typ: tList, def: []any{}})
	} else {
		item.fields = append(item.fields, field{name: "remove", typ: tBool})
	}
	a, err := schema{name: s.snapSchemaName("snapshot_update", "update"), pydantic: pyd, fields: f}.parse(param(params, 1))
	if err != nil {
		return nil, err
	}
	var errs middleware.ValidationErrors
	for i, up := range listOf(a["user_properties_update"]) {
		if up.boolean("remove") && up.has("value") {
			errs = append(errs, middleware.ValidationError{
				Attribute: fmt.Sprintf("snapshot_update.user_properties_update.%d.remove", i),
				Message:   "Must not be set when value is specified"})
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}
	if in, err := s.m.Get(id); err != nil || in.Type != zfsmodel.Snapshot {
		return nil, &middleware.CallError{Errno: middleware.ENOENT, Message: "Snapshot " + id + " not found"}
	}
	for _, up := range listOf(a["user_properties_update"]) {
		var err error
		switch {
		case up.has("value"):
			err = s.m.SetProperty(id, up.str("key"), up.str("value"))
		case up.boolean("remove"):
			err = s.m.InheritProperty(id, up.str("key"), false, false)
		}
		if err != nil {
			return nil, callErr("", err)
		}
	}
	rm, _ := a["user_properties_remove"].([]any)
	for _, k := range rm {
		key, _ := k.(string)
		if err := s.m.InheritProperty(id, key, false, false); err != nil {
			return nil, callErr("", err)
		}
	}
	return s.snapshotResult(id)
}

func (s *service) snapshotRollback(_ *middleware.Call, params []json.RawMessage) (any, error) {
	if err := positional(params, 2); err != nil {
		return nil, err
	}
	id, err := stringParam(params, 0, "id")
	if err != nil {
		return nil, err
	}
	o, err := schema{name: "options", pydantic: s.pydantic(), fields: []field{
		{name: "recursive", typ: tBool, def: false},
		{name: "recursive_clones", typ: tBool, def: false},
		{name: "force", typ: tBool, def: false},
		{name: "recursive_rollback", typ: tBool, def: false},
	}}.parse(param(params, 1))
	if err != nil {
		return nil, err
	}
	targets := []string{id}
	if o.boolean("recursive_rollback") {
		ds, snap, _ := strings.Cut(id, "@")
		all, _ := s.m.List(ds, true, zfsmodel.Filesystem|zfsmodel.Volume)
		targets = targets[:0]
		for _, d := range all {
			targets = append(targets, d+"@"+snap)
		}
	}
	opts := zfsmodel.RollbackOptions{DestroyRecent: o.boolean("recursive"),
		DestroyClones: o.boolean("recursive_clones"), Force: o.boolean("force")}
	for _, t := range targets {
		if err := s.m.Rollback(t, opts); err != nil {
			return nil, callErrFull("Failed to rollback snapshot: ", err)
		}
	}
	return nil, nil
}
