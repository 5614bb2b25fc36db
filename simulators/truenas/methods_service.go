package truenas

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"github.com/switchyard-csi/switchyard/simulators/truenas/middleware"
)

// service.* (plugins/service.py): the rows of the services table with
// their state. The simulator starts and stops nothing: a service's state
// is what the last start/stop/control made it (the shares and targets are
// served whatever it says), and a restarted server has the enabled ones
// running, as a booted TrueNAS does.

// serviceRow is one services_services row of a release's database.
type serviceRow struct {
	id      int
	name    string
	enabled bool // on a fresh system
}

// serviceTable is a fresh release's table: the rows of initial.sql that
// the migrations up to that release kept, plus the ones they added. Ids of
// rows added by migrations depend on the install's history (AUTOINCREMENT);
// these are those of a fresh install.
func serviceTable(v middleware.Version) []serviceRow {
	rows := []serviceRow{{4, "cifs", false}, {6, "ftp", false}, {7, "iscsitarget", false}, {9, "nfs", false},
		{10, "snmp", false}, {11, "ssh", false}, {14, "ups", false}}
	if !v.AtLeast(25, 10, 0) {
		rows = append(rows, serviceRow{18, "smartd", true}) // removed in 25.10
	} else {
		rows = append(rows, serviceRow{28, "nvmet", false})
	}
	if v.AtLeast(26, 0, 0) {
		rows = append(rows, serviceRow{29, "webshare", false})
	}
	return rows
}

// serviceState is the persisted part: enable flags and running services.
type serviceState struct {
	mu      sync.Mutex
	file    string
	Enable  map[string]bool `json:"enable"`
	Running map[string]bool `json:"-"`
}

func loadServiceState(file string, v middleware.Version) (*serviceState, error) {
	st := &serviceState{file: file, Enable: map[string]bool{}, Running: map[string]bool{}}
	data, err := os.ReadFile(file)
	switch {
	case err == nil:
		if err := json.Unmarshal(data, st); err != nil {
			return nil, fmt.Errorf("truenas: %s: %w", file, err)
		}
	case errors.Is(err, fs.ErrNotExist):
		for _, r := range serviceTable(v) {
			st.Enable[r.name] = r.enabled
		}
	default:
		return nil, fmt.Errorf("truenas: %w", err)
	}
	for name, on := range st.Enable {
		st.Running[name] = on // enabled services start at boot
	}
	return st, nil
}

func (st *serviceState) save() error {
	data, _ := json.Marshal(st)
	if err := os.WriteFile(st.file, data, 0o644); err != nil {
		return middleware.Errorf(middleware.EFAULT, "failed to save the services table: %v", err)
	}
	return nil
}

