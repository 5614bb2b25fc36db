package sharing

import (
	"encoding/json"
	"regexp"
	"strings"

	"github.com/switchyard-csi/switchyard/simulators/truenas/middleware"
	"github.com/switchyard-csi/switchyard/simulators/zfsmodel"
)

// pool.snapshottask (plugins/snapshot.py): periodic snapshot tasks, rows of
// the configuration database like the shares, so they live beside them.
// The simulator stores and validates them; it does not take the snapshots
// on schedule (nothing a client can observe within a test depends on it,
// and run is refused for disabled tasks as the real one is).

const nsSnapTask = "pool.snapshottask"

// snapTaskVerbose is the CRUD service's verbose name, used in
// "PeriodicSnapshotTask <id> does not exist".
const snapTaskVerbose = "PeriodicSnapshotTask"

func (s *Service) snapTaskFields(create bool) []field {
	pyd := s.v.AtLeast(25, 4, 0)
	required := !pyd && create // the legacy schema wanted them all; pydantic only the dataset
	schedule := []field{
		{name: "minute", kind: kStr, def: "00"},
		{name: "hour", kind: kStr, def: "*"},
		{name: "dom", kind: kStr, def: "*"},
		{name: "month", kind: kStr, def: "*"},
		{name: "dow", kind: kStr, def: "*"},
		{name: "begin", kind: kStr, def: "00:00"},
		{name: "end", kind: kStr, def: "23:59"},
	}
	f := []field{
		{name: "dataset", kind: kStr, required: create},
		{name: "recursive", kind: kBool, def: false, required: required},
		{name: "lifetime_value", kind: kInt, def: 2, required: required},
		{name: "lifetime_unit", kind: kStr, enum: strs("HOUR", "DAY", "WEEK", "MONTH", "YEAR"), def: "WEEK", required: required},
		{name: "enabled", kind: kBool, def: true},
		{name: "exclude", kind: kStrList, def: []any{}},
		{name: "naming_schema", kind: kStr, def: "auto-%Y-%m-%d_%H-%M", required: required},
		{name: "allow_empty", kind: kBool, def: true},
		{name: "schedule", kind: kObj, sub: schedule, def: scheduleDefault(), required: required},
	}
	if !create {
		f = append(f, field{name: "fixate_removal_date", kind: kBool})
	}
	return f
}

func scheduleDefault() map[string]any {
	return map[string]any{"minute": "00", "hour": "*", "dom": "*", "month": "*", "dow": "*", "begin": "00:00", "end": "23:59"}
}

func (s *Service) snapTaskArg(verb string) dialect {
	if s.v.AtLeast(25, 4, 0) {
		return pydantic("data")
	}
	return oldSchema("periodic_snapshot_" + verb)
}

func (s *Service) registerSnapshotTask(r *middleware.Registry) {
	s.addCRUD(r, crud{
		ns: nsSnapTask, verbose: snapTaskVerbose,
		view:   func(row middleware.Row, _ middleware.QueryOptions) middleware.Row { return snapTaskView(row) },
		create: s.snapTaskCreate, createParams: []string{"data"},
		update: s.snapTaskUpdate, updateParams: []string{"id", "data"},
		del: s.snapTaskDelete, delParams: []string{"id", "options"},
	})
	addConst(r, "pool.snapshottask.max_count", 512)
	addConst(r, "pool.snapshottask.max_total_count", 10000)
	r.Add(middleware.Method{Name: "pool.snapshottask.run", Params: []string{"id"}, Handler: s.snapTaskRun})
}

// snapTaskView adds what extend() computes: no VMware sync here, and
// zettarepl's state of a task that has not run yet.
func snapTaskView(r middleware.Row) middleware.Row {
	r["vmware_sync"] = false
	r["state"] = map[string]any{"state": "PENDING"}
	return r
}

func (s *Service) snapTaskCreate(_ *middleware.Call, params []json.RawMessage) (any, error) {
	if err := argCount(params, 1); err != nil {
		return nil, err
	}
	d := s.snapTaskArg("create")
	data, err := objArg(d, params, 0, s.snapTaskFields(true), true)
	if err != nil {
		return nil, err
	}
	if err := s.namingSchemaCheck(d, data); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.snapTaskValidate(data, "periodic_snapshot_create"); err != nil {
		return nil, err
	}
	row, err := s.insert(nsSnapTask, data)
	if err != nil {
		return nil, err
	}
	return snapTaskView(row), nil
}

