package zfsssh

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// targetcli (targetcli-fb 2.1.53, as in Debian 12) over the LIO model. The
// messages are targetcli-fb's and rtslib-fb's; "/sys/kernel/config/target"
// appears in them because that is where the real objects live.

const (
	targetcliVersion   = "2.1.53"
	targetcliSaveFile  = "/etc/target/saveconfig.json"
	configfsTarget     = "/sys/kernel/config/target"
	defaultPortalIP    = "::0"
	defaultPortalPort  = 3260
	maxIQNLen          = 223
	targetcliBannerFmt = "targetcli shell version %s\nCopyright 2011-2013 by Datera, Inc and others.\nFor help on commands, type 'help'.\n\n"
)

type tcli struct {
	p  *proc
	m  *lioModel
	sh *csShell
}

func targetcliCmd(p *proc, argv []string) int {
	srv := p.env.srv
	c := &srv.stats
	defer runGuard(&c.targetcliRuns, &c.targetcliOverlaps, &c.targetcliActive)()
	if srv.faults.takeRanOut() {
		ranOutOfInput(p, "targetcli")
		return 1
	}
	if !p.root {
		// targetcli-fb takes /var/run/targetcli.lock before anything else.
		fmt.Fprintf(p.std.out, "opening lockfile failed: [Errno 13] Permission denied: '/var/run/targetcli.lock'\n")
		return 1
	}
	t := &tcli{p: p, m: srv.lio}
	t.sh = &csShell{p: p, lock: &t.m.mu, build: t.rootNode, commit: func() { t.m.saveLocked() },
		prefs: t.m.prefs, cur: "/", out: p.std.out, errw: p.std.err}
	if args := argv[1:]; len(args) > 0 {
		switch args[0] {
		case "help", "--help", "-h":
			p.printf("Usage: %s [--version|--help|CMD|--disable-daemon]\n  --version\t\tPrint version\n  --help\t\tPrint this information\n  CMD\t\t\tRun targetcli shell command and exit\n  <nothing>\t\tEnter configuration shell\n  --disable-daemon\tTurn-off the global auto use daemon flag\nSee man page for more information.\n", p.path)
			return 255
		case "version", "--version", "-v":
			p.printf("%s version %s\n", p.path, targetcliVersion)
			return 0
		}
		if err := t.sh.runLine(strings.Join(args, " ")); err != nil {
			if c, ok := err.(csCrash); ok {
				crash(p.std.err, p.path, c.exc)
			} else {
				fmt.Fprintln(p.std.err, err)
			}
			return 1
		}
		return 0
	}
	fmt.Fprintf(p.std.out, targetcliBannerFmt, targetcliVersion)
	if err := t.sh.interactive(p.std.in); err != nil {
		crash(p.std.err, p.path, err.Error())
		return 1
	}
	t.m.mu.Lock()
	autosave := t.m.prefs["auto_save_on_exit"] == "true"
	t.m.mu.Unlock()
	if autosave && p.ctx.Err() == nil {
		t.sh.info("Global pref auto_save_on_exit=true")
		t.m.mu.Lock()
		err := t.saveconfig(targetcliSaveFile)
		t.m.mu.Unlock()
		if err != nil {
			fmt.Fprintln(p.std.err, err)
		}
	}
	return 0
}

// ranOutOfInput is configshell dying on an empty preferences file, which a
// concurrent run was rewriting: the failure drivers retry on.
func ranOutOfInput(p *proc, tool string) {
	shellFile := "/usr/lib/python3/dist-packages/targetcli/targetcli_shell.py\", line 286, in main\n    shell = TargetCLI(getenv(\"TARGETCLI_HOME\", '~/.targetcli'))"
	if tool == "nvmetcli" {
		shellFile = p.path + "\", line 702, in main\n    shell = configshell.ConfigShell('~/.nvmetcli')"
	}
	fmt.Fprintf(p.std.err, "Traceback (most recent call last):\n  File \"%s\", line 8, in <module>\n    sys.exit(main())\n             ^^^^^^\n  File \"%s\n"+
		"  File \"/usr/lib/python3/dist-packages/configshell_fb/shell.py\", line 139, in __init__\n    self.prefs.load()\n"+
		"  File \"/usr/lib/python3/dist-packages/configshell_fb/prefs.py\", line 147, in load\n    self._prefs = pickle.load(fsock)\n                  ^^^^^^^^^^^^^^^^^^\n"+
		"EOFError: Ran out of input\n", p.path, shellFile)
}