// SetServiceRunning marks a service running (and enabled), as an admin
// does for the services a lab serves, e.g. ssh once StartSSH runs.
func (s *Server) SetServiceRunning(name string) {
	st := s.svcState
	if st == nil {
		return
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if _, known := st.Enable[name]; !known {
		return
	}
	st.Enable[name], st.Running[name] = true, true
	_ = st.save()
}

func (s *Server) registerServiceMethods() error {
	st, err := loadServiceState(filepath.Join(s.opts.StateDir, "services.json"), s.version)
	if err != nil {
		return err
	}
	s.svcState = st
	table := serviceTable(s.version)
	rows := func() []middleware.Row {
		st.mu.Lock()
		defer st.mu.Unlock()
		out := make([]middleware.Row, 0, len(table))
		for _, r := range table {
			state, pids := "STOPPED", []any{}
			if st.Running[r.name] {
				state, pids = "RUNNING", []any{1000 + r.id}
			}
			out = append(out, middleware.Row{"id": r.id, "service": r.name, "enable": st.Enable[r.name], "state": state, "pids": pids})
		}
		return out
	}
	// checkOptions validates a start/stop/control options object or a
	// service_update object against its model: unknown keys and wrong
	// types are refused in the release's dialect.
	pyd := s.version.AtLeast(25, 10, 0)
	checkObj := func(schema string, raw []json.RawMessage, i int, fields map[string]string) error {
		if i >= len(raw) || len(raw[i]) == 0 || string(raw[i]) == "null" {
			return nil
		}
		var obj map[string]any
		if err := json.Unmarshal(raw[i], &obj); err != nil {
			return middleware.Invalid(schema, "%s", map[bool]string{true: "Input should be a valid dictionary", false: "A dict was expected"}[pyd])
		}
		var errs middleware.ValidationErrors
		for k, v := range obj {
			typ, ok := fields[k]
			switch {
			case !ok:
				errs = append(errs, middleware.ValidationError{Attribute: schema + "." + k,
					Message: map[bool]string{true: "Extra inputs are not permitted", false: "Field was not expected"}[pyd]})
			case typ == "bool":
				if _, isBool := v.(bool); !isBool {
					errs = append(errs, middleware.ValidationError{Attribute: schema + "." + k,
						Message: map[bool]string{true: "Input should be a valid boolean", false: "Not a boolean"}[pyd]})
				}
			case typ == "int":
				if n, isNum := v.(float64); v != nil && (!isNum || n != float64(int64(n))) {
					errs = append(errs, middleware.ValidationError{Attribute: schema + "." + k,
						Message: map[bool]string{true: "Input should be a valid integer", false: "Not an integer"}[pyd]})
				}
			}
		}
		if len(errs) > 0 {
			return errs
		}
		return nil
	}
	serviceOptions := map[string]string{"ha_propagate": "bool", "silent": "bool", "timeout": "int"}
	known := func(name string) bool {
		for _, r := range table {
			if r.name == name {
				return true
			}
		}
		return false
	}
	s.reg.Add(middleware.Method{Name: "service.query", Params: []string{"filters", "options"},
		Handler: func(_ *middleware.Call, p []json.RawMessage) (any, error) {
			filters, opts, err := middleware.ParseQuery(p, "service_query")
			if err != nil {
				return nil, err
			}
			return middleware.Query(rows(), filters, opts)
		}})
	s.reg.Add(middleware.Method{Name: "service.get_instance", Params: []string{"id", "options"},
		Handler: func(_ *middleware.Call, p []json.RawMessage) (any, error) {
			var id int
			if err := decodeParams(p, "service_get_instance", []string{"id"}, &id); err != nil {
				return nil, err
			}
			for _, r := range rows() {
				if r["id"] == id {
					return r, nil
				}
			}
			return nil, middleware.NotFound("Service", id)
		}})
	s.reg.Add(middleware.Method{Name: "service.update", Params: []string{"id_or_name", "service_update"},
		Handler: func(_ *middleware.Call, p []json.RawMessage) (any, error) {
			var idOrName any
			var upd struct {
				Enable *bool `json:"enable"`
			}
			if err := decodeParams(p, "service_update", []string{"id_or_name", "service_update"}, &idOrName, &upd); err != nil {
				return nil, err
			}
			if err := checkObj("service_update.service_update", p, 1, map[string]string{"enable": "bool"}); err != nil {
				return nil, err
			}
			key := fmt.Sprint(idOrName)
			if f, ok := idOrName.(float64); ok {
				key = strconv.Itoa(int(f))
			}
			for _, r := range table {
				if r.name == key || strconv.Itoa(r.id) == key {
					if upd.Enable != nil {
						st.mu.Lock()
						st.Enable[r.name] = *upd.Enable
						err := st.save()
						st.mu.Unlock()
						if err != nil {
							return nil, err
						}
					}
					return r.id, nil
				}
			}
			return nil, middleware.Errorf(middleware.ENOENT, "Service %s not found.", key)
		}})
	action := func(verb, name string) (any, error) {
		if !known(name) {
			// service.object raises MatchNotFound(name), which reaches the
			// caller as an unexpected error.
			return nil, middleware.Errorf(middleware.EFAULT, "%s", name)
		}
		st.mu.Lock()
		defer st.mu.Unlock()
		st.Running[name] = verb != "STOP"
		return true, nil
	}
	for _, info := range []struct{ phrase, verb string }{{"start", "START"}, {"stop", "STOP"}, {"restart", "RESTART"}, {"reload", "RELOAD"}} {
		if s.version.AtLeast(26, 0, 0) {
			break // removed in v26.04: service.control only
		}
		verb := info.verb
		s.reg.Add(middleware.Method{Name: "service." + info.phrase, Params: []string{"service", "options"},
			Handler: func(_ *middleware.Call, p []json.RawMessage) (any, error) {
				var name string
				if err := decodeParams(p, "service_"+info.phrase, []string{"service"}, &name); err != nil {
					return nil, err
				}
				if err := checkObj("service_"+info.phrase+".options", p, 1, serviceOptions); err != nil {
					return nil, err
				}
				return action(verb, name)
			}})
	}
	if s.version.AtLeast(25, 10, 0) {
		args := func(p []json.RawMessage) (verb, name string, err error) {
			if err := decodeParams(p, "service_control", []string{"verb", "service"}, &verb, &name); err != nil {
				return "", "", err
			}
			if err := checkObj("service_control.options", p, 2, serviceOptions); err != nil {
				return "", "", err
			}
			switch verb {
			case "START", "STOP", "RESTART", "RELOAD":
				return verb, name, nil
			}
			return "", "", middleware.Invalid("service_control.verb", "Input should be 'START', 'STOP', 'RESTART' or 'RELOAD'")
		}
		s.reg.Add(middleware.Method{Name: "service.control", Job: true, Params: []string{"verb", "service", "options"},
			Validate: func(p []json.RawMessage) error { _, _, err := args(p); return err },
			Handler: func(_ *middleware.Call, p []json.RawMessage) (any, error) {
				verb, name, err := args(p)
				if err != nil {
					return nil, err
				}
				return action(verb, name)
			}})
	}
	for _, name := range []string{"started", "started_or_enabled"} {
		orEnabled := name == "started_or_enabled"
		s.reg.Add(middleware.Method{Name: "service." + name, Params: []string{"service"},
			Handler: func(_ *middleware.Call, p []json.RawMessage) (any, error) {
				var svc string
				if err := decodeParams(p, "service_"+name, []string{"service"}, &svc); err != nil {
					return nil, err
				}
				if !known(svc) {
					return nil, middleware.Errorf(middleware.EFAULT, "%s", svc)
				}
				st.mu.Lock()
				defer st.mu.Unlock()
				return st.Running[svc] || orEnabled && st.Enable[svc], nil
			}})
	}
	return nil
}
