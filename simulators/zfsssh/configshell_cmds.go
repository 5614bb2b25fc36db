package zfsssh

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// The commands every configshell node has: cd, ls, pwd, set, get, ...

// globalCmd is a command every node has.
func (sh *csShell) globalCmd(name string) *csCmd {
	switch name {
	case "cd":
		return &csCmd{args: []string{"path"}, run: func(c *csCall) (*csNode, error) {
			p, ok := c.arg("path")
			if !ok {
				return c.node, nil
			}
			return c.node.get(p)
		}}
	case "pwd":
		return &csCmd{run: func(c *csCall) (*csNode, error) {
			sh.info("%s", c.node.path())
			return nil, nil
		}}
	case "exit":
		return &csCmd{run: func(*csCall) (*csNode, error) {
			sh.exiting = true
			return nil, nil
		}}
	case "refresh":
		return &csCmd{run: func(*csCall) (*csNode, error) { return nil, nil }}
	case "status":
		return &csCmd{run: func(c *csCall) (*csNode, error) {
			desc := "None"
			if c.node.summary != nil {
				desc, _ = c.node.summary()
			}
			sh.info("Status for %s: %s", c.node.path(), desc)
			return nil, nil
		}}
	case "ls":
		return &csCmd{args: []string{"path", "depth"}, run: sh.ls}
	case "set":
		return &csCmd{args: []string{"group"}, varKw: true, run: sh.set}
	case "get":
		return &csCmd{args: []string{"group"}, varPos: true, run: sh.get}
	case "help":
		return &csCmd{args: []string{"topic"}, run: func(c *csCall) (*csNode, error) {
			names := []string{"bookmarks", "cd", "exit", "get", "help", "ls", "pwd", "refresh", "set", "status"}
			for n := range c.node.cmds {
				names = append(names, n)
			}
			sort.Strings(names)
			sh.info("AVAILABLE COMMANDS\n==================\n%s", strings.Join(names, " "))
			return nil, nil
		}}
	}
	return nil
}

func (sh *csShell) groups(n *csNode) []string {
	names := []string{"global"}
	for g := range n.groups {
		names = append(names, g)
	}
	sort.Strings(names[1:])
	return names
}

func (sh *csShell) group(n *csNode, name string) *csGroup {
	if name == "global" {
		return &csGroup{
			params: func() []string {
				var out []string
				for k := range sh.prefs {
					out = append(out, k)
				}
				sort.Strings(out)
				return out
			},
			writable: func(string) bool { return true },
			get:      func(k string) string { return sh.prefs[k] },
			set: func(k, v string) error {
				if old := sh.prefs[k]; old == "true" || old == "false" {
					lv := strings.ToLower(v)
					if lv != "true" && lv != "false" {
						return csError(fmt.Sprintf("Not setting %s! Syntax error, '%s' is not true|false.", k, v))
					}
					v = lv
				}
				sh.prefs[k] = v
				return nil
			},
		}
	}
	return n.groups[name]
}

func (sh *csShell) set(c *csCall) (*csNode, error) {
	name, ok := c.arg("group")
	if !ok {
		sh.info("AVAILABLE CONFIGURATION GROUPS\n==============================\n%s\n", strings.Join(sh.groups(c.node), " "))
		return nil, nil
	}
	g := sh.group(c.node, name)
	if g == nil {
		return nil, csError("Unknown configuration group: " + name)
	}
	if len(c.kw) == 0 {
		section := strings.ToUpper(name) + " CONFIG GROUP"
		var b strings.Builder
		for _, p := range g.params() {
			if g.writable(p) {
				b.WriteString(p + "=string\n" + strings.Repeat("-", len(p)+7) + "\nThe " + p + " " + name + ".\n\n")
			}
		}
		sh.info("%s\n%s\n%s", section, strings.Repeat("=", len(section)), b.String())
		return nil, nil
	}
	known := map[string]bool{}
	for _, p := range g.params() {
		known[p] = true
	}
	for _, kv := range c.kw {
		if !known[kv.k] {
			return nil, csError(fmt.Sprintf("Unknown parameter %s in group '%s'.", kv.k, name))
		}
		if !g.writable(kv.k) {
			return nil, csError(fmt.Sprintf("Parameter %s is read-only.", kv.k))
		}
		if err := g.set(kv.k, kv.v); err != nil {
			return nil, err
		}
		sh.info("Parameter %s is now '%s'.", kv.k, g.get(kv.k))
	}
	return nil, nil
}

