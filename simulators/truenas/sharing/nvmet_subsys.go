package sharing

import (
	"sort"
	"strings"

	"github.com/switchyard-csi/switchyard/simulators/truenas/middleware"
)

// nvmet.subsys (subsys.py): NVMe subsystems, each with an NQN, holding
// namespaces, offered on ports, to any host or to listed hosts.

func (s *Service) registerSubsys(r *middleware.Registry) {
	s.nvCRUD(r, nvSpec{
		ns: nsSubsys, verbose: "NVMetSubsys", obj: "subsys",
		fields: func(create bool) []field {
			return []field{
				{name: "name", kind: kStr, required: create, minLen: 1},
				{name: "subnqn", kind: kStr, null: true},
				{name: "allow_any_host", kind: kBool, def: false},
				{name: "pi_enable", kind: kBool, null: true},
				{name: "qid_max", kind: kInt, null: true},
				{name: "ieee_oui", kind: kStr, null: true},
				{name: "ana", kind: kBool, null: true},
			}
		},
		model: func(d dialect, data middleware.Row, _ bool) error {
			if nqn, ok := data["subnqn"].(string); ok {
				return checkNQN(d, "subnqn", nqn)
			}
			return nil
		},
		validate: s.subsysValidate,
		view: func(row middleware.Row, opts middleware.QueryOptions) middleware.Row {
			return s.subsysView(row, opts.Extra["verbose"] == true)
		},
		deleteOpts:   []field{{name: "force", kind: kBool, def: false}},
		beforeDelete: s.subsysBeforeDelete,
		touches:      []string{nsNamespace, nsPortSubsys, nsHostSubsys},
	})
}

// subsysView fills hosts, namespaces and ports, which the real query
// does only when asked for extra.verbose. Callers hold s.mu.
func (s *Service) subsysView(r middleware.Row, verbose bool) middleware.Row {
	ids := func(ns, key string) []any {
		out := []any{}
		if !verbose {
			return out
		}
		for _, x := range s.t[ns].rows {
			if intOf(x["subsys_id"]) == intOf(r["id"]) {
				if key == "id" {
					out = append(out, x["id"])
				} else {
					out = append(out, x[key])
				}
			}
		}
		return out
	}
	r["hosts"] = ids(nsHostSubsys, "host_id")
	r["namespaces"] = ids(nsNamespace, "id")
	r["ports"] = ids(nsPortSubsys, "port_id")
	return r
}

// subsysRef is a subsystem as other objects embed it. Callers hold s.mu.
func (s *Service) subsysRef(id int) any {
	r := s.t[nsSubsys].get(id)
	if r == nil {
		return nil
	}
	return s.subsysView(clone(r), false)
}

func (s *Service) subsysValidate(data, old middleware.Row, schema string) error {
	self := intOf(old["id"])
	name := strOf(data["name"])
	var errs middleware.ValidationErrors
	for _, r := range s.t[nsSubsys].rows {
		if intOf(r["id"]) != self && strOf(r["name"]) == name {
			errs = append(errs, middleware.ValidationError{Attribute: schema + ".name", Message: "Object with this name already exists"})
		}
	}
	if strOf(data["serial"]) == "" {
		data["serial"] = s.subsysSerial()
	}
	if strOf(data["subnqn"]) == "" {
		nqn := s.basenqn() + ":" + name
		if len(nqn) > maxNQNLen {
			nqn = nqn[:maxNQNLen] // subsys_subnqn truncates rather than refuses
		}
		data["subnqn"] = nqn
	}
	if data["ana"] != nil {
		errs = append(errs, middleware.ValidationError{Attribute: schema + ".ana", Message: "This platform does not support Asymmetric Namespace Access(ANA)."})
	}
	if len(errs) > 0 {
		return errs
	}
	for _, r := range s.t[nsSubsys].rows {
		if intOf(r["id"]) != self && strOf(r["subnqn"]) == strOf(data["subnqn"]) {
			return middleware.Errorf(middleware.EFAULT, "UNIQUE constraint failed: services_nvmet_subsys.nvmet_subsys_subnqn")
		}
	}
	return nil
}

// subsysSerial is 20 random hex digits no subsystem uses. Callers hold s.mu.
func (s *Service) subsysSerial() string {
	for {
		serial := randomHex(20)
		if len(s.t[nsSubsys].find(func(r middleware.Row) bool { return strOf(r["serial"]) == serial })) == 0 {
			return serial
		}
	}
}

// subsysBeforeDelete refuses to delete a subsystem with namespaces or
// ports unless forced (then they go too); host grants always go.
func (s *Service) subsysBeforeDelete(row, opts middleware.Row) error {
	id, name := intOf(row["id"]), strOf(row["name"])
	force, _ := opts["force"].(bool)
	of := func(ns string) []middleware.Row {
		return s.t[ns].find(func(r middleware.Row) bool { return intOf(r["subsys_id"]) == id })
	}
	namespaces, ports := of(nsNamespace), of(nsPortSubsys)
	var errs middleware.ValidationErrors
	if !force {
		if n := len(namespaces); n > 0 {
			var nsids []int
			for _, x := range namespaces {
				nsids = append(nsids, intOf(x["nsid"]))
			}
			sort.Ints(nsids)
			msg := "Subsystem " + name + " contains 1 namespace: " + itoa(nsids[0])
			if n > 1 {
				shown := make([]string, 0, 3)
				for _, x := range nsids[:min(3, n)] {
					shown = append(shown, itoa(x))
				}
				postfix := ""
				if n > 3 {
					postfix = ",..."
				}
				msg = "Subsystem " + name + " contains " + itoa(n) + " namespaces: " + strings.Join(shown, ",") + postfix
			}
			errs = append(errs, middleware.ValidationError{Attribute: "nvmet_subsys_delete.id", Message: msg})
		}
		if n := len(ports); n > 0 {
			word := "port"
			if n > 1 {
				word = "ports"
			}
			errs = append(errs, middleware.ValidationError{Attribute: "nvmet_subsys_delete.id", Message: "Subsystem " + name + " visible on " + itoa(n) + " " + word})
		}
		if len(errs) > 0 {
			return errs
		}
	}
	for _, ns := range []string{nsNamespace, nsPortSubsys, nsHostSubsys} {
		for _, x := range of(ns) {
			s.t[ns].remove(intOf(x["id"]))
		}
	}
	return nil
}