func (t *tcli) node(name string, parent *csNode) *csNode {
	return &csNode{name: name, parent: parent, cmds: map[string]*csCmd{}, groups: map[string]*csGroup{}}
}

func (t *tcli) rootNode() *csNode {
	root := t.node("/", nil)
	root.name = "/"
	root.cmds["saveconfig"] = &csCmd{args: []string{"savefile"}, run: func(c *csCall) (*csNode, error) {
		f, _ := c.arg("savefile")
		return nil, t.saveconfig(f)
	}}
	root.cmds["restoreconfig"] = &csCmd{args: []string{"savefile", "clear_existing", "target", "storage_object"}, run: t.restoreconfig}
	root.cmds["clearconfig"] = &csCmd{args: []string{"confirm"}, run: func(c *csCall) (*csNode, error) {
		if v, _ := c.arg("confirm"); !isTrue(v) {
			return nil, csError("As a precaution, confirm=True needs to be set")
		}
		t.m.st = LIOState{}
		t.sh.info("All configuration cleared")
		return nil, nil
	}}
	root.cmds["version"] = &csCmd{run: func(*csCall) (*csNode, error) {
		t.sh.info("targetcli version %s", targetcliVersion)
		return nil, nil
	}}
	root.kids = func(n *csNode) []*csNode { return []*csNode{t.backstoresNode(n), t.iscsiNode(n)} }
	return root
}

func isTrue(v string) bool {
	switch strings.ToLower(v) {
	case "true", "yes", "1", "y":
		return true
	}
	return false
}

// --- backstores ---

func (t *tcli) backstoresNode(parent *csNode) *csNode {
	n := t.node("backstores", parent)
	n.kids = func(n *csNode) []*csNode { return []*csNode{t.backstoreNode(n, "block"), t.backstoreNode(n, "fileio")} }
	return n
}

func (t *tcli) backstoreNode(parent *csNode, plugin string) *csNode {
	n := t.node(plugin, parent)
	n.summary = func() (string, csHealth) {
		return fmt.Sprintf("Storage Objects: %d", len(t.m.objects(plugin))), healthNone
	}
	n.kids = func(n *csNode) []*csNode {
		var out []*csNode
		for _, so := range t.m.objects(plugin) {
			out = append(out, t.soNode(n, plugin, so.Name))
		}
		return out
	}
	n.cmds["delete"] = &csCmd{args: []string{"name", "save"}, nreq: 1, run: func(c *csCall) (*csNode, error) {
		name := c.args["name"]
		if t.m.storageObject(plugin, name) == nil {
			return nil, csError(fmt.Sprintf("No storage object named %s.", name))
		}
		t.m.deleteStorageObject(plugin, name)
		t.sh.info("Deleted storage object %s.", name)
		return nil, nil
	}}
	if plugin == "block" {
		n.cmds["create"] = &csCmd{args: []string{"name", "dev", "readonly", "wwn", "exclusive"}, nreq: 2, run: t.createBlock}
	} else {
		n.cmds["create"] = &csCmd{args: []string{"name", "file_or_dev", "size", "write_back", "sparse", "wwn"}, nreq: 2, run: t.createFileio}
	}
	return n
}

