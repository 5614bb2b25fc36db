package zfsssh

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// nvmetcli over the nvmet model. Its messages are nvmetcli's and, for
// writes the kernel refuses, Python's OSError wording on the configfs path.

type ncli struct {
	p  *proc
	m  *nvmetModel
	sh *csShell
}

func nvmetcliCmd(p *proc, argv []string) int {
	srv := p.env.srv
	c := &srv.stats
	defer runGuard(&c.nvmetcliRuns, &c.nvmetcliOverlaps, &c.nvmetcliActive)()
	if !p.root {
		p.printf("%s: must run as root.\n", p.path)
		return 255
	}
	if srv.faults.takeRanOut() {
		ranOutOfInput(p, "nvmetcli")
		return 1
	}
	n := &ncli{p: p, m: srv.nvmet}
	n.sh = &csShell{p: p, lock: &n.m.mu, build: n.rootNode, commit: func() { n.m.saveLocked() },
		prefs: n.m.prefs, cur: "/", out: p.std.out, errw: p.std.err}
	args := argv[1:]
	if len(args) > 0 {
		switch args[0] {
		case "--help":
			n.usage()
			return 255
		case "save", "restore", "clear":
			if len(args) > 2 {
				n.usage()
				return 255
			}
			file := ""
			if len(args) == 2 {
				file = args[1]
			}
			return n.tool(args[0], file)
		}
		if err := n.sh.runLine(strings.Join(args, " ")); err != nil {
			// Outside the interactive loop nothing catches the exception.
			exc := err.Error()
			if _, ok := err.(csCrash); !ok {
				exc = "configshell.shell.ExecutionError: " + exc
			}
			crash(p.std.err, p.path, exc)
			return 1
		}
		return 0
	}
	if err := n.sh.interactive(p.std.in); err != nil {
		crash(p.std.err, p.path, err.Error())
		return 1
	}
	return 0
}

func (n *ncli) usage() {
	t := n.p.path
	fmt.Fprintf(n.p.std.out, "syntax: %s save [file_to_save_to]\n        %s restore [file_to_restore_from]\n        %s clear\n        %s --help  (Print this information)\n        %s <CMD>   (Run shell command and exit)\n", t, t, t, t, t)
}

// tool runs "nvmetcli save|restore|clear [file]".
func (n *ncli) tool(cmd, file string) int {
	n.m.mu.Lock()
	defer n.m.mu.Unlock()
	defer n.m.saveLocked()
	switch cmd {
	case "save":
		if err := n.saveconfig(file); err != nil {
			crash(n.p.std.err, n.p.path, "OSError: "+err.Error())
			return 1
		}
	case "restore":
		if file == "" {
			file = nvmetSaveFile
		}
		data, err := n.p.env.srv.fs.readFile(clean("/", file))
		if err != nil {
			fmt.Fprintf(n.p.std.out, "No saved config file at %s, ok, exiting\n", file)
			return 0
		}
		var cfg map[string]any
		if err := json.Unmarshal(data, &cfg); err != nil {
			fmt.Fprintf(n.p.std.out, "Error processing config file at %s, error %v, exiting\n", file, err)
			return 1
		}
		for _, e := range n.m.restore(cfg) {
			fmt.Fprintln(n.p.std.out, e)
		}
	case "clear":
		n.m.st = NVMetState{}
	}
	return 0
}

func (n *ncli) saveconfig(file string) error {
	if file == "" {
		file = nvmetSaveFile
	}
	if strings.HasPrefix(file, "~/") {
		file = "/root/" + file[2:]
	}
	data, err := n.m.dumpJSON()
	if err != nil {
		return err
	}
	target := clean("/", file)
	v := n.p.env.srv.fs
	if _, ok := v.host.HostPath(target); !ok {
		v.ensureDir(pathDir(target), 0o755, 0)
	}
	return v.writeFile(target, data)
}

func (n *ncli) node(name string, parent *csNode) *csNode {
	nd := &csNode{name: name, parent: parent, cmds: map[string]*csCmd{}, groups: map[string]*csGroup{}}
	nd.cmds["saveconfig"] = &csCmd{args: []string{"savefile"}, run: func(c *csCall) (*csNode, error) {
		f, _ := c.arg("savefile")
		if err := n.saveconfig(f); err != nil {
			return nil, csCrash{exc: "OSError: " + err.Error()}
		}
		return nil, nil
	}}
	return nd
}

func (n *ncli) rootNode() *csNode {
	root := n.node("/", nil)
	root.summary = func() (string, csHealth) { return "", healthOK }
	root.kids = func(r *csNode) []*csNode { return []*csNode{n.subsystemsNode(r), n.portsNode(r), n.hostsNode(r)} }
	root.cmds["restoreconfig"] = &csCmd{args: []string{"savefile", "clear_existing"}, run: func(c *csCall) (*csNode, error) {
		file, _ := c.arg("savefile")
		if file == "" {
			file = nvmetSaveFile
		}
		data, err := n.p.env.srv.fs.readFile(clean("/", file))
		if err != nil {
			return nil, csCrash{exc: fmt.Sprintf("FileNotFoundError: [Errno 2] No such file or directory: '%s'", file)}
		}
		var cfg map[string]any
		if err := json.Unmarshal(data, &cfg); err != nil {
			return nil, csCrash{exc: "json.decoder.JSONDecodeError: " + err.Error()}
		}
		ce, _ := c.arg("clear_existing")
		if !isTrue(ce) && len(n.m.st.Subsystems) > 0 {
			return nil, csError(nvmetClearFail)
		}
		if errs := n.m.restore(cfg); len(errs) > 0 {
			return nil, csError(fmt.Sprintf("Configuration restored, %d errors:\n%s", len(errs), strings.Join(errs, "\n")))
		}
		return nil, nil
	}}
	return root
}

func cfsPath(parts ...string) string { return configfsNVMet + "/" + strings.Join(parts, "/") }

// --- subsystems ---

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
		nsid := 0
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

// --- ports ---

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

// --- hosts ---

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
		return nil, nil
	}}
	return nd
}
