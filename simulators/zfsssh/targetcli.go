package zfsssh

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
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
	t.sh = &csShell{p: p, lock: &t.m.mu, build: t.rootNode, commit: func() { _ = t.m.saveLocked() }, // best-effort persistence: the session sees the in-memory state
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
			if c := (csCrash{}); errors.As(err, &c) {
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
				t.pruneBackups()
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

// pruneBackups keeps the newest max_backup_files backups, as targetcli
// does after writing one (its names sort by time). Without it a busy host
// grows one file per second of saveconfig activity.
func (t *tcli) pruneBackups() {
	keep, err := strconv.Atoi(t.m.prefs["max_backup_files"])
	if err != nil || keep < 1 {
		keep = 10
	}
	const dir = "/etc/target/backup"
	names := t.p.env.srv.fs.files(dir, "saveconfig-")
	for len(names) > keep {
		_ = t.p.env.srv.fs.removeFile(dir + "/" + names[0])
		names = names[1:]
	}
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
