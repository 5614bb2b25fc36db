package sharing

import (
	"fmt"
	"net"

	"github.com/switchyard-csi/switchyard/simulators/truenas/middleware"
)

// nvmet.port (port.py): transport addresses (TCP, normally port 4420)
// that subsystems are offered on through nvmet.port_subsys
// (port_subsys.py). A fresh system has no port.

func (s *Service) registerPort(r *middleware.Registry) {
	s.nvCRUD(r, nvSpec{
		ns: nsPort, verbose: "NVMetPort", obj: "port",
		fields: func(create bool) []field {
			return []field{
				{name: "addr_trtype", kind: kStr, required: create, enum: strs("TCP", "RDMA", "FC")},
				{name: "addr_trsvcid", kind: kIntOrStr, required: create},
				{name: "addr_traddr", kind: kStr, required: create, minLen: 1},
				{name: "inline_data_size", kind: kInt, null: true},
				{name: "max_queue_size", kind: kInt, null: true},
				{name: "pi_enable", kind: kBool, null: true},
				{name: "enabled", kind: kBool, def: true},
			}
		},
		model:    portModel,
		validate: s.portValidate,
		deleteOpts: []field{
			{name: "force", kind: kBool, def: false},
		},
		beforeDelete: s.portBeforeDelete,
		touches:      []string{nsPortSubsys},
	})
}

// portModel is NVMetPortEntry's model validator: an IP address and a port
// number for TCP and RDMA.
func portModel(d dialect, data middleware.Row, create bool) error {
	typ, ok := data["addr_trtype"].(string)
	if !ok || (typ != "TCP" && typ != "RDMA") {
		return nil
	}
	if net.ParseIP(strOf(data["addr_traddr"])) == nil {
		return middleware.Invalid(d.attr, "Value error, addr_traddr must be a valid IP address")
	}
	port, isInt := data["addr_trsvcid"].(int)
	if !isInt {
		return middleware.Invalid(d.attr, "Value error, For TCP or RDMA addr_trsvcid must be a port number integer")
	}
	if port < 1024 || port > 65535 {
		return middleware.Invalid(d.attr, "Value error, addr_trsvcid port number must be an integer in the range 1024..65535")
	}
	return nil
}

func (s *Service) portValidate(data, old middleware.Row, schema string) error {
	self := intOf(old["id"])
	trsvcid := func(r middleware.Row) string { return fmt.Sprint(r["addr_trsvcid"]) }
	for _, p := range s.t[nsPort].rows {
		if intOf(p["id"]) != self && strOf(p["addr_trtype"]) == strOf(data["addr_trtype"]) &&
			strOf(p["addr_traddr"]) == strOf(data["addr_traddr"]) && trsvcid(p) == trsvcid(data) {
			return middleware.Invalid(schema, "Port #%d uses the same transport/address", intOf(p["index"]))
		}
	}
	if strOf(data["addr_trtype"]) == "RDMA" {
		return middleware.Invalid(schema, "This platform cannot support NVMe-oF(RDMA) or is missing an RDMA capable NIC.")
	}
	switch ip := net.ParseIP(strOf(data["addr_traddr"])); {
	case strOf(data["addr_trtype"]) == "FC":
		data["addr_adrfam"] = "FC"
	case ip != nil && ip.To4() != nil:
		data["addr_adrfam"] = "IPV4"
	default:
		data["addr_adrfam"] = "IPV6"
	}
	if old == nil {
		data["index"] = s.freeNumber(nsPort, "index", 1)
	}
	return nil
}

func (s *Service) portBeforeDelete(row, opts middleware.Row) error {
	id := intOf(row["id"])
	maps := s.t[nsPortSubsys].find(func(r middleware.Row) bool { return intOf(r["port_id"]) == id })
	if force, _ := opts["force"].(bool); !force && len(maps) > 0 {
		var names []string
		for _, m := range maps {
			if sub := s.t[nsSubsys].get(intOf(m["subsys_id"])); sub != nil {
				names = append(names, strOf(sub["name"]))
			}
		}
		msg := "Port #" + itoa(intOf(row["index"])) + " used by 1 subsystem: " + join(names, ",")
		if len(maps) > 1 {
			postfix := ""
			if len(names) > 3 {
				names, postfix = names[:3], ",..."
			}
			msg = "Port #" + itoa(intOf(row["index"])) + " used by " + itoa(len(maps)) + " subsystems: " + join(names, ",") + postfix
		}
		return middleware.Invalid("nvmet_port_delete.id", "%s", msg)
	}
	for _, m := range maps {
		s.t[nsPortSubsys].remove(intOf(m["id"]))
	}
	return nil
}

// portRef is a port as port_subsys embeds it. Callers hold s.mu.
func (s *Service) portRef(id int) any {
	if r := s.t[nsPort].get(id); r != nil {
		return clone(r)
	}
	return nil
}

func (s *Service) registerPortSubsys(r *middleware.Registry) {
	s.nvCRUD(r, nvSpec{
		ns: nsPortSubsys, verbose: "NVMetPortSubsys", obj: "port_subsys",
		fields: func(create bool) []field {
			return []field{{name: "port_id", kind: kInt, required: create}, {name: "subsys_id", kind: kInt, required: create}}
		},
		validate: func(data, old middleware.Row, schema string) error {
			return s.linkValidate(nsPortSubsys, data, old, schema, "port_id", nsPort, "No port with ID ")
		},
		view: func(row middleware.Row, _ middleware.QueryOptions) middleware.Row {
			row["port"] = s.portRef(intOf(row["port_id"]))
			row["subsys"] = s.subsysRef(intOf(row["subsys_id"]))
			return row
		},
		hidden: []string{"port_id", "subsys_id"},
	})
}

// linkValidate checks a port_subsys or host_subsys association: both ends
// exist and the pair is new. (Both services word the duplicate as
// "Host ID", port_subsys included.) Callers hold s.mu.
func (s *Service) linkValidate(link string, data, old middleware.Row, schema, key, ns, missing string) error {
	self := intOf(old["id"])
	other, subsys := intOf(data[key]), intOf(data["subsys_id"])
	var errs middleware.ValidationErrors
	if s.t[ns].get(other) == nil {
		errs = append(errs, middleware.ValidationError{Attribute: schema + "." + key, Message: missing + itoa(other)})
	}
	if s.t[nsSubsys].get(subsys) == nil {
		errs = append(errs, middleware.ValidationError{Attribute: schema + ".subsys_id", Message: "No subsystem with ID " + itoa(subsys)})
	}
	for _, x := range s.t[link].rows {
		if intOf(x["id"]) != self && intOf(x[key]) == other && intOf(x["subsys_id"]) == subsys {
			errs = append(errs, middleware.ValidationError{Attribute: schema + "." + key,
				Message: "This record already exists (Host ID: " + itoa(other) + "/Subsystem ID: " + itoa(subsys) + ")"})
			break
		}
	}
	if len(errs) > 0 {
		return errs
	}
	return nil
}
