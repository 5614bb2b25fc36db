package zfsssh

import (
	"fmt"
	"strconv"
	"strings"
)

// What a TPG holds: LUNs, node ACLs with their mapped LUNs, and portals.

func (t *tcli) lunsNode(parent *csNode, g func() *TPG) *csNode {
	n := t.node("luns", parent)
	n.summary = func() (string, csHealth) { return fmt.Sprintf("LUNs: %d", len(g().LUNs)), healthNone }
	n.kids = func(n *csNode) []*csNode {
		var out []*csNode
		for _, l := range g().LUNs {
			so := l.StorageObject
			ln := t.node(fmt.Sprintf("lun%d", l.Index), n)
			ln.summary = func() (string, csHealth) {
				dev := ""
				parts := strings.Split(strings.TrimPrefix(so, "/backstores/"), "/")
				if len(parts) == 2 {
					if o := t.m.storageObject(parts[0], parts[1]); o != nil {
						dev = o.Dev
					}
				}
				return fmt.Sprintf("%s (%s) (default_tg_pt_gp)", strings.TrimPrefix(so, "/backstores/"), dev), healthOK
			}
			out = append(out, ln)
		}
		return out
	}
	n.cmds["create"] = &csCmd{args: []string{"storage_object", "lun", "add_mapped_luns"}, nreq: 1, run: func(c *csCall) (*csNode, error) {
		return t.createLUN(c, g())
	}}
	n.cmds["delete"] = &csCmd{args: []string{"lun"}, nreq: 1, run: func(c *csCall) (*csNode, error) {
		s := strings.TrimPrefix(strings.ToLower(c.args["lun"]), "lun")
		idx, err := strconv.Atoi(s)
		tp := g()
		found := -1
		for i, l := range tp.LUNs {
			if err == nil && l.Index == idx {
				found = i
			}
		}
		if found < 0 {
			return nil, csError("Invalid LUN")
		}
		tp.LUNs = append(tp.LUNs[:found], tp.LUNs[found+1:]...)
		tp.dropMappedLUNs(idx)
		t.sh.info("Deleted LUN %s.", s)
		return nil, nil
	}}
	return n
}

func (t *tcli) createLUN(c *csCall, tp *TPG) (*csNode, error) {
	arg := c.args["storage_object"]
	var soPath string
	if node, err := c.node.get(arg); err == nil && node.parent != nil && node.parent.parent != nil && node.parent.parent.name == "backstores" {
		soPath = node.path()
	} else {
		// A device or file path: rtslib makes a storage object named after it.
		fi, ferr := t.devInfo(arg)
		name := arg[strings.LastIndex(arg, "/")+1:]
		plugin := "fileio"
		if ferr == nil && fi.kind == kindBlock {
			plugin = "block"
		}
		if ferr != nil || (fi.kind != kindBlock && fi.kind != kindFile) || t.m.storageObject(plugin, name) != nil || name == "" {
			return nil, csError("storage object or path not valid")
		}
		t.m.st.StorageObjects = append(t.m.st.StorageObjects, StorageObject{Plugin: plugin, Name: name, Dev: arg, Size: fi.size,
			WWN: unitSerial(), WriteBack: plugin == "fileio", Attributes: defaultSOAttributes()})
		t.sh.info("Created storage object %s.", name)
		soPath = "/backstores/" + plugin + "/" + name
	}
	for _, l := range tp.LUNs {
		if l.StorageObject == soPath {
			return nil, csError(fmt.Sprintf("lun for storage object %s already exists", strings.TrimPrefix(soPath, "/backstores/")))
		}
	}
	var idx int
	if s, ok := c.arg("lun"); ok {
		v, err := strconv.Atoi(strings.TrimPrefix(strings.ToLower(s), "lun"))
		if err != nil || v < 0 {
			return nil, csError("Invalid LUN")
		}
		for _, l := range tp.LUNs {
			if l.Index == v {
				return nil, csError("This LUN already exists in configFS")
			}
		}
		idx = v
	} else {
		used := map[int]bool{}
		for _, l := range tp.LUNs {
			used[l.Index] = true
		}
		for idx = 0; used[idx]; idx++ {
		}
	}
	tp.LUNs = append(tp.LUNs, LUN{Index: idx, StorageObject: soPath})
	t.sh.info("Created LUN %d.", idx)
	addMapped := t.m.prefs["auto_add_mapped_luns"] == "true"
	if v, ok := c.arg("add_mapped_luns"); ok {
		addMapped = isTrue(v)
	}
	if addMapped {
		for ai := range tp.NodeACLs {
			acl := &tp.NodeACLs[ai]
			used := map[int]bool{}
			for _, ml := range acl.MappedLUNs {
				used[ml.Index] = true
			}
			m := idx
			if used[m] {
				for m = 0; used[m]; m++ {
				}
			}
			acl.MappedLUNs = append(acl.MappedLUNs, MappedLUN{Index: m, TPGLUN: idx})
			t.sh.info("Created LUN %d->%d mapping in node ACL %s", idx, m, acl.WWN)
		}
	}
	return nil, nil
}

