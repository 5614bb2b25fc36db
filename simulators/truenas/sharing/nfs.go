package sharing

import (
	"encoding/json"
	"os"
	"path"

	"github.com/switchyard-csi/switchyard/simulators/truenas/middleware"
)

// sharing.nfs: NFS exports of dataset directories (plugins/nfs.py).

func (s *Service) nfsFields() []field {
	d := s.dialectFor(nsNFS, "")
	nonEmpty := 0
	if d.pydantic {
		nonEmpty = 1 // NonEmptyString
	}
	f := []field{
		{name: "path", kind: kStr, required: true, minLen: nonEmpty},
		{name: "aliases", kind: kStrList, def: []any{}, minLen: nonEmpty},
		{name: "comment", kind: kStr, def: ""},
		{name: "networks", kind: kStrList, def: []any{}, minLen: nonEmpty},
		{name: "hosts", kind: kStrList, def: []any{}, minLen: nonEmpty},
		{name: "ro", kind: kBool, def: false},
		{name: "maproot_user", kind: kStr, null: true},
		{name: "maproot_group", kind: kStr, null: true},
		{name: "mapall_user", kind: kStr, null: true},
		{name: "mapall_group", kind: kStr, null: true},
		{name: "security", kind: kStrList, enum: strs("SYS", "KRB5", "KRB5I", "KRB5P"), def: []any{}},
		{name: "enabled", kind: kBool, def: true},
	}
	if s.v.AtLeast(25, 4, 0) {
		f = append(f, field{name: "expose_snapshots", kind: kBool, def: false})
	}
	return f
}

// nfsArg is the create/update argument's dialect: the pydantic argument
// "data", or the old schema "sharingnfs_create"/"sharingnfs_update".
func (s *Service) nfsArg(verb string) dialect {
	if s.dialectFor(nsNFS, "").pydantic {
		return pydantic("data")
	}
	return oldSchema("sharingnfs_" + verb)
}

func (s *Service) registerNFS(r *middleware.Registry) {
	s.addCRUD(r, crud{
		ns: nsNFS, verbose: "SharingNFS",
		view:   func(row middleware.Row, _ middleware.QueryOptions) middleware.Row { return s.nfsView(row) },
		create: s.nfsCreate, createParams: []string{"data"},
		update: s.nfsUpdate, updateParams: []string{"id", "data"},
		del: s.nfsDelete, delParams: []string{"id"},
	})
}

func (s *Service) nfsCreate(c *middleware.Call, params []json.RawMessage) (any, error) {
	if err := argCount(params, 1); err != nil {
		return nil, err
	}
	data, err := objArg(s.nfsArg("create"), params, 0, s.nfsFields(), true)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.nfsValidate(data, "sharingnfs_create", 0); err != nil {
		return nil, err
	}
	row, err := s.insert(nsNFS, data)
	if err != nil {
		return nil, err
	}
	return s.nfsView(row), nil
}

func (s *Service) nfsUpdate(c *middleware.Call, params []json.RawMessage) (any, error) {
	if err := argCount(params, 2); err != nil {
		return nil, err
	}
	id, err := intArg(s.nfsArg("update"), params, 0, "id")
	if err != nil {
		return nil, err
	}
	data, err := objArg(s.nfsArg("update"), params, 1, s.nfsFields(), false)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	old, err := s.instance(nsNFS, "SharingNFS", id)
	if err != nil {
		return nil, err
	}
	for k, v := range data {
		old[k] = v
	}
	if err := s.nfsValidate(old, "sharingnfs_update", id); err != nil {
		return nil, err
	}
	row, err := s.replace(nsNFS, old)
	if err != nil {
		return nil, err
	}
	return s.nfsView(row), nil
}

