package zfsssh

import (
	"fmt"
	"strconv"
	"strings"
)

// nvmetcli's /ports (addresses and the subsystems they export) and /hosts.

func (n *ncli) portsNode(parent *csNode) *csNode {
	nd := n.node("ports", parent)
	nd.kids = func(p *csNode) []*csNode {
		var out []*csNode
		for _, port := range n.m.st.Ports {
			out = append(out, n.portNode(p, port.ID))
		}
		return out
	}
	parseID := func(c *csCall) (int, error) {
		s, ok := c.arg("portid")
		if !ok {
			return 0, csCrash{exc: "TypeError: int() argument must be a string, a bytes-like object or a real number, not 'NoneType'"}
		}
		v, err := strconv.Atoi(s)
		if err != nil {
			return 0, csCrash{exc: fmt.Sprintf("ValueError: invalid literal for int() with base 10: '%s'", s)}
		}
		return v, nil
	}
	nd.cmds["create"] = &csCmd{args: []string{"portid"}, run: func(c *csCall) (*csNode, error) {
		id, err := parseID(c)
		if err != nil {
			return nil, err
		}
		if n.m.port(id) != nil {
			return nil, csError("This Port already exists in configFS")
		}
		n.m.st.Ports = append(n.m.st.Ports, NVMetPort{ID: id, Adrfam: "", Treq: defaultTreq})
		return nil, nil
	}}
	nd.cmds["delete"] = &csCmd{args: []string{"portid"}, nreq: 1, run: func(c *csCall) (*csNode, error) {
		id, err := parseID(c)
		if err != nil {
			return nil, err
		}
		if n.m.port(id) == nil {
			return nil, csError("No such Port in configfs: " + cfsPath("ports", strconv.Itoa(id)))
		}
		var keep []NVMetPort
		for _, p := range n.m.st.Ports {
			if p.ID != id {
				keep = append(keep, p)
			}
		}
		n.m.st.Ports = keep
		return nil, nil
	}}
	return nd
}

var (
	validTrtype = map[string]bool{"rdma": true, "fc": true, "tcp": true, "loop": true}
	validAdrfam = map[string]bool{"ipv4": true, "ipv6": true, "ib": true, "fc": true, "loop": true, "pcie": true}
)

func (n *ncli) portNode(parent *csNode, id int) *csNode {
	nd := n.node(strconv.Itoa(id), parent)
	port := func() *NVMetPort { return n.m.port(id) }
	nd.summary = func() (string, csHealth) {
		p := port()
		s := fmt.Sprintf("trtype=%s, traddr=%s", p.Trtype, p.Traddr)
		if p.Trsvcid != "" && p.Trsvcid != "none" {
			s += ", trsvcid=" + p.Trsvcid
		}
		h := healthNone
		if len(p.Subsystems) > 0 {
			h = healthOK
		}
		return s, h
	}
	nd.kids = func(p *csNode) []*csNode { return []*csNode{n.node("referrals", p), n.portSubsystemsNode(p, port)} }
	fields := func(p *NVMetPort) map[string]*string {
		return map[string]*string{"adrfam": &p.Adrfam, "traddr": &p.Traddr, "treq": &p.Treq, "trsvcid": &p.Trsvcid, "trtype": &p.Trtype}
	}
	nd.groups["addr"] = &csGroup{
		params:   func() []string { return []string{"adrfam", "traddr", "treq", "trsvcid", "trtype"} },
		writable: func(string) bool { return true },
		get:      func(k string) string { return *fields(port())[k] },
		set: func(k, v string) error {
			p := port()
			attr := cfsPath("ports", strconv.Itoa(id), "addr_"+k)
			if len(p.Subsystems) > 0 {
				// The kernel refuses address changes on an enabled port.
				return csError(fmt.Sprintf("Cannot set attribute %s: [Errno 13] Permission denied", attr))
			}
			if (k == "trtype" && !validTrtype[v]) || (k == "adrfam" && !validAdrfam[v]) {
				return csError(fmt.Sprintf("Cannot set attribute %s: [Errno 22] Invalid argument", attr))
			}
			*fields(p)[k] = v
			return nil
		},
	}
	nd.groups["param"] = &csGroup{
		params:   func() []string { return []string{"inline_data_size", "pi_enable"} },
		writable: func(string) bool { return true },
		get: func(k string) string {
			return map[string]string{"inline_data_size": "-1", "pi_enable": "0"}[k]
		},
		set: func(k, _ string) error {
			return csError(fmt.Sprintf("Cannot set attribute %s: [Errno 13] Permission denied", cfsPath("ports", strconv.Itoa(id), "param_"+k)))
		},
	}
	return nd
}