func (t *tcli) aclsNode(parent *csNode, g func() *TPG) *csNode {
	n := t.node("acls", parent)
	n.summary = func() (string, csHealth) { return fmt.Sprintf("ACLs: %d", len(g().NodeACLs)), healthNone }
	aclPath := func(wwn string) string {
		tp := g()
		return fmt.Sprintf("%s/iscsi/%s/tpgt_%d/acls/%s", configfsTarget, parent.parent.name, tp.Tag, wwn)
	}
	find := func(wwn string) *NodeACL {
		tp := g()
		for i := range tp.NodeACLs {
			if tp.NodeACLs[i].WWN == wwn {
				return &tp.NodeACLs[i]
			}
		}
		return nil
	}
	n.kids = func(n *csNode) []*csNode {
		var out []*csNode
		for _, a := range g().NodeACLs {
			out = append(out, t.aclNode(n, g, a.WWN))
		}
		return out
	}
	n.cmds["create"] = &csCmd{args: []string{"wwn", "add_mapped_luns"}, nreq: 1, run: func(c *csCall) (*csNode, error) {
		wwn, err := normalizeWWN(c.args["wwn"])
		if err != nil {
			return nil, err
		}
		if find(wwn) != nil {
			return nil, csError("This NodeACL already exists in configFS")
		}
		tp := g()
		acl := NodeACL{WWN: wwn, Auth: defaultAuth()}
		t.sh.info("Created Node ACL for %s", wwn)
		addMapped := t.m.prefs["auto_add_mapped_luns"] == "true"
		if v, ok := c.arg("add_mapped_luns"); ok {
			addMapped = isTrue(v)
		}
		if addMapped {
			for _, l := range tp.LUNs {
				acl.MappedLUNs = append(acl.MappedLUNs, MappedLUN{Index: l.Index, TPGLUN: l.Index})
				t.sh.info("Created mapped LUN %d.", l.Index)
			}
		}
		tp.NodeACLs = append(tp.NodeACLs, acl)
		return nil, nil
	}}
	n.cmds["delete"] = &csCmd{args: []string{"wwn"}, nreq: 1, run: func(c *csCall) (*csNode, error) {
		wwn := strings.ToLower(c.args["wwn"])
		if find(wwn) == nil {
			return nil, csError("No such NodeACL in configfs: " + aclPath(wwn))
		}
		tp := g()
		var keep []NodeACL
		for _, a := range tp.NodeACLs {
			if a.WWN != wwn {
				keep = append(keep, a)
			}
		}
		tp.NodeACLs = keep
		t.sh.info("Deleted Node ACL %s.", c.args["wwn"])
		return nil, nil
	}}
	return n
}

