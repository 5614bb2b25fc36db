package zfsssh

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// targetcli's /iscsi: targets (IQN, NAA or EUI names) and their TPGs.

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
	_ = t.addTPG(t.m.target(wwn), 0)
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