func (t *tcli) soNode(parent *csNode, plugin, name string) *csNode {
	n := t.node(name, parent)
	n.summary = func() (string, csHealth) {
		so := t.m.storageObject(plugin, name)
		if so == nil {
			return "", healthNone
		}
		state, h := "deactivated", healthNone
		if t.m.inUse("/backstores/" + plugin + "/" + name) {
			state, h = "activated", healthOK
		}
		cache := "write-thru"
		if so.WriteBack {
			cache = "write-back"
		}
		return fmt.Sprintf("%s (%s) %s %s", so.Dev, humanBytes(so.Size), cache, state), h
	}
	n.groups["attribute"] = &csGroup{
		params: func() []string { return sortedKeys(t.m.storageObject(plugin, name).Attributes) },
		writable: func(k string) bool {
			return !roSOAttributes[k]
		},
		get: func(k string) string { return t.m.storageObject(plugin, name).Attributes[k] },
		set: func(k, v string) error {
			if _, err := strconv.Atoi(v); err != nil {
				return csError(fmt.Sprintf("Cannot set attribute %s: [Errno 22] Invalid argument", k))
			}
			t.m.storageObject(plugin, name).Attributes[k] = v
			return nil
		},
	}
	return n
}

// devInfo checks a device path: a zvol (block device) or a file.
func (t *tcli) devInfo(dev string) (fileInfo, error) {
	return t.p.env.srv.fs.stat(clean("/", dev))
}

func validSOName(name string) error {
	if strings.ContainsAny(name, "/ \t\n") {
		return csError("A storage object's name cannot contain  /, newline or spaces/tabs")
	}
	return nil
}

func (t *tcli) createBlock(c *csCall) (*csNode, error) {
	name, dev := c.args["name"], c.args["dev"]
	fi, err := t.devInfo(dev)
	if _, given := c.arg("readonly"); !given && err != nil {
		return nil, csError("Could not open " + dev)
	}
	if err := validSOName(name); err != nil {
		return nil, err
	}
	if t.m.storageObject("block", name) != nil {
		return nil, csError(fmt.Sprintf("Storage object block/%s exists", name))
	}
	if err != nil || fi.kind != kindBlock {
		return nil, csError(fmt.Sprintf("Device %s is not a TYPE_DISK block device", dev))
	}
	exclusive := true
	if v, ok := c.arg("exclusive"); ok {
		exclusive = isTrue(v)
	}
	if exclusive && t.m.storageObjectByDev(dev) != nil {
		// rtslib's message really has "{dev}" in it (a missing f-string).
		return nil, csError("Cannot configure StorageObject because device {dev} is already in use")
	}
	ro, _ := c.arg("readonly")
	wwn, ok := c.arg("wwn")
	if !ok {
		wwn = unitSerial()
	}
	t.m.st.StorageObjects = append(t.m.st.StorageObjects, StorageObject{Plugin: "block", Name: name, Dev: dev, Size: fi.size,
		WWN: wwn, Readonly: isTrue(ro), Attributes: defaultSOAttributes(fi.size)})
	t.sh.info("Created block storage object %s using %s.", name, dev)
	return t.afterCreate(c, name)
}

// afterCreate honours auto_cd_after_create.
func (t *tcli) afterCreate(c *csCall, child string) (*csNode, error) {
	if t.m.prefs["auto_cd_after_create"] != "true" {
		return nil, nil
	}
	n, err := c.node.get(child)
	if err == nil {
		t.sh.info("Entering new node %s", n.path())
	}
	return n, err
}