func (s *Service) snapTaskUpdate(_ *middleware.Call, params []json.RawMessage) (any, error) {
	if err := argCount(params, 2); err != nil {
		return nil, err
	}
	d := s.snapTaskArg("update")
	id, err := intArg(d, params, 0, "id")
	if err != nil {
		return nil, err
	}
	data, err := objArg(d, params, 1, s.snapTaskFields(false), false)
	if err != nil {
		return nil, err
	}
	if err := s.namingSchemaCheck(d, data); err != nil {
		return nil, err
	}
	delete(data, "fixate_removal_date")
	s.mu.Lock()
	defer s.mu.Unlock()
	old, err := s.instance(nsSnapTask, snapTaskVerbose, id)
	if err != nil {
		return nil, err
	}
	if sch, ok := data["schedule"].(middleware.Row); ok {
		merged, _ := old["schedule"].(map[string]any)
		for k, v := range sch {
			merged[k] = v
		}
		data["schedule"] = merged
	}
	for k, v := range data {
		old[k] = v
	}
	if err := s.snapTaskValidate(old, "periodic_snapshot_update"); err != nil {
		return nil, err
	}
	row, err := s.replace(nsSnapTask, old)
	if err != nil {
		return nil, err
	}
	return snapTaskView(row), nil
}

func (s *Service) snapTaskDelete(_ *middleware.Call, params []json.RawMessage) (any, error) {
	if err := argCount(params, 2); err != nil {
		return nil, err
	}
	d := s.snapTaskArg("delete")
	id, err := intArg(d, params, 0, "id")
	if err != nil {
		return nil, err
	}
	if given(params, 1) {
		if _, err := objArg(pydantic("options"), params, 1, []field{{name: "fixate_removal_date", kind: kBool, def: false}}, true); err != nil {
			return nil, err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.instance(nsSnapTask, snapTaskVerbose, id); err != nil {
		return nil, err
	}
	s.t[nsSnapTask].remove(id)
	if err := s.commit(nsSnapTask); err != nil {
		return nil, err
	}
	return true, nil
}

func (s *Service) snapTaskRun(_ *middleware.Call, params []json.RawMessage) (any, error) {
	if err := argCount(params, 1); err != nil {
		return nil, err
	}
	id, err := intArg(s.snapTaskArg("run"), params, 0, "id")
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	task, err := s.instance(nsSnapTask, snapTaskVerbose, id)
	if err != nil {
		return nil, err
	}
	if b, _ := task["enabled"].(bool); !b {
		return nil, middleware.Errorf(middleware.EFAULT, "Task is not enabled")
	}
	return nil, nil
}

// namingSchemaCheck is zettarepl's validate_snapshot_naming_schema as the
// models apply it (pydantic: "Value error, ..."; the legacy validator
// reports the text alone).
func (s *Service) namingSchemaCheck(d dialect, data middleware.Row) error {
	schema, ok := data["naming_schema"].(string)
	if !ok {
		return nil
	}
	msg := namingSchemaError(schema)
	if msg == "" {
		return nil
	}
	if d.pydantic {
		msg = "Value error, " + msg
	}
	return middleware.Invalid(d.at("naming_schema"), "%s", msg)
}

func namingSchemaError(schema string) string {
	if strings.Contains(schema, "%s") {
		if regexp.MustCompile(`%[^s]`).MatchString(schema) {
			return "No other placeholder can be used with %s in naming schema"
		}
		return ""
	}
	for _, p := range []string{"%Y", "%m", "%d", "%H", "%M"} {
		if !regexp.MustCompile(`(^|[^%])` + p).MatchString(schema) {
			return p + " must be present in snapshot naming schema"
		}
	}
	return ""
}

// snapTaskValidate is the plugin's _validate. Callers hold s.mu.
func (s *Service) snapTaskValidate(data middleware.Row, schema string) error {
	var errs middleware.ValidationErrors
	add := func(attr, msg string) {
		errs = append(errs, middleware.ValidationError{Attribute: schema + "." + attr, Message: msg})
	}
	ds := strOf(data["dataset"])
	// pool.filesystem_choices: filesystems only, no zvols
	if info, err := s.model.Get(ds); err != nil || info.Type != zfsmodel.Filesystem {
		add("dataset", "Dataset not found")
	}
	exclude, _ := data["exclude"].([]any)
	if b, _ := data["recursive"].(bool); !b && len(exclude) > 0 {
		add("exclude", "Excluding datasets is not necessary for non-recursive periodic snapshot tasks")
	}
	for i, e := range exclude {
		if !strings.HasPrefix(strOf(e), ds+"/") {
			add("exclude."+itoa(i), "Excluded dataset should be a child or other descendant of the selected dataset")
		}
	}
	if len(errs) > 0 {
		return errs
	}
	return nil
}
