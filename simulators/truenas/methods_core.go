package truenas

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"strings"

	"github.com/switchyard-csi/switchyard/simulators/truenas/middleware"
)

// registerCore adds the core.* methods clients use: ping, jobs, options,
// method listing and event subscriptions.
func (s *Server) registerCore() {
	s.reg.Add(middleware.Method{Name: "core.ping", Handler: func(*middleware.Call, []json.RawMessage) (any, error) { return "pong", nil }})
	s.reg.Add(middleware.Method{Name: "core.get_jobs", Params: []string{"filters", "options"},
		Handler: func(_ *middleware.Call, p []json.RawMessage) (any, error) {
			filters, opts, err := middleware.ParseQuery(p, "core_get_jobs")
			if err != nil {
				return nil, err
			}
			return middleware.Query(s.jobs.rows(), filters, opts)
		}})
	// core.job_wait is itself a job in middlewared: with legacy jobs the
	// caller gets the id of a job whose result is the waited job's.
	s.reg.Add(middleware.Method{Name: "core.job_wait", Job: true, Params: []string{"id"},
		Handler: func(c *middleware.Call, p []json.RawMessage) (any, error) {
			j, err := s.jobParam(p, "core_job_wait")
			if err != nil {
				return nil, err
			}
			return j.wait(c.Ctx)
		}})
	s.reg.Add(middleware.Method{Name: "core.job_abort", Params: []string{"id"},
		Handler: func(_ *middleware.Call, p []json.RawMessage) (any, error) {
			j, err := s.jobParam(p, "core_job_abort")
			if err != nil {
				return nil, err
			}
			j.abort()
			return nil, nil
		}})
	s.reg.Add(middleware.Method{Name: "core.get_methods", Params: []string{"service", "target"}, Handler: s.getMethods})
	// 24.10 subscribes with the legacy protocol's "sub" messages only.
	if s.version.AtLeast(25, 4, 0) {
		s.reg.Add(middleware.Method{Name: "core.subscribe", Params: []string{"event"},
			Handler: func(c *middleware.Call, p []json.RawMessage) (any, error) {
				var name string
				if err := decodeParams(p, "core_subscribe", []string{"event"}, &name); err != nil {
					return nil, err
				}
				ident := newIdent()
				sessionOf(c.Ctx).subscribe(ident, name)
				return ident, nil
			}})
		s.reg.Add(middleware.Method{Name: "core.unsubscribe", Params: []string{"id_"},
			Handler: func(c *middleware.Call, p []json.RawMessage) (any, error) {
				var ident string
				if err := decodeParams(p, "core_unsubscribe", []string{"id"}, &ident); err != nil {
					return nil, err
				}
				sessionOf(c.Ctx).unsubscribe(ident)
				return nil, nil
			}})
	}
	if s.version.AtLeast(25, 10, 0) {
		s.reg.Add(middleware.Method{Name: "core.set_options", Params: []string{"options"}, Handler: setOptions})
	}
}

// jobParam reads a job id parameter and finds the job.
func (s *Server) jobParam(p []json.RawMessage, schema string) (*job, error) {
	var id int
	if err := decodeParams(p, schema, []string{"id"}, &id); err != nil {
		return nil, err
	}
	j := s.jobs.get(id)
	if j == nil {
		return nil, middleware.Errorf(middleware.ENOENT, "Job %d does not exist", id)
	}
	return j, nil
}

// setOptions is core.set_options (25.10+): per-connection options.
func setOptions(c *middleware.Call, p []json.RawMessage) (any, error) {
	var o map[string]json.RawMessage
	if err := decodeParams(p, "core_set_options", []string{"options"}, &o); err != nil {
		return nil, err
	}
	for k, v := range o {
		switch k {
		case "legacy_jobs":
			var b bool
			if err := json.Unmarshal(v, &b); err != nil {
				return nil, middleware.Invalid("core_set_options.options.legacy_jobs", "Input should be a valid boolean")
			}
			sessionOf(c.Ctx).setLegacyJobs(b)
		case "private_methods", "py_exceptions":
			// Accepted; nothing in the simulator depends on them.
		default:
			return nil, middleware.Invalid("core_set_options.options."+k, "Extra inputs are not permitted")
		}
	}
	return nil, nil
}

// getMethods is core.get_methods: an object keyed by method name.
func (s *Server) getMethods(_ *middleware.Call, p []json.RawMessage) (any, error) {
	var service *string
	if len(p) > 0 {
		if err := json.Unmarshal(p[0], &service); err != nil {
			return nil, middleware.Invalid("core_get_methods.service", "Input should be a valid string")
		}
	}
	out := map[string]any{}
	for _, name := range s.reg.Names() {
		if service != nil && !strings.HasPrefix(name, *service+".") {
			continue
		}
		m, _ := s.reg.Lookup(name)
		out[name] = map[string]any{
			"description": nil, "job": m.Job, "filterable": isFilterable(m), "require_websocket": false,
			"item_method": false, "params": append([]string{}, m.Params...),
		}
	}
	return out, nil
}

// isFilterable: a query-style method (filters, options), which REST
// serves on GET with filters from the query string.
func isFilterable(m *middleware.Method) bool {
	return strings.HasSuffix(m.Name, ".query") || len(m.Params) > 0 && (m.Params[0] == "filters" || m.Params[0] == "query-filters" || m.Params[0] == "query_filters")
}

func newIdent() string {
	b := make([]byte, 16)
	rand.Read(b)
	h := hex.EncodeToString(b)
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}