func (t *tcli) aclNode(parent *csNode, g func() *TPG, wwn string) *csNode {
	n := t.node(wwn, parent)
	acl := func() *NodeACL {
		tp := g()
		for i := range tp.NodeACLs {
			if tp.NodeACLs[i].WWN == wwn {
				return &tp.NodeACLs[i]
			}
		}
		return nil
	}
	n.summary = func() (string, csHealth) { return fmt.Sprintf("Mapped LUNs: %d", len(acl().MappedLUNs)), healthNone }
	n.kids = func(n *csNode) []*csNode {
		var out []*csNode
		for _, ml := range acl().MappedLUNs {
			mn := t.node(fmt.Sprintf("mapped_lun%d", ml.Index), n)
			l := ml
			mn.summary = func() (string, csHealth) {
				mode := "rw"
				if l.WriteProtect {
					mode = "ro"
				}
				return fmt.Sprintf("lun%d (%s)", l.TPGLUN, mode), healthOK
			}
			out = append(out, mn)
		}
		return out
	}
	n.groups["auth"] = mapGroup(func() map[string]string { return acl().Auth }, nil)
	n.cmds["create"] = &csCmd{args: []string{"mapped_lun", "tpg_lun_or_backstore", "write_protect"}, nreq: 2, run: func(c *csCall) (*csNode, error) {
		m, err := strconv.Atoi(c.args["mapped_lun"])
		if err != nil {
			return nil, csError("mapped_lun must be an integer")
		}
		l, err := strconv.Atoi(strings.TrimPrefix(strings.ToLower(c.args["tpg_lun_or_backstore"]), "lun"))
		exists := false
		for _, x := range g().LUNs {
			exists = exists || (err == nil && x.Index == l)
		}
		if !exists {
			return nil, csError("LUN, storage object, or path not valid")
		}
		a := acl()
		for _, x := range a.MappedLUNs {
			if x.Index == m {
				return nil, csError("This MappedLUN already exists in configFS")
			}
		}
		wp, _ := c.arg("write_protect")
		a.MappedLUNs = append(a.MappedLUNs, MappedLUN{Index: m, TPGLUN: l, WriteProtect: isTrue(wp)})
		t.sh.info("Created Mapped LUN %d.", m)
		return nil, nil
	}}
	n.cmds["delete"] = &csCmd{args: []string{"mapped_lun"}, nreq: 1, run: func(c *csCall) (*csNode, error) {
		m, err := strconv.Atoi(c.args["mapped_lun"])
		a := acl()
		var keep []MappedLUN
		found := false
		for _, x := range a.MappedLUNs {
			if err == nil && x.Index == m {
				found = true
				continue
			}
			keep = append(keep, x)
		}
		if !found {
			return nil, csError(fmt.Sprintf("No such MappedLUN in configfs: %s/iscsi/%s/tpgt_%d/acls/%s/lun_%s",
				configfsTarget, parent.parent.parent.name, g().Tag, wwn, c.args["mapped_lun"]))
		}
		a.MappedLUNs = keep
		t.sh.info("Deleted Mapped LUN %d.", m)
		return nil, nil
	}}
	return n
}

func portalName(p Portal) string {
	if strings.Contains(p.IP, ":") {
		return fmt.Sprintf("[%s]:%d", p.IP, p.Port)
	}
	return fmt.Sprintf("%s:%d", p.IP, p.Port)
}

func (t *tcli) portalsNode(parent *csNode, g func() *TPG) *csNode {
	n := t.node("portals", parent)
	n.summary = func() (string, csHealth) { return fmt.Sprintf("Portals: %d", len(g().Portals)), healthNone }
	n.kids = func(n *csNode) []*csNode {
		var out []*csNode
		for _, p := range g().Portals {
			pn := t.node(portalName(p), n)
			pn.summary = func() (string, csHealth) { return "OK", healthOK }
			out = append(out, pn)
		}
		return out
	}
	parse := func(ip, port string) (Portal, error) {
		ip = strings.TrimSuffix(strings.TrimPrefix(ip, "["), "]")
		v, err := strconv.Atoi(port)
		if err != nil {
			return Portal{}, csError(fmt.Sprintf("Syntax error, '%s' is not a NUMBER.", port))
		}
		return Portal{IP: ip, Port: v}, nil
	}
	n.cmds["create"] = &csCmd{args: []string{"ip_address", "ip_port"}, run: func(c *csCall) (*csNode, error) {
		ip, ok := c.arg("ip_address")
		if !ok {
			ip = defaultPortalIP
		}
		port, ok := c.arg("ip_port")
		if !ok {
			port = strconv.Itoa(defaultPortalPort)
		}
		p, err := parse(ip, port)
		if err != nil {
			return nil, err
		}
		if p.Port == defaultPortalPort {
			t.sh.info("Using default IP port %d", p.Port)
		}
		if p.IP == defaultPortalIP {
			t.sh.info("Binding to INADDR_ANY (%s)", defaultPortalIP)
		}
		tp := g()
		for _, x := range tp.Portals {
			if x == p {
				return nil, csError("This NetworkPortal already exists in configFS")
			}
		}
		tp.Portals = append(tp.Portals, p)
		t.sh.info("Created network portal %s:%d.", ip, p.Port)
		return nil, nil
	}}
	n.cmds["delete"] = &csCmd{args: []string{"ip_address", "ip_port"}, nreq: 2, run: func(c *csCall) (*csNode, error) {
		p, err := parse(c.args["ip_address"], c.args["ip_port"])
		if err != nil {
			return nil, err
		}
		tp := g()
		for i, x := range tp.Portals {
			if x == p {
				tp.Portals = append(tp.Portals[:i], tp.Portals[i+1:]...)
				t.sh.info("Deleted network portal %s:%s", c.args["ip_address"], c.args["ip_port"])
				return nil, nil
			}
		}
		return nil, csError(fmt.Sprintf("No such NetworkPortal in configfs: %s/iscsi/%s/tpgt_%d/np/%s", configfsTarget, parent.parent.name, tp.Tag, portalName(p)))
	}}
	return n
}