func (t *tcli) createFileio(c *csCall) (*csNode, error) {
	name, file := c.args["name"], c.args["file_or_dev"]
	if err := validSOName(name); err != nil {
		return nil, err
	}
	fi, err := t.devInfo(file)
	if err == nil {
		if so := t.m.storageObjectByDev(file); so != nil {
			return nil, csError(fmt.Sprintf("storage object for %s already exists: %s", file, so.Name))
		}
	}
	sizeArg, hasSize := c.arg("size")
	var size int64
	switch {
	case err == nil && fi.kind == kindBlock:
		if hasSize {
			t.sh.info("Block device, size parameter ignored")
		}
		t.sh.info("Note: block backstore preferred for best results")
		size = fi.size
	case err == nil && fi.kind == kindFile:
		if hasSize {
			t.sh.info("%s exists, using its size (%d bytes) instead", file, fi.size)
		}
		size = fi.size
	case err == nil:
		return nil, csError(fmt.Sprintf("Path %s exists but is not a file", file))
	default:
		if !hasSize {
			return nil, csError("Attempting to create file for new fileio backstore, need a size")
		}
		n, perr := humanToBytes(sizeArg)
		if perr != nil {
			return nil, csError(perr.Error())
		}
		w, cerr := t.p.env.srv.fs.create(clean("/", file), false, t.p.env.user, true, 0)
		if cerr != nil {
			return nil, csError("Could not open " + file)
		}
		w.Close()
		size = n
	}
	if t.m.storageObject("fileio", name) != nil {
		return nil, csError(fmt.Sprintf("Storage object fileio/%s exists", name))
	}
	wb := true
	if v, ok := c.arg("write_back"); ok {
		wb = isTrue(v)
	}
	wwn, ok := c.arg("wwn")
	if !ok {
		wwn = unitSerial()
	}
	t.m.st.StorageObjects = append(t.m.st.StorageObjects, StorageObject{Plugin: "fileio", Name: name, Dev: file, Size: size,
		WWN: wwn, WriteBack: wb, Attributes: defaultSOAttributes(size)})
	t.sh.info("Created fileio %s with size %d", name, size)
	return t.afterCreate(c, name)
}

var sizeRE = regexp.MustCompile(`^(\d+)\s*([kKmMgGtT]?)[bB]?$`)

// humanToBytes parses targetcli sizes: 1024, 10M, 1GB, 2T.
func humanToBytes(s string) (int64, error) {
	m := sizeRE.FindStringSubmatch(s)
	if m == nil {
		return 0, fmt.Errorf("Cannot interpret size, wrong format: %s", s)
	}
	n, _ := strconv.ParseInt(m[1], 10, 64)
	shift := map[string]uint{"": 0, "k": 10, "m": 20, "g": 30, "t": 40}[strings.ToLower(m[2])]
	return n << shift, nil
}

func humanBytes(n int64) string {
	v := float64(n)
	for _, u := range []string{"bytes", "KiB", "MiB", "GiB", "TiB"} {
		if v < 1024 || u == "TiB" {
			if u == "bytes" {
				return fmt.Sprintf("%d bytes", n)
			}
			return fmt.Sprintf("%.1f%s", v, u)
		}
		v /= 1024
	}
	return ""
}

// --- iSCSI ---

var (
	iqnRE = regexp.MustCompile(`^iqn\.[0-9]{4}-[0-1][0-9]\..*\..*`)
	naaRE = regexp.MustCompile(`^naa\.[125c-fC-F][0-9a-fA-F]{15}$`)
	euiRE = regexp.MustCompile(`^eui\.[0-9a-f]{16}$`)
)

// normalizeWWN is rtslib's normalize_wwn for the iSCSI fabric (iqn, naa, eui).
func normalizeWWN(wwn string) (string, error) {
	for _, typ := range []string{"iqn", "naa", "eui"} {
		w := strings.ToLower(strings.TrimSpace(wwn))
		if typ != "iqn" {
			w = strings.TrimPrefix(w, "0x")
			w = strings.NewReplacer("-", "", ":", "").Replace(w)
			if !strings.HasPrefix(w, "naa.") && !strings.HasPrefix(w, "eui.") && !strings.HasPrefix(w, "ib.") {
				w = typ + "." + w
			}
		}
		switch {
		case typ == "iqn" && iqnRE.MatchString(w) && !strings.ContainsAny(w, " _"):
			return w, nil
		case typ == "naa" && naaRE.MatchString(w), typ == "eui" && euiRE.MatchString(w):
			return w, nil
		}
	}
	return "", csError("WWN not valid as: iqn, naa, eui")
}