func (n *ncli) portSubsystemsNode(parent *csNode, port func() *NVMetPort) *csNode {
	nd := n.node("subsystems", parent)
	id := parent.name
	nd.kids = func(p *csNode) []*csNode {
		var out []*csNode
		for _, s := range port().Subsystems {
			out = append(out, n.node(s, p))
		}
		return out
	}
	nd.cmds["create"] = &csCmd{args: []string{"nqn"}, nreq: 1, run: func(c *csCall) (*csNode, error) {
		nqn := c.args["nqn"]
		p := port()
		link := fmt.Sprintf("'%s' -> '%s'", cfsPath("subsystems", nqn), cfsPath("ports", id, "subsystems", nqn))
		switch {
		case n.m.subsystem(nqn) == nil:
			return nil, csError(fmt.Sprintf("Could not symlink %s in configFS: [Errno 2] No such file or directory: %s", nqn, link))
		case contains(p.Subsystems, nqn):
			return nil, csError(fmt.Sprintf("Could not symlink %s in configFS: [Errno 17] File exists: %s", nqn, link))
		case p.Trtype == "" || p.Adrfam == "":
			// Enabling a port whose address is incomplete fails in the kernel.
			return nil, csError(fmt.Sprintf("Could not symlink %s in configFS: [Errno 22] Invalid argument: %s", nqn, link))
		}
		p.Subsystems = append(p.Subsystems, nqn)
		return nil, nil
	}}
	nd.cmds["delete"] = &csCmd{args: []string{"nqn"}, nreq: 1, run: func(c *csCall) (*csNode, error) {
		nqn := c.args["nqn"]
		p := port()
		if !contains(p.Subsystems, nqn) {
			return nil, csError(fmt.Sprintf("Could not unlink %s in configFS: [Errno 2] No such file or directory: '%s'", nqn, cfsPath("ports", id, "subsystems", nqn)))
		}
		p.Subsystems = remove(p.Subsystems, nqn)
		return nil, nil
	}}
	return nd
}

func (n *ncli) hostsNode(parent *csNode) *csNode {
	nd := n.node("hosts", parent)
	nd.kids = func(p *csNode) []*csNode {
		var out []*csNode
		for _, h := range n.m.st.Hosts {
			out = append(out, n.node(h, p))
		}
		return out
	}
	nd.cmds["create"] = &csCmd{args: []string{"nqn"}, nreq: 1, run: func(c *csCall) (*csNode, error) {
		nqn := c.args["nqn"]
		if n.m.hasHost(nqn) {
			return nil, csError("This Host already exists in configFS")
		}
		if len(nqn) > maxNQNLen || strings.Contains(nqn, "/") {
			return nil, csError("Could not create Host in configFS")
		}
		n.m.st.Hosts = append(n.m.st.Hosts, nqn)
		return nil, nil
	}}
	nd.cmds["delete"] = &csCmd{args: []string{"nqn"}, nreq: 1, run: func(c *csCall) (*csNode, error) {
		nqn := c.args["nqn"]
		if !n.m.hasHost(nqn) {
			return nil, csError("No such Host in configfs: " + cfsPath("hosts", nqn))
		}
		n.m.st.Hosts = remove(n.m.st.Hosts, nqn)
		delete(n.m.st.HostAuth, nqn)
		return nil, nil
	}}
	return nd
}
