package zfsssh

import (
	"fmt"
	"strconv"
	"strings"
)

// nvmetcli's /subsystems: subsystems, their namespaces and allowed hosts.

func (n *ncli) subsystemsNode(parent *csNode) *csNode {
	nd := n.node("subsystems", parent)
	nd.kids = func(p *csNode) []*csNode {
		var out []*csNode
		for _, s := range n.m.st.Subsystems {
			out = append(out, n.subsystemNode(p, s.NQN))
		}
		return out
	}
	nd.cmds["create"] = &csCmd{args: []string{"nqn"}, run: func(c *csCall) (*csNode, error) {
		nqn, ok := c.arg("nqn")
		if !ok {
			nqn = "nqn.2014-08.org.nvmexpress:NVMf:uuid:" + unitSerial()
		}
		if n.m.subsystem(nqn) != nil {
			return nil, csError("This Subsystem already exists in configFS")
		}
		if len(nqn) > maxNQNLen || nqn == discoveryNQN || strings.Contains(nqn, "/") {
			return nil, csError("Could not create Subsystem in configFS")
		}
		n.m.st.Subsystems = append(n.m.st.Subsystems, n.m.newSubsystem(nqn))
		return nil, nil
	}}
	nd.cmds["delete"] = &csCmd{args: []string{"nqn"}, nreq: 1, run: func(c *csCall) (*csNode, error) {
		nqn := c.args["nqn"]
		if n.m.subsystem(nqn) == nil {
			return nil, csError("No such Subsystem in configfs: " + cfsPath("subsystems", nqn))
		}
		var keep []NVMetSubsystem
		for _, s := range n.m.st.Subsystems {
			if s.NQN != nqn {
				keep = append(keep, s)
			}
		}
		n.m.st.Subsystems = keep
		return nil, nil
	}}
	return nd
}

func (n *ncli) subsystemNode(parent *csNode, nqn string) *csNode {
	nd := n.node(nqn, parent)
	sub := func() *NVMetSubsystem { return n.m.subsystem(nqn) }
	nd.summary = func() (string, csHealth) {
		a := sub().Attr
		return fmt.Sprintf("version=%s, allow_any=%s, serial=%s", a["version"], a["allow_any_host"], a["serial"]), healthOK
	}
	nd.kids = func(p *csNode) []*csNode { return []*csNode{n.namespacesNode(p, sub), n.allowedHostsNode(p, sub)} }
	nd.groups["attr"] = &csGroup{
		params:   func() []string { return sortedKeys(sub().Attr) },
		writable: func(string) bool { return true },
		get:      func(k string) string { return sub().Attr[k] },
		set: func(k, v string) error {
			s := sub()
			invalid := false
			switch k {
			case "allow_any_host":
				invalid = (v != "0" && v != "1") || (v == "1" && len(s.AllowedHosts) > 0)
			case "cntlid_min", "cntlid_max", "qid_max", "pi_enable":
				_, err := strconv.Atoi(v)
				invalid = err != nil
			}
			if invalid {
				return csError(fmt.Sprintf("Cannot set attribute %s: [Errno 22] Invalid argument", cfsPath("subsystems", nqn, "attr_"+k)))
			}
			s.Attr[k] = v
			return nil
		},
	}
	return nd
}

func (n *ncli) namespacesNode(parent *csNode, sub func() *NVMetSubsystem) *csNode {
	nd := n.node("namespaces", parent)
	nqn := parent.name
	nd.kids = func(p *csNode) []*csNode {
		var out []*csNode
		for _, ns := range sub().Namespaces {
			out = append(out, n.namespaceNode(p, sub, ns.NSID))
		}
		return out
	}
	parseNSID := func(s string) (int, error) {
		v, err := strconv.Atoi(s)
		if err != nil {
			return 0, csCrash{exc: fmt.Sprintf("ValueError: invalid literal for int() with base 10: '%s'", s)}
		}
		return v, nil
	}
	nd.cmds["create"] = &csCmd{args: []string{"nsid"}, run: func(c *csCall) (*csNode, error) {
		s := sub()
		var nsid int
		if v, ok := c.arg("nsid"); ok {
			var err error
			if nsid, err = parseNSID(v); err != nil {
				return nil, err
			}
			if nsid < 1 || nsid > maxNSID {
				return nil, csError(fmt.Sprintf("NSID must be 1 to %d", maxNSID))
			}
		} else {
			for nsid = 1; nsid <= maxNSID && s.namespace(nsid) != nil; nsid++ {
			}
			if nsid > maxNSID {
				return nil, csError(fmt.Sprintf("All NSIDs 1-%d in use", maxNSID))
			}
		}
		if s.namespace(nsid) != nil {
			return nil, csError("This Namespace already exists in configFS")
		}
		s.Namespaces = append(s.Namespaces, NVMetNamespace{NSID: nsid, UUID: unitSerial(), NGUID: zeroNGUID, ANAGroup: 1})
		return nil, nil
	}}
	nd.cmds["delete"] = &csCmd{args: []string{"nsid"}, nreq: 1, run: func(c *csCall) (*csNode, error) {
		nsid, err := parseNSID(c.args["nsid"])
		if err != nil {
			return nil, err
		}
		s := sub()
		if s.namespace(nsid) == nil {
			return nil, csError("No such Namespace in configfs: " + cfsPath("subsystems", nqn, "namespaces", strconv.Itoa(nsid)))
		}
		var keep []NVMetNamespace
		for _, ns := range s.Namespaces {
			if ns.NSID != nsid {
				keep = append(keep, ns)
			}
		}
		s.Namespaces = keep
		return nil, nil
	}}
	return nd
}