func (sh *csShell) get(c *csCall) (*csNode, error) {
	name, ok := c.arg("group")
	if !ok {
		sh.info("AVAILABLE CONFIGURATION GROUPS\n==============================\n%s\n", strings.Join(sh.groups(c.node), " "))
		return nil, nil
	}
	g := sh.group(c.node, name)
	if g == nil {
		return nil, csError("Unknown configuration group: " + name)
	}
	params := c.extra
	if len(params) == 0 {
		params = g.params()
	}
	known := map[string]bool{}
	for _, p := range g.params() {
		known[p] = true
	}
	for _, p := range params {
		if !known[p] {
			return nil, csError(fmt.Sprintf("No parameter '%s' in group '%s'.", p, name))
		}
		ro := ""
		if !g.writable(p) {
			ro = "[ro]"
		}
		sh.info("%s=%s %s", p, g.get(p), ro)
	}
	return nil, nil
}

func (sh *csShell) ls(c *csCall) (*csNode, error) {
	n := c.node
	if p, ok := c.arg("path"); ok {
		var err error
		if n, err = n.get(p); err != nil {
			return nil, err
		}
	}
	depth := -1
	if d, ok := c.arg("depth"); ok {
		v, err := strconv.Atoi(d)
		if err != nil {
			return nil, csError("The tree depth must be a number.")
		}
		if v > 0 {
			depth = v
		}
	}
	var lines []string
	renderTree(n, []bool{false}, depth, sh.width(), &lines)
	sh.info("%s", strings.Join(lines, "\n"))
	return nil, nil
}

// renderTree draws configshell's "o- name ....... [summary]" tree.
func renderTree(n *csNode, margin []bool, depth, width int, lines *[]string) {
	desc, health := "", healthNone
	if n.summary != nil {
		desc, health = n.summary()
	}
	if desc == "" {
		switch health {
		case healthOK:
			desc = "OK"
		case healthBad:
			desc = "ERROR"
		default:
			desc = "..."
		}
	}
	var b strings.Builder
	for _, pipe := range margin[:len(margin)-1] {
		if pipe {
			b.WriteString("| ")
		} else {
			b.WriteString("  ")
		}
	}
	b.WriteString("o- ")
	pad := width - 1 - (len(desc) + 3) - b.Len() - len(n.name)
	b.WriteString(n.name)
	b.WriteString(" " + strings.Repeat(".", max(pad, 0)) + " [" + desc + "]")
	*lines = append(*lines, b.String())
	if depth == 0 {
		return
	}
	kids := n.children()
	sort.SliceStable(kids, func(i, j int) bool { return csLess(kids[i].name, kids[j].name) })
	for i, k := range kids {
		renderTree(k, append(margin, i < len(kids)-1), depth-1, width, lines)
	}
}

var trailingNum = regexp.MustCompile(`^(.*?)(\d+)$`)

// csLess sorts "lun2" before "lun10", as configshell does.
func csLess(a, b string) bool {
	ka, na := splitNum(a)
	kb, nb := splitNum(b)
	if ka != kb {
		return ka < kb
	}
	return na < nb
}

func splitNum(s string) (string, int) {
	if m := trailingNum.FindStringSubmatch(s); m != nil {
		n, _ := strconv.Atoi(m[2])
		return m[1], n
	}
	return s, 0
}
