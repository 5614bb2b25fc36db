package sharing

import (
	"encoding/json"
	"net"
	"regexp"
	"strconv"

	"github.com/switchyard-csi/switchyard/simulators/truenas/middleware"
)

// iscsi.global: the target's global configuration (plugins/iscsi_/iscsi_global.py).

func (s *Service) registerISCSI(r *middleware.Registry) {
	s.registerISCSIGlobal(r)
	s.registerPortal(r)
	s.registerInitiator(r)
	s.registerAuth(r)
	s.registerTarget(r)
	s.registerExtent(r)
	s.registerTargetExtent(r)
}

// iscsiArg is the dialect of an iscsi.* argument: the old schema name up
// to 24.10, the pydantic argument name from 25.04.
func (s *Service) iscsiArg(old, arg string) dialect {
	if s.v.AtLeast(25, 4, 0) {
		return pydantic(arg)
	}
	return oldSchema(old)
}

func (s *Service) iscsiGlobalDefaults() middleware.Row {
	r := middleware.Row{
		"id":                   1,
		"basename":             "iqn.2005-10.org.freenas.ctl",
		"isns_servers":         []any{},
		"listen_port":          3260,
		"pool_avail_threshold": nil,
		"alua":                 false,
	}
	if s.v.AtLeast(25, 4, 0) {
		r["iser"] = false
	}
	if s.v.AtLeast(26, 0, 0) {
		r["direct_config"], r["mode"] = nil, 0
	}
	return normalize(r)
}

func (s *Service) iscsiGlobalFields() []field {
	f := []field{
		{name: "basename", kind: kStr},
		{name: "isns_servers", kind: kStrList},
		{name: "listen_port", kind: kInt, min: intp(1025), max: intp(65535)},
		{name: "pool_avail_threshold", kind: kInt, null: true, min: intp(1), max: intp(99)},
		{name: "alua", kind: kBool},
	}
	if s.v.AtLeast(25, 4, 0) {
		f = append(f, field{name: "iser", kind: kBool})
	}
	if s.v.AtLeast(26, 0, 0) {
		f = append(f, field{name: "direct_config", kind: kBool, null: true},
			field{name: "mode", kind: kInt, min: intp(0), max: intp(1)})
	}
	return f
}

// addConfig registers a config service: <ns>.config and <ns>.update.
func (s *Service) addConfig(r *middleware.Registry, ns string, update middleware.Handler, updateParam string) {
	r.Add(middleware.Method{Name: ns + ".config", Handler: func(c *middleware.Call, params []json.RawMessage) (any, error) {
		if err := argCount(params, 0); err != nil {
			return nil, err
		}
		return s.config(ns), nil
	}})
	r.Add(middleware.Method{Name: ns + ".update", Params: []string{updateParam}, Handler: s.persisting(update)})
}

func (s *Service) config(ns string) middleware.Row {
	s.mu.Lock()
	defer s.mu.Unlock()
	return clone(s.t[ns].get(1))
}

// addConst registers a method without arguments that always answers v
// (what a simulated single-node, non-enterprise system reports).
func addConst(r *middleware.Registry, name string, v any) {
	r.Add(middleware.Method{Name: name, Handler: func(c *middleware.Call, params []json.RawMessage) (any, error) {
		if err := argCount(params, 0); err != nil {
			return nil, err
		}
		return v, nil
	}})
}

// addEmptyQuery registers a filterable method with nothing to list, such
// as the session lists of a target nobody is logged in to.
func addEmptyQuery(r *middleware.Registry, name string, params ...string) {
	if params == nil {
		params = []string{"filters", "options"}
	}
	r.Add(middleware.Method{Name: name, Params: params, Handler: func(c *middleware.Call, params []json.RawMessage) (any, error) {
		if err := argCount(params, 2); err != nil {
			return nil, err
		}
		filters, opts, err := middleware.ParseQuery(params, "query")
		if err != nil {
			return nil, err
		}
		return middleware.Query(nil, filters, opts)
	}})
}

func (s *Service) registerISCSIGlobal(r *middleware.Registry) {
	s.addConfig(r, nsISCSIGlobal, s.iscsiGlobalUpdate, "iscsi_update")
	addConst(r, "iscsi.global.alua_enabled", false)
	addConst(r, "iscsi.global.client_count", 0)
	sessions := []string{"filters", "options"}
	if s.v.AtLeast(25, 4, 0) && !s.v.AtLeast(26, 0, 0) { // the 25.04/25.10 models' argument names
		sessions = []string{"query_filters", "query_options"}
	}
	addEmptyQuery(r, "iscsi.global.sessions", sessions...)
}

var reIPPort = regexp.MustCompile(`^(.+?)(:[0-9]+)?$`)

func (s *Service) iscsiGlobalUpdate(c *middleware.Call, params []json.RawMessage) (any, error) {
	if err := argCount(params, 1); err != nil {
		return nil, err
	}
	data, err := objArg(s.iscsiArg("iscsiglobal_update", "iscsi_update"), params, 0, s.iscsiGlobalFields(), false)
	if err != nil {
		return nil, err
	}
	var errs middleware.ValidationErrors
	for _, server := range strsOf(normalize(data)["isns_servers"]) {
		if !validISNS(server) {
			errs = append(errs, middleware.ValidationError{Attribute: "iscsiglobal_update.isns_servers",
				Message: `Server "` + server + `" is not a valid IP(:PORT)? tuple.`})
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	row := clone(s.t[nsISCSIGlobal].get(1))
	for k, v := range data {
		row[k] = v
	}
	row = normalize(row)
	s.t[nsISCSIGlobal].put(row)
	if err := s.commit(nsISCSIGlobal); err != nil {
		return nil, err
	}
	s.log.Info("iSCSI global configuration updated", "basename", row["basename"])
	return clone(row), nil
}

// validISNS accepts IP[:port] (IPv6 in brackets), as validate_isns_server.
func validISNS(server string) bool {
	m := reIPPort.FindStringSubmatch(server)
	if m == nil {
		return false
	}
	ip := m[1]
	if len(ip) > 1 && ip[0] == '[' && ip[len(ip)-1] == ']' {
		ip = ip[1 : len(ip)-1]
	}
	if net.ParseIP(ip) == nil {
		return false
	}
	if m[2] != "" {
		port, err := strconv.Atoi(m[2][1:])
		return err == nil && port >= 1 && port <= 65535
	}
	return true
}

// basename is the global IQN prefix. Callers hold s.mu.
func (s *Service) basename() string { return strOf(s.t[nsISCSIGlobal].get(1)["basename"]) }