func (t *tcli) iscsiNode(parent *csNode) *csNode {
	n := t.node("iscsi", parent)
	n.summary = func() (string, csHealth) { return fmt.Sprintf("Targets: %d", len(t.m.st.Targets)), healthNone }
	n.kids = func(n *csNode) []*csNode {
		var out []*csNode
		for _, tg := range t.m.st.Targets {
			out = append(out, t.targetNode(n, tg.WWN))
		}
		return out
	}
	n.cmds["create"] = &csCmd{args: []string{"wwn"}, run: t.createTarget}
	n.cmds["delete"] = &csCmd{args: []string{"wwn"}, nreq: 1, run: func(c *csCall) (*csNode, error) {
		raw := c.args["wwn"]
		if strings.HasPrefix(raw, "naa.6") {
			raw = "naa.5" + raw[5:]
		}
		wwn, err := normalizeWWN(raw)
		if err != nil {
			return nil, err
		}
		if t.m.target(wwn) == nil {
			return nil, csError(fmt.Sprintf("No such Target in configfs: %s/iscsi/%s", configfsTarget, wwn))
		}
		var keep []ISCSITarget
		for _, tg := range t.m.st.Targets {
			if tg.WWN != wwn {
				keep = append(keep, tg)
			}
		}
		t.m.st.Targets = keep
		t.sh.info("Deleted Target %s.", c.args["wwn"])
		return nil, nil
	}}
	n.cmds["info"] = &csCmd{run: func(*csCall) (*csNode, error) {
		t.sh.info("Fabric module name: iscsi\nConfigFS path: %s/iscsi\nAllowed WWN types: iqn, naa, eui\nFabric module features: discovery_auth, acls, auth, nps, tpgts\nCorresponding kernel module: iscsi_target_mod", configfsTarget)
		return nil, nil
	}}
	return n
}

func (t *tcli) createTarget(c *csCall) (*csNode, error) {
	raw, ok := c.arg("wwn")
	var wwn string
	if !ok {
		wwn = fmt.Sprintf("iqn.2003-01.org.linux-iscsi.%s.x8664:sn.%s", strings.ToLower(t.p.env.srv.hostname), randomHex(12))
	} else {
		if strings.HasPrefix(raw, "naa.6") {
			raw = "naa.5" + raw[5:]
		}
		var err error
		if wwn, err = normalizeWWN(raw); err != nil {
			return nil, err
		}
	}
	if t.m.target(wwn) != nil {
		return nil, csError("This Target already exists in configFS")
	}
	if len(wwn) > maxIQNLen {
		// The kernel refuses the configfs directory (ISCSI_IQN_LEN is 224).
		return nil, csError(fmt.Sprintf("Could not create Target in configFS: [Errno 22] Invalid argument: '%s/iscsi/%s'", configfsTarget, wwn))
	}
	t.m.st.Targets = append(t.m.st.Targets, ISCSITarget{WWN: wwn})
	t.m.sortTargets()
	t.sh.info("Created target %s.", wwn)
	t.addTPG(t.m.target(wwn), 0)
	if t.m.prefs["auto_cd_after_create"] == "true" {
		n, err := c.node.get(wwn + "/tpg1")
		if err == nil {
			t.sh.info("Entering new node %s", n.path())
		}
		return n, err
	}
	return nil, nil
}

// addTPG creates a TPG (tag 0: the next free one) with targetcli's defaults.
func (t *tcli) addTPG(tg *ISCSITarget, tag int) error {
	if tag == 0 {
		for tag = 1; tg.tpg(tag) != nil; tag++ {
		}
	} else if tg.tpg(tag) != nil {
		return csError("This TPG already exists in configFS")
	}
	g := TPG{Tag: tag, Enable: t.m.prefs["auto_enable_tpgt"] == "true", Attributes: defaultTPGAttributes(),
		Auth: defaultAuth(), Parameters: defaultTPGParameters()}
	t.sh.info("Created TPG %d.", tag)
	if t.m.prefs["auto_add_default_portal"] == "true" {
		shared := false
		for _, other := range tg.TPGs {
			for _, p := range other.Portals {
				if p.IP == defaultPortalIP && p.Port == defaultPortalPort {
					shared = true
				}
			}
		}
		if shared {
			t.sh.info("Default portal not created, TPGs within a target cannot share ip:port.")
		} else {
			g.Portals = []Portal{{IP: defaultPortalIP, Port: defaultPortalPort}}
			t.sh.info("Global pref auto_add_default_portal=true")
			t.sh.info("Created default portal listening on all IPs (%s), port %d.", defaultPortalIP, defaultPortalPort)
		}
	}
	tg.TPGs = append(tg.TPGs, g)
	return nil
}