func (n *ncli) namespaceNode(parent *csNode, sub func() *NVMetSubsystem, nsid int) *csNode {
	nd := n.node(strconv.Itoa(nsid), parent)
	ns := func() *NVMetNamespace { return sub().namespace(nsid) }
	nd.summary = func() (string, csHealth) {
		x := ns()
		state, h := "disabled", healthNone
		if x.Enabled {
			state, h = "enabled", healthOK
		}
		return fmt.Sprintf("path=%s, uuid=%s, grpid=%d, %s", x.Path, x.UUID, x.ANAGroup, state), h
	}
	nd.groups["device"] = &csGroup{
		params:   func() []string { return []string{"nguid", "path", "uuid"} },
		writable: func(string) bool { return true },
		get: func(k string) string {
			x := ns()
			return map[string]string{"nguid": x.NGUID, "path": x.Path, "uuid": x.UUID}[k]
		},
		set: func(k, v string) error {
			x := ns()
			if x.Enabled {
				return csError("Cannot set attribute while Namespace is enabled")
			}
			switch k {
			case "path":
				x.Path = v
			case "uuid":
				x.UUID = v
			case "nguid":
				x.NGUID = v
			}
			return nil
		},
	}
	nd.groups["ana"] = &csGroup{
		params:   func() []string { return []string{"grpid"} },
		writable: func(string) bool { return true },
		get:      func(string) string { return strconv.Itoa(ns().ANAGroup) },
		set: func(_, v string) error {
			g, err := strconv.Atoi(v)
			if err != nil || g < 1 {
				return csError(fmt.Sprintf("Cannot set attribute %s: [Errno 22] Invalid argument", cfsPath("subsystems", parent.parent.name, "namespaces", strconv.Itoa(nsid), "ana_grpid")))
			}
			ns().ANAGroup = g
			return nil
		},
	}
	nd.cmds["enable"] = &csCmd{run: func(*csCall) (*csNode, error) {
		x := ns()
		if x.Enabled {
			n.sh.info("The Namespace is already enabled.")
			return nil, nil
		}
		if !n.deviceUsable(x.Path) {
			return nil, csError("The Namespace could not be enabled.")
		}
		x.Enabled = true
		n.sh.info("The Namespace has been enabled.")
		return nil, nil
	}}
	nd.cmds["disable"] = &csCmd{run: func(*csCall) (*csNode, error) {
		x := ns()
		if !x.Enabled {
			n.sh.info("The Namespace is already disabled.")
			return nil, nil
		}
		x.Enabled = false
		n.sh.info("The Namespace has been disabled.")
		return nil, nil
	}}
	return nd
}

// deviceUsable is what the kernel needs to enable a namespace: a block
// device (a zvol here) or a regular file.
func (n *ncli) deviceUsable(p string) bool {
	if p == "" {
		return false
	}
	fi, err := n.p.env.srv.fs.stat(clean("/", p))
	return err == nil && (fi.kind == kindBlock || fi.kind == kindFile)
}

func (n *ncli) allowedHostsNode(parent *csNode, sub func() *NVMetSubsystem) *csNode {
	nd := n.node("allowed_hosts", parent)
	nqn := parent.name
	nd.kids = func(p *csNode) []*csNode {
		var out []*csNode
		for _, h := range sub().AllowedHosts {
			out = append(out, n.node(h, p))
		}
		return out
	}
	nd.cmds["create"] = &csCmd{args: []string{"nqn"}, nreq: 1, run: func(c *csCall) (*csNode, error) {
		host := c.args["nqn"]
		s := sub()
		link := fmt.Sprintf("'%s' -> '%s'", cfsPath("hosts", host), cfsPath("subsystems", nqn, "allowed_hosts", host))
		switch {
		case !n.m.hasHost(host):
			return nil, csError(fmt.Sprintf("Could not symlink %s in configFS: [Errno 2] No such file or directory: %s", host, link))
		case contains(s.AllowedHosts, host):
			return nil, csError(fmt.Sprintf("Could not symlink %s in configFS: [Errno 17] File exists: %s", host, link))
		case s.Attr["allow_any_host"] == "1":
			return nil, csError(fmt.Sprintf("Could not symlink %s in configFS: [Errno 22] Invalid argument: %s", host, link))
		}
		s.AllowedHosts = append(s.AllowedHosts, host)
		return nil, nil
	}}
	nd.cmds["delete"] = &csCmd{args: []string{"nqn"}, nreq: 1, run: func(c *csCall) (*csNode, error) {
		host := c.args["nqn"]
		s := sub()
		if !contains(s.AllowedHosts, host) {
			return nil, csError(fmt.Sprintf("Could not unlink %s in configFS: [Errno 2] No such file or directory: '%s'", host, cfsPath("subsystems", nqn, "allowed_hosts", host)))
		}
		s.AllowedHosts = remove(s.AllowedHosts, host)
		return nil, nil
	}}
	return nd
}
