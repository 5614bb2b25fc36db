package sharing

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/switchyard-csi/switchyard/simulators/truenas/middleware"
)

// nvmet.namespace (namespace.py): a zvol ("ZVOL", "zvol/<dataset>") or a
// file ("FILE") exposed in a subsystem under an NSID. device_uuid and
// device_nguid are generated once and never change.

func (s *Service) registerNamespace(r *middleware.Registry) {
	s.nvCRUD(r, nvSpec{
		ns: nsNamespace, verbose: "NVMetNamespace", obj: "namespace",
		fields: func(create bool) []field {
			return []field{
				{name: "nsid", kind: kInt, null: true, min: intp(1), max: intp(0xFFFFFFFE)},
				{name: "device_type", kind: kStr, required: create, enum: strs("ZVOL", "FILE")},
				{name: "device_path", kind: kStr, required: create},
				{name: "filesize", kind: kInt, null: true},
				{name: "enabled", kind: kBool, def: true},
				{name: "subsys_id", kind: kInt, required: create},
			}
		},
		validate: s.namespaceValidate,
		view: func(row middleware.Row, _ middleware.QueryOptions) middleware.Row {
			row["subsys"] = s.subsysRef(intOf(row["subsys_id"]))
			row["locked"] = false
			s.pathFields(row, strOf(row["device_path"]), strOf(row["device_type"]) == "FILE")
			return row
		},
		hidden:       []string{"subsys_id"},
		deleteOpts:   []field{{name: "remove", kind: kBool, def: false}},
		beforeDelete: s.namespaceBeforeDelete,
	})
}

func (s *Service) namespaceValidate(data, old middleware.Row, schema string) error {
	self := intOf(old["id"])
	subsys := intOf(data["subsys_id"])
	path, typ := strOf(data["device_path"]), strOf(data["device_type"])
	var errs middleware.ValidationErrors
	add := func(attr, msg string) {
		errs = append(errs, middleware.ValidationError{Attribute: schema + "." + attr, Message: msg})
	}
	if s.t[nsSubsys].get(subsys) == nil {
		add("subsys_id", "No subsystem with ID "+itoa(subsys))
	}
	if data["nsid"] != nil {
		nsid := intOf(data["nsid"])
		for _, x := range s.t[nsNamespace].rows {
			if intOf(x["id"]) != self && intOf(x["subsys_id"]) == subsys && x["nsid"] != nil && intOf(x["nsid"]) == nsid {
				add("nsid", "This record already exists (Subsystem ID: "+itoa(subsys)+"/NSID: "+itoa(nsid)+")")
				break
			}
		}
	}
	switch typ {
	case "ZVOL":
		if !strings.HasPrefix(path, "zvol/") {
			add("device_path", `ZVOL device_path must start with "zvol/": `+path)
		} else if _, ok := s.model.ZvolPath(strings.TrimPrefix(path, "zvol/")); !ok {
			add("device_path", "ZVOL device_path must be a block device: "+path)
		}
	case "FILE":
		host, inPool := s.model.HostPath(path)
		parent, perr := os.Stat(filepath.Dir(host))
		st, err := os.Stat(host)
		switch {
		case !inPool || perr != nil || !parent.IsDir():
			add("device_path", "FILE device_path must reside in an existing directory on a dataset: "+path)
		case err == nil && st.IsDir():
			add("device_path", "FILE device_path must not be a directory: "+path)
		}
	}
	for _, x := range s.t[nsNamespace].rows {
		if intOf(x["id"]) != self && strOf(x["device_path"]) == path {
			name := ""
			if sub := s.t[nsSubsys].get(intOf(x["subsys_id"])); sub != nil {
				name = strOf(sub["name"])
			}
			add("device_path", "This device_path already used by subsystem: "+name)
			break
		}
	}
	for _, e := range s.t[nsExtent].rows {
		if strOf(e["path"]) == path {
			add("device_path", "This device_path already used by iSCSI extent: "+strOf(e["name"]))
			break
		}
	}
	if len(errs) > 0 {
		return errs
	}
	for _, key := range []string{"device_uuid", "device_nguid"} {
		if strOf(data[key]) == "" {
			data[key] = uuid4()
		}
	}
	if typ == "FILE" {
		if err := s.namespaceFile(data, old, schema); err != nil {
			return err
		}
	}
	if data["nsid"] == nil {
		data["nsid"] = s.nextNSID(subsys)
	}
	return nil
}

// nextNSID is the lowest NSID from 1 the subsystem does not use. Callers
// hold s.mu.
func (s *Service) nextNSID(subsys int) int {
	used := map[int]bool{}
	for _, x := range s.t[nsNamespace].rows {
		if intOf(x["subsys_id"]) == subsys {
			used[intOf(x["nsid"])] = true
		}
	}
	n := 1
	for used[n] {
		n++
	}
	return n
}

// namespaceFile is save_file: create the file, or grow it; never shrink.
func (s *Service) namespaceFile(data, old middleware.Row, schema string) error {
	host, _ := s.model.HostPath(strOf(data["device_path"]))
	size := int64(intOf(data["filesize"]))
	if _, err := os.Stat(host); err != nil {
		if data["filesize"] == nil || size == 0 {
			return middleware.Invalid(schema+".filesize", "Must supply filesize if device_path FILE does not exist.")
		}
		f, err := os.OpenFile(host, os.O_CREATE|os.O_WRONLY, 0o644)
		if err == nil {
			err = f.Truncate(size)
			f.Close()
		}
		if err != nil {
			return middleware.Errorf(middleware.EFAULT, "Failed to create namespace file: %v", err)
		}
		return nil
	}
	if old != nil && data["filesize"] != nil {
		switch oldSize := int64(intOf(old["filesize"])); {
		case size > oldSize:
			if err := os.Truncate(host, size); err != nil {
				return middleware.Errorf(middleware.EFAULT, "Failed to grow namespace file: %v", err)
			}
		case size < oldSize:
			return middleware.Invalid(schema+".filesize", "Shrinking an namespace file is not allowed. This can lead to data loss.")
		}
	}
	return nil
}

func (s *Service) namespaceBeforeDelete(row, opts middleware.Row) error {
	if remove, _ := opts["remove"].(bool); remove && strOf(row["device_type"]) == "FILE" {
		if host, ok := s.model.HostPath(strOf(row["device_path"])); ok {
			if err := os.Remove(host); err != nil && !os.IsNotExist(err) {
				return middleware.Errorf(middleware.EFAULT, "Failed to remove namespace file: %v", err)
			}
		}
	}
	return nil
}