func (s *Service) nfsDelete(c *middleware.Call, params []json.RawMessage) (any, error) {
	if err := argCount(params, 1); err != nil {
		return nil, err
	}
	id, err := intArg(s.nfsArg("delete"), params, 0, "id")
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.instance(nsNFS, "SharingNFS", id); err != nil {
		return nil, err
	}
	s.t[nsNFS].remove(id)
	if err := s.commit(nsNFS); err != nil {
		return nil, err
	}
	s.log.Info("NFS share deleted", "id", id)
	if !s.v.AtLeast(25, 4, 0) {
		return nil, nil // the old do_delete returned nothing
	}
	return true, nil
}

func (s *Service) nfsView(r middleware.Row) middleware.Row {
	r["locked"] = false
	s.pathFields(r, strOf(r["path"]), true)
	if s.v.AtLeast(26, 0, 0) {
		r["tier"] = nil // a licensed feature: null on an unlicensed system
	}
	return r
}

// nfsValidate runs the checks of SharingNFSService.validate on the
// complete share data; self is the id of the share being updated (0 on
// create). Callers hold s.mu.
func (s *Service) nfsValidate(data middleware.Row, schema string, self int) error {
	data["aliases"] = []any{} // accepted but ignored (and cleared) by the real service
	p := strOf(data["path"])
	if err := s.checkSharePath(schema+".path", p); err != nil {
		return err
	}
	var errs middleware.ValidationErrors
	add := func(attr, msg string) {
		errs = append(errs, middleware.ValidationError{Attribute: schema + "." + attr, Message: msg})
	}

	networks := strsOf(data["networks"])
	hosts := strsOf(data["hosts"])
	for i, n := range networks {
		ipn, ok := parseNetwork(n)
		if !ok {
			msg := "'" + n + "' does not appear to be an IPv4 or IPv6 network"
			if !s.v.AtLeast(25, 4, 0) {
				msg = "Item#" + itoa(i) + " is not valid per list types: [network] " + msg
			}
			add("networks", msg)
			continue
		}
		networks[i] = ipn.String()
	}
	if len(errs) > 0 {
		return errs
	}
	data["networks"] = anyList(networks)
	if contains(hosts, "*") && (len(uniq(hosts)) > 1 || len(networks) > 0) {
		add("hosts", "ERROR - '*', i.e. 'everybody', cannot be included with other entries on same share path")
	}
	if len(errs) > 0 {
		return errs
	}

	// other shares of the same path (the table keeps its paths cleaned)
	cp := path.Clean(p)
	same := s.t[nsNFS].findPath(func(clean string, other middleware.Row) bool {
		return clean == cp && intOf(other["id"]) != self
	})
	errs = nfsHostsAndNetworks(schema, p, networks, hosts, same)
	if len(errs) > 0 {
		return errs
	}
	if err := nfsExportConflict(schema, networks, hosts, same); err != nil {
		return err
	}

	for _, k := range []string{"maproot", "mapall"} {
		if strOf(data[k+"_user"]) == "" && strOf(data[k+"_group"]) != "" {
			add(k+"_user", "This field is required when map group is specified")
		}
	}
	if strOf(data["maproot_user"]) != "" && strOf(data["mapall_user"]) != "" {
		add("mapall_user", "maproot_user disqualifies mapall_user")
	}
	if b, _ := data["expose_snapshots"].(bool); b {
		add("expose_snapshots", "This is an enterprise feature and may not be enabled without a valid license.")
	}
	if len(errs) > 0 {
		return errs
	}
	return nil
}

// checkSharePath checks that an exported path is a directory inside a
// mounted dataset, with the error each version gives when it is not.
func (s *Service) checkSharePath(attr, p string) error {
	host, inPool := s.model.HostPath(p)
	exists := false
	isDir := false
	if inPool {
		if st, err := os.Stat(host); err == nil {
			exists, isDir = true, st.IsDir()
		}
	}
	if !s.v.AtLeast(25, 4, 0) {
		// the old Dir attribute checks existence before the service runs
		switch {
		case !exists:
			return middleware.ValidationErrors{{Attribute: attr, Message: "This path does not exist.", Errno: middleware.ENOENT}}
		case !isDir:
			return middleware.ValidationErrors{{Attribute: attr, Message: "This path is not a directory.", Errno: enotdir}}
		}
		return nil
	}
	if !inPool {
		return middleware.Invalid(attr, "The path must reside within a pool mount point")
	}
	if !exists {
		// filesystem.stat of a missing path, called during validation
		return middleware.Errorf(middleware.ENOENT, "Path %s not found", p)
	}
	if !isDir {
		return middleware.Invalid(attr, "The path must be a directory")
	}
	return nil
}