func (t *tcli) targetNode(parent *csNode, wwn string) *csNode {
	n := t.node(wwn, parent)
	tg := func() *ISCSITarget { return t.m.target(wwn) }
	n.summary = func() (string, csHealth) { return fmt.Sprintf("TPGs: %d", len(tg().TPGs)), healthNone }
	n.kids = func(n *csNode) []*csNode {
		var out []*csNode
		for _, g := range tg().TPGs {
			out = append(out, t.tpgNode(n, wwn, g.Tag))
		}
		return out
	}
	parseTag := func(s string) (int, error) {
		s = strings.TrimPrefix(s, "tpg")
		v, err := strconv.Atoi(s)
		if err != nil {
			return 0, csError("Tag argument must be a number.")
		}
		return v, nil
	}
	n.cmds["create"] = &csCmd{args: []string{"tag"}, run: func(c *csCall) (*csNode, error) {
		tag := 0
		if s, ok := c.arg("tag"); ok {
			var err error
			if tag, err = parseTag(s); err != nil {
				return nil, err
			}
		}
		return nil, t.addTPG(tg(), tag)
	}}
	n.cmds["delete"] = &csCmd{args: []string{"tag"}, nreq: 1, run: func(c *csCall) (*csNode, error) {
		tag, err := parseTag(c.args["tag"])
		if err != nil {
			return nil, err
		}
		target := tg()
		if target.tpg(tag) == nil {
			return nil, csError(fmt.Sprintf("No such TPG in configfs: %s/iscsi/%s/tpgt_%d", configfsTarget, wwn, tag))
		}
		var keep []TPG
		for _, g := range target.TPGs {
			if g.Tag != tag {
				keep = append(keep, g)
			}
		}
		target.TPGs = keep
		t.sh.info("Deleted TPGT %d.", tag)
		return nil, nil
	}}
	return n
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// mapGroup is a set/get group over a string map.
func mapGroup(m func() map[string]string, validate func(k, v string) error) *csGroup {
	return &csGroup{
		params:   func() []string { return sortedKeys(m()) },
		writable: func(string) bool { return true },
		get:      func(k string) string { return m()[k] },
		set: func(k, v string) error {
			if validate != nil {
				if err := validate(k, v); err != nil {
					return err
				}
			}
			m()[k] = v
			return nil
		},
	}
}

func numberParam(k, v string) error {
	if _, err := strconv.Atoi(v); err != nil {
		return csError(fmt.Sprintf("Not setting %s! Syntax error, '%s' is not a NUMBER.", k, v))
	}
	return nil
}

func (t *tcli) tpgNode(parent *csNode, wwn string, tag int) *csNode {
	n := t.node(fmt.Sprintf("tpg%d", tag), parent)
	g := func() *TPG { return t.m.target(wwn).tpg(tag) }
	n.summary = func() (string, csHealth) {
		tp := g()
		acls := "no-gen-acls"
		if tp.Attributes["generate_node_acls"] == "1" {
			acls = "gen-acls"
		}
		auth := "no-auth"
		if tp.Attributes["authentication"] == "1" {
			auth = "tpg-auth"
		}
		h := healthBad
		if tp.Enable {
			h = healthOK
		}
		return acls + ", " + auth, h
	}
	n.kids = func(n *csNode) []*csNode {
		return []*csNode{t.aclsNode(n, g), t.lunsNode(n, g), t.portalsNode(n, g)}
	}
	n.groups["attribute"] = mapGroup(func() map[string]string { return g().Attributes }, numberParam)
	n.groups["auth"] = mapGroup(func() map[string]string { return g().Auth }, nil)
	n.groups["parameter"] = mapGroup(func() map[string]string { return g().Parameters }, nil)
	n.cmds["enable"] = &csCmd{run: func(*csCall) (*csNode, error) {
		if g().Enable {
			t.sh.info("The TPGT is already enabled.")
		} else {
			g().Enable = true
			t.sh.info("The TPGT has been enabled.")
		}
		return nil, nil
	}}
	n.cmds["disable"] = &csCmd{run: func(*csCall) (*csNode, error) {
		if g().Enable {
			g().Enable = false
			t.sh.info("The TPGT has been disabled.")
		} else {
			t.sh.info("The TPGT is already disabled.")
		}
		return nil, nil
	}}
	return n
}

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
			WWN: unitSerial(), WriteBack: plugin == "fileio", Attributes: defaultSOAttributes(fi.size)})
		t.sh.info("Created storage object %s.", name)
		soPath = "/backstores/" + plugin + "/" + name
	}
	for _, l := range tp.LUNs {
		if l.StorageObject == soPath {
			return nil, csError(fmt.Sprintf("lun for storage object %s already exists", strings.TrimPrefix(soPath, "/backstores/")))
		}
	}
	idx := -1
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

