package zfsssh

import (
	"encoding/json"
	"errors"
	"fmt"
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
	n.sh = &csShell{p: p, lock: &n.m.mu, build: n.rootNode, commit: func() { _ = n.m.saveLocked() }, // best-effort persistence: the session sees the in-memory state
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
			if !errors.As(err, new(csCrash)) {
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
	defer func() { _ = n.m.saveLocked() }() // best-effort persistence
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
