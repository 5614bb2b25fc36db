package sharing

import (
	"encoding/json"
	"regexp"
	"strings"

	"github.com/switchyard-csi/switchyard/simulators/truenas/middleware"
)

// nvmet.* (plugins/nvmet/*.py), NVMe-oF targets, exist from 25.10 on and
// were written for the pydantic API: every argument is checked in that
// dialect, and the services' own checks name "nvmet_<object>_<verb>".

// nvSpec describes one nvmet CRUD namespace for nvCRUD.
type nvSpec struct {
	ns, verbose string
	obj         string // "subsys": arguments nvmet_subsys_create/update
	fields      func(create bool) []field
	// model runs the pydantic model validators (no lock held).
	model func(d dialect, data middleware.Row, create bool) error
	// validate runs the service's checks on the complete object and may
	// fill in generated values; old is nil on create. s.mu is held.
	validate func(data, old middleware.Row, schema string) error
	// deleteOpts are the fields of delete's options argument (nil: delete
	// takes only the id).
	deleteOpts []field
	// beforeDelete refuses or cascades a delete. s.mu is held.
	beforeDelete func(row, opts middleware.Row) error
	view         func(row middleware.Row, opts middleware.QueryOptions) middleware.Row
	hidden       []string
	touches      []string // other namespaces a delete may change
}