// --- saveconfig / restoreconfig ---

func (t *tcli) saveconfig(file string) error {
	if file == "" {
		file = targetcliSaveFile
	}
	if strings.HasPrefix(file, "~/") {
		file = "/root/" + file[2:]
	}
	data, err := marshalJSON(t.m.st)
	if err != nil {
		return err
	}
	v := t.p.env.srv.fs
	target := clean("/", file)
	v.ensureDir(pathDir(target), 0o600, 0)
	if file == targetcliSaveFile {
		// Like targetcli, keep a backup of a previous configuration that differs.
		if old, err := v.readFile(target); err == nil && !bytes.Equal(old, data) {
			backup := "/etc/target/backup/saveconfig-" + time.Now().Format("20060102-15:04:05") + "-json.gz"
			v.ensureDir("/etc/target/backup", 0o600, 0)
			if err := v.writeFile(backup, old); err == nil {
				t.sh.info("Last %s configs saved in /etc/target/backup/.", t.m.prefs["max_backup_files"])
			}
		}
	}
	if err := v.writeFile(target, data); err != nil {
		return csError(fmt.Sprintf("Could not open %s", file))
	}
	t.sh.info("Configuration saved to %s", file)
	return nil
}

func pathDir(p string) string {
	if i := strings.LastIndex(p, "/"); i > 0 {
		return p[:i]
	}
	return "/"
}

func (t *tcli) restoreconfig(c *csCall) (*csNode, error) {
	file, ok := c.arg("savefile")
	if !ok || file == "" {
		file = targetcliSaveFile
	}
	data, err := t.p.env.srv.fs.readFile(clean("/", file))
	if err != nil {
		return nil, csError(fmt.Sprintf("Restore file %s not found", file))
	}
	var st LIOState
	if err := json.Unmarshal(data, &st); err != nil {
		return nil, csError(fmt.Sprintf("Could not load %s: %v", file, err))
	}
	ce, _ := c.arg("clear_existing")
	if isTrue(ce) {
		t.m.st = st
		t.sh.info("Configuration restored from %s", file)
		return nil, nil
	}
	var errs []string
	for _, so := range st.StorageObjects {
		if t.m.storageObject(so.Plugin, so.Name) != nil {
			errs = append(errs, fmt.Sprintf("storageobject '%s:%s' exist not restoring, it could be in use", so.Plugin, so.Name))
			continue
		}
		t.m.st.StorageObjects = append(t.m.st.StorageObjects, so)
	}
	for _, tg := range st.Targets {
		if t.m.target(tg.WWN) != nil {
			errs = append(errs, fmt.Sprintf("target '%s' exist not restoring, it could be in use", tg.WWN))
			continue
		}
		t.m.st.Targets = append(t.m.st.Targets, tg)
	}
	t.m.sortTargets()
	if len(errs) > 0 {
		return nil, csError(fmt.Sprintf("Configuration restored, %d recoverable errors:\n%s", len(errs), strings.Join(errs, "\n")))
	}
	t.sh.info("Configuration restored from %s", file)
	return nil, nil
}