// nfsHostsAndNetworks refuses a network or host that another share of the
// same path already serves (validate_hosts_and_networks).
func nfsHostsAndNetworks(schema, p string, networks, hosts []string, same []middleware.Row) middleware.ValidationErrors {
	var errs middleware.ValidationErrors
	add := func(attr, msg string) {
		errs = append(errs, middleware.ValidationError{Attribute: schema + "." + attr, Message: msg})
	}
	var used []string // networks in use, in the order found
	usedHosts := map[string]bool{}
	for _, other := range same {
		oh, on := strsOf(other["hosts"]), strsOf(other["networks"])
		for _, h := range oh {
			if n, ok := parseNetwork(h); ok {
				used = append(used, n.String())
			} else {
				usedHosts[h] = true
			}
		}
		used = append(used, on...)
		if len(oh) == 0 && len(on) == 0 {
			used = append(used, "0.0.0.0/0", "::/0")
		}
	}
	for _, n := range uniq(networks) {
		if contains(used, n) {
			add("networks", "ERROR - Another NFS share exports "+p+" for "+n)
		}
		if that, ok := overlapping(used, n); ok {
			add("networks", "ERROR - This or another NFS share exports "+p+" to "+that+" and overlaps "+n)
		}
		used = append(used, n)
	}
	for _, h := range uniq(hosts) {
		if usedHosts[h] {
			add("hosts", "ERROR - Another NFS share already exports "+p+" for "+h)
			continue
		}
		n, ok := parseNetwork(h)
		if !ok {
			continue // names and netgroups: the simulator resolves no names
		}
		if that, ok := overlapping(used, n.String()); ok {
			add("hosts", "ERROR - This or another NFS share exports "+p+" to "+that+" and overlaps host "+h+" (host IP: "+h+")")
		}
		used = append(used, n.String())
	}
	return errs
}

// nfsExportConflict is validate_share_path: the same path exported twice
// to the same hosts, networks or everybody.
func nfsExportConflict(schema string, networks, hosts []string, same []middleware.Row) error {
	dataHosts := without(hosts, "*")
	for _, other := range same {
		otherHosts := without(strsOf(other["hosts"]), "*")
		otherNets := strsOf(other["networks"])
		commonHosts := intersect(dataHosts, otherHosts)
		commonNets := intersect(networks, otherNets)
		otherEverybody := len(otherHosts) == 0 && len(otherNets) == 0
		thisEverybody := len(dataHosts) == 0 && len(networks) == 0
		if len(commonHosts) == 0 && len(commonNets) == 0 && !otherEverybody && !thisEverybody {
			continue
		}
		desc, reason := "Another share with the same path", "'everybody', i.e. '*'"
		switch {
		case len(commonHosts) > 0:
			reason = pySet(commonHosts)
		case len(commonNets) > 0:
			reason = pySet(commonNets)
		case thisEverybody && !otherEverybody:
			desc = "This share is exported to everybody and another share"
			if all := uniq(append(append([]string{}, dataHosts...), otherHosts...)); len(all) > 0 {
				reason = join(all, ", ")
			} else {
				reason = join(uniq(append(append([]string{}, networks...), otherNets...)), ", ")
			}
		}
		return middleware.Invalid(schema+".path", "ERROR - Export conflict. %s exports %s for %s", desc, strOf(other["path"]), reason)
	}
	return nil
}