func (s *Service) nvCRUD(r *middleware.Registry, sp nvSpec) {
	arg := func(verb string) dialect { return pydantic("nvmet_" + sp.obj + "_" + verb) }
	view := func(row middleware.Row) middleware.Row {
		if sp.view != nil {
			return strip(sp.view(row, middleware.QueryOptions{}), sp.hidden, nil).(middleware.Row)
		}
		return row
	}
	create := func(c *middleware.Call, params []json.RawMessage) (any, error) {
		if err := argCount(params, 1); err != nil {
			return nil, err
		}
		d := arg("create")
		data, err := objArg(d, params, 0, sp.fields(true), true)
		if err != nil {
			return nil, err
		}
		if sp.model != nil {
			if err := sp.model(d, data, true); err != nil {
				return nil, err
			}
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		if err := sp.validate(data, nil, d.attr); err != nil {
			return nil, err
		}
		row, err := s.insert(sp.ns, data)
		if err != nil {
			return nil, err
		}
		return view(row), nil
	}
	update := func(c *middleware.Call, params []json.RawMessage) (any, error) {
		if err := argCount(params, 2); err != nil {
			return nil, err
		}
		d := arg("update")
		id, err := intArg(d, params, 0, "id")
		if err != nil {
			return nil, err
		}
		data, err := objArg(d, params, 1, sp.fields(false), false)
		if err != nil {
			return nil, err
		}
		if sp.model != nil {
			if err := sp.model(d, data, false); err != nil {
				return nil, err
			}
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		old, err := s.instance(sp.ns, sp.verbose, id)
		if err != nil {
			return nil, err
		}
		updated := clone(old)
		for k, v := range data {
			updated[k] = v
		}
		if err := sp.validate(updated, old, d.attr); err != nil {
			return nil, err
		}
		row, err := s.replace(sp.ns, updated)
		if err != nil {
			return nil, err
		}
		return view(row), nil
	}
	delParams := []string{"id"}
	if sp.deleteOpts != nil {
		delParams = append(delParams, "options")
	}
	del := func(c *middleware.Call, params []json.RawMessage) (any, error) {
		if err := argCount(params, len(delParams)); err != nil {
			return nil, err
		}
		id, err := intArg(arg("delete"), params, 0, "id")
		if err != nil {
			return nil, err
		}
		opts := middleware.Row{}
		if sp.deleteOpts != nil {
			if opts, err = optionsArg(params, 1, sp.deleteOpts); err != nil {
				return nil, err
			}
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		row, err := s.instance(sp.ns, sp.verbose, id)
		if err != nil {
			return nil, err
		}
		if sp.beforeDelete != nil {
			if err := sp.beforeDelete(row, opts); err != nil {
				return nil, err
			}
		}
		s.t[sp.ns].remove(id)
		if err := s.commit(append([]string{sp.ns}, sp.touches...)...); err != nil {
			return nil, err
		}
		s.log.Info("deleted", "namespace", sp.ns, "id", id)
		return true, nil
	}
	s.addCRUD(r, crud{
		ns: sp.ns, verbose: sp.verbose, view: sp.view, hidden: sp.hidden,
		create: create, createParams: []string{"nvmet_" + sp.obj + "_create"},
		update: update, updateParams: []string{"id", "nvmet_" + sp.obj + "_update"},
		del: del, delParams: delParams,
	})
}

func (s *Service) registerNVMet(r *middleware.Registry) {
	s.registerNVMetGlobal(r)
	s.registerSubsys(r)
	s.registerNamespace(r)
	s.registerPort(r)
	s.registerPortSubsys(r)
	s.registerHost(r)
	s.registerHostSubsys(r)
}

// nvmet.global: the target's global configuration (global.py). The base
// NQN carries a per-system UUID, as the real default (uuid_nqn) does.

func nvmetGlobalDefaults() middleware.Row {
	return normalize(middleware.Row{
		"id":             1,
		"basenqn":        "nqn.2011-06.com.truenas:uuid:" + uuid4(),
		"kernel":         true,
		"ana":            false,
		"rdma":           false,
		"xport_referral": true,
	})
}

func (s *Service) registerNVMetGlobal(r *middleware.Registry) {
	fields := []field{
		{name: "basenqn", kind: kStr},
		{name: "kernel", kind: kBool},
		{name: "ana", kind: kBool},
		{name: "rdma", kind: kBool},
		{name: "xport_referral", kind: kBool},
	}
	s.addConfig(r, nsNVMetGlobal, func(c *middleware.Call, params []json.RawMessage) (any, error) {
		if err := argCount(params, 1); err != nil {
			return nil, err
		}
		data, err := objArg(pydantic("nvmet_update"), params, 0, fields, false)
		if err != nil {
			return nil, err
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		row := clone(s.t[nsNVMetGlobal].get(1))
		var errs middleware.ValidationErrors
		if b, _ := data["rdma"].(bool); b && row["rdma"] != true {
			errs = append(errs, middleware.ValidationError{Attribute: "nvmet_global_update.rdma",
				Message: "This platform cannot support NVMe-oF(RDMA) or is missing a RDMA capable NIC."})
		}
		if b, _ := data["ana"].(bool); b && row["ana"] != true {
			errs = append(errs, middleware.ValidationError{Attribute: "nvmet_global_update.ana",
				Message: "This platform does not support Asymmetric Namespace Access(ANA)."})
		}
		if len(errs) > 0 {
			return nil, errs
		}
		for k, v := range data {
			row[k] = v
		}
		return s.replace(nsNVMetGlobal, row)
	}, "nvmet_update")
	addConst(r, "nvmet.global.ana_enabled", false)
	addConst(r, "nvmet.global.rdma_enabled", false)
	addEmptyQuery(r, "nvmet.global.sessions")
}

// basenqn is the global NQN prefix. Callers hold s.mu.
func (s *Service) basenqn() string { return strOf(s.t[nsNVMetGlobal].get(1)["basenqn"]) }

// NQN limits (api/base/types/nvmet.py).
const (
	minNQNLen = 11
	maxNQNLen = 223
)

// checkNQN is the pydantic NQN type: length 11..223, then the format.
func checkNQN(d dialect, attr, nqn string) error {
	switch {
	case len(nqn) < minNQNLen:
		return middleware.Invalid(d.at(attr), "String should have at least %d characters", minNQNLen)
	case len(nqn) > maxNQNLen:
		return middleware.Invalid(d.at(attr), "String should have at most %d characters", maxNQNLen)
	}
	if msg := nqnFormatError(nqn); msg != "" {
		return middleware.Invalid(d.at(attr), "Value error, %s", msg)
	}
	return nil
}

const (
	nqnUUIDPrefix = "nqn.2014-08.org.nvmexpress:uuid:"
	nqnDiscovery  = "nqn.2014-08.org.nvmexpress.discovery"
)

var (
	reNQNDate = regexp.MustCompile(`^nqn.\d{4}-\d{2}\..*`)
	reUUID    = regexp.MustCompile(`^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$`)
	reLabel   = regexp.MustCompile(`^[A-Za-z0-9-]{1,63}$`)
	reTLD     = regexp.MustCompile(`^[A-Za-z]{2,}$`)
)

// nqnFormatError is _validate_nqn's complaint about nqn ("" when valid).
func nqnFormatError(nqn string) string {
	switch {
	case nqn == nqnDiscovery:
		return ""
	case strings.HasPrefix(nqn, nqnUUIDPrefix):
		if len(nqn) != len(nqnUUIDPrefix)+36 {
			return nqn + ": uuid is incorrect length"
		}
		if !reUUID.MatchString(nqn[len(nqnUUIDPrefix):]) {
			return "badly formed hexadecimal UUID string"
		}
		return ""
	case strings.HasPrefix(nqn, "nqn."):
		if !reNQNDate.MatchString(nqn) {
			return nqn + `: must start with "nqn.YYYY-MM.<reverse.domain>"`
		}
		rest := nqn[12:]
		if rest == "" || !strings.Contains(rest, ".") {
			return nqn + `: must start with "nqn.YYYY-MM.<reverse.domain>" - domain missing`
		}
		reverse, _, _ := strings.Cut(rest, ":")
		if !validDomain(reverse) {
			return nqn + ": domain does not appear to be valid"
		}
		return ""
	}
	return nqn + `: must start with "nqn"`
}

// validDomain checks a reversed domain ("com.truenas") against
// DOMAIN_PATTERN: labels of 1..63 letters, digits or inner dashes, and
// an alphabetic top-level label of two or more letters.
func validDomain(reverse string) bool {
	labels := strings.Split(reverse, ".")
	if len(labels) < 2 || !reTLD.MatchString(labels[0]) {
		return false
	}
	for _, l := range labels[1:] {
		if !reLabel.MatchString(l) || strings.HasPrefix(l, "-") || strings.HasSuffix(l, "-") {
			return false
		}
	}
	return true
}
