package zfsssh

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"
	"sync"
)

// targetcli and nvmetcli are both built on configshell-fb. This file
// reproduces what of configshell a script can observe: its command-line
// grammar (including that it silently ignores what it cannot parse, which
// is why "# comment" lines are harmless), path lookup and its messages,
// parameter checking, "set"/"get" groups, "ls" trees and the interactive
// loop that prints a prompt per line read from stdin.

// csLine is a parsed command line: [PATH] [COMMAND] [PARAMS...].
type csLine struct {
	path    string
	command string
	pparams []string
	kparams []csKV
}

type csKV struct{ k, v string }

var (
	csBookmark = regexp.MustCompile(`^@[A-Za-z0-9:_.\-]+`)
	csPathStd  = regexp.MustCompile(`^[A-Za-z0-9:_.\[\]\-]*/[A-Za-z0-9:_.\[\]/\-]*`)
)

const (
	csCommandChars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_"
	csKeywordChars = csCommandChars + "-"
	csVarChars     = csCommandChars + `?;&*$!#,=\+/.<>()~@:-%[]`
)

func csWord(s string, pos int, chars string) int {
	end := pos
	for end < len(s) && strings.IndexByte(chars, s[end]) >= 0 {
		end++
	}
	return end
}

func csSkip(s string, pos int) int {
	for pos < len(s) && strings.IndexByte(" \t\r\n", s[pos]) >= 0 {
		pos++
	}
	return pos
}

func parseCSLine(s string) csLine {
	var l csLine
	pos := csSkip(s, 0)
	rest := s[pos:]
	switch {
	case csBookmark.MatchString(rest):
		m := csBookmark.FindString(rest)
		l.path, pos = m, pos+len(m)
	case csPathStd.MatchString(rest):
		m := csPathStd.FindString(rest)
		l.path, pos = m, pos+len(m)
	case strings.HasPrefix(rest, ".."):
		l.path, pos = "..", pos+2
	case strings.HasPrefix(rest, "."), strings.HasPrefix(rest, "*"):
		l.path, pos = rest[:1], pos+1
	}
	pos = csSkip(s, pos)
	if end := csWord(s, pos, csCommandChars); end > pos {
		l.command, pos = s[pos:end], end
	}
	for {
		pos = csSkip(s, pos)
		if kend := csWord(s, pos, csKeywordChars); kend > pos && kend < len(s) && s[kend] == '=' {
			vend := csWord(s, kend+1, csVarChars)
			l.kparams = append(l.kparams, csKV{s[pos:kend], s[kend+1 : vend]})
			pos = vend
			continue
		}
		end := csWord(s, pos, csVarChars)
		if end == pos {
			return l
		}
		l.pparams = append(l.pparams, s[pos:end])
		pos = end
	}
}

// csHealth is a node's health in "ls": green, red or neither.
type csHealth int

const (
	healthNone csHealth = iota
	healthOK
	healthBad
)

// csNode is a node of the tree. Trees are built on demand from the model,
// while the shell holds the model's lock.
type csNode struct {
	name    string
	parent  *csNode
	kids    func(n *csNode) []*csNode
	summary func() (string, csHealth)
	cmds    map[string]*csCmd
	groups  map[string]*csGroup
}

func (n *csNode) path() string {
	if n.parent == nil {
		return "/"
	}
	pp := n.parent.path()
	if pp == "/" {
		return "/" + n.name
	}
	return pp + "/" + n.name
}

func (n *csNode) root() *csNode {
	for n.parent != nil {
		n = n.parent
	}
	return n
}

func (n *csNode) children() []*csNode {
	if n.kids == nil {
		return nil
	}
	return n.kids(n)
}

// get resolves a path as configshell's get_node does.
func (n *csNode) get(p string) (*csNode, error) {
	if p == "" {
		p = "."
	}
	if strings.HasPrefix(p, "@") {
		return nil, csError("No such bookmark " + strings.TrimSpace(strings.TrimLeft(p, "@")))
	}
	for strings.Contains(p, "//") {
		p = strings.ReplaceAll(p, "//", "/")
	}
	if len(p) > 1 {
		p = strings.TrimRight(p, "/")
		if p == "" {
			p = "/"
		}
	}
	if strings.HasPrefix(p, "/") {
		next := strings.TrimLeft(p, "/")
		if next == "" {
			return n.root(), nil
		}
		return n.root().get(next)
	}
	first, rest, nested := strings.Cut(p, "/")
	next, err := n.adjacent(first)
	if err != nil || !nested {
		return next, err
	}
	return next.get(rest)
}

func (n *csNode) adjacent(name string) (*csNode, error) {
	switch name {
	case ".":
		return n, nil
	case "..":
		if n.parent != nil {
			return n.parent, nil
		}
		return n, nil
	}
	for _, c := range n.children() {
		if c.name == name {
			return c, nil
		}
	}
	return nil, csError(fmt.Sprintf("No such path %s/%s", strings.TrimRight(n.path(), "/"), name))
}

// csCmd is a UI command with Python's calling convention: named parameters
// (the first nreq required), optionally *args and **kwargs.
type csCmd struct {
	args   []string
	nreq   int
	varPos bool
	varKw  bool
	run    func(c *csCall) (*csNode, error)
}

type csCall struct {
	sh    *csShell
	node  *csNode
	args  map[string]string
	extra []string // *args
	kw    []csKV   // **kwargs, in order
}

func (c *csCall) arg(name string) (string, bool) {
	v, ok := c.args[name]
	return v, ok
}

// csGroup is a configuration group for "set"/"get".
type csGroup struct {
	params   func() []string
	writable func(param string) bool
	get      func(param string) string
	set      func(param, value string) error
}

// csError is an error configshell logs before reading the next line.
type csError string

func (e csError) Error() string { return string(e) }

// csCrash is an exception configshell does not catch: the tool dies with
// a traceback and exit status 1.
type csCrash struct{ exc string }

func (e csCrash) Error() string { return e.exc }

// bind checks parameters as configshell's assert_params does, with its
// messages (and its spelling).
func (cmd *csCmd) bind(pparams []string, kparams []csKV) (map[string]string, []string, []csKV, error) {
	kmap := map[string]string{}
	var korder []string
	for _, kv := range kparams {
		if _, seen := kmap[kv.k]; !seen {
			korder = append(korder, kv.k)
		}
		kmap[kv.k] = kv.v
	}
	isArg := map[string]bool{}
	for _, a := range cmd.args {
		isArg[a] = true
	}
	var missing []string
	for i := len(pparams); i < cmd.nreq; i++ {
		if _, ok := kmap[cmd.args[i]]; !ok {
			missing = append(missing, cmd.args[i])
		}
	}
	sort.Strings(missing)
	switch {
	case len(missing) == 1:
		return nil, nil, nil, csError("Missing required parameter " + missing[0])
	case len(missing) > 1:
		return nil, nil, nil, csError("Missing required parameters '" + strings.Join(missing, "', '") + "'")
	}
	var unexpected []string
	for _, k := range korder {
		if !isArg[k] {
			unexpected = append(unexpected, k)
		}
	}
	sort.Strings(unexpected)
	if !cmd.varKw {
		switch {
		case len(unexpected) == 1:
			return nil, nil, nil, csError("Unexpected keyword parameter '" + unexpected[0] + "'.")
		case len(unexpected) > 1:
			return nil, nil, nil, csError("Unexpected keyword parameters '" + strings.Join(unexpected, "', '") + "'.")
		}
	}
	npos := min(len(pparams), len(cmd.args))
	for _, a := range cmd.args[:npos] {
		if _, dup := kmap[a]; dup {
			return nil, nil, nil, csError("Duplicate parameter " + a + ".")
		}
	}
	standard := len(pparams)
	for _, k := range korder {
		if isArg[k] {
			standard++
		}
	}
	if cmd.nreq == len(cmd.args) && standard != cmd.nreq && !cmd.varPos {
		return nil, nil, nil, csError(fmt.Sprintf("Got %d positionnal parameters, expected exactly %d.", standard, cmd.nreq))
	}
	if standard > len(cmd.args) && !cmd.varPos {
		return nil, nil, nil, csError(fmt.Sprintf("Got %d positionnal parameters, expected at most %d.", standard, len(cmd.args)))
	}
	args := map[string]string{}
	for i, v := range pparams[:npos] {
		args[cmd.args[i]] = v
	}
	var extraKw []csKV
	for _, k := range korder {
		if isArg[k] {
			args[k] = kmap[k]
		} else {
			extraKw = append(extraKw, csKV{k, kmap[k]})
		}
	}
	return args, pparams[npos:], extraKw, nil
}

// csShell runs configshell command lines against one tool's tree.
type csShell struct {
	p       *proc
	lock    sync.Locker    // the model's lock, held while a command runs
	build   func() *csNode // the root of the tree for the model's current state
	commit  func()         // persists the model after a command
	prefs   map[string]string
	cur     string // the current node's path
	exiting bool
	out     io.Writer
	errw    io.Writer
}

func (sh *csShell) info(format string, a ...any) { fmt.Fprintf(sh.out, format+"\n", a...) }

// width is configshell's console width: the terminal's (at most 132), or
// 132 when stdout is not a terminal.
func (sh *csShell) width() int {
	if _, tty := sh.out.(*ttyWriter); tty && sh.p.env.cols.Load() > 0 {
		return min(int(sh.p.env.cols.Load()), 132)
	}
	return 132
}

// runLine runs one command line; csError and csCrash are returned.
func (sh *csShell) runLine(line string) error {
	line = strings.TrimSpace(line)
	if line == "" {
		return nil
	}
	l := parseCSLine(line)
	sh.lock.Lock()
	defer sh.lock.Unlock()
	defer sh.commit()
	root := sh.build()
	cur, err := root.get(sh.cur)
	if err != nil {
		cur = root
	}
	path, command, pparams := l.path, l.command, l.pparams
	iterall := strings.HasSuffix(path, "*")
	if iterall {
		path = strings.TrimSuffix(path, "*")
	}
	if path == "" {
		path = "."
	}
	if command == "" {
		if iterall {
			command = "ls"
		} else {
			command, pparams = "cd", []string{"."}
		}
	}
	target, err := cur.get(path)
	if err != nil {
		return err
	}
	targets := []*csNode{target}
	if iterall {
		targets = target.children()
	}
	for _, t := range targets {
		if iterall {
			sh.info("[%s]", t.path())
		}
		cmd := t.cmds[command]
		if cmd == nil {
			cmd = sh.globalCmd(command)
		}
		if cmd == nil {
			return csError("Command not found " + command)
		}
		args, extra, kw, err := cmd.bind(pparams, l.kparams)
		if err != nil {
			return err
		}
		next, err := cmd.run(&csCall{sh: sh, node: t, args: args, extra: extra, kw: kw})
		if err != nil {
			return err
		}
		if next != nil {
			sh.cur = next.path()
		}
	}
	return nil
}

// prompt is "<path>> ", the path shortened to 30 characters like configshell.
func (sh *csShell) prompt() string {
	p := sh.cur
	if len(p) > 30 {
		half := (30 - 3) / 2
		p = p[:half] + "..." + p[len(p)-half:]
	}
	return p + "> "
}

// interactive is configshell's loop over stdin: prompt, read, run; errors
// are printed and the loop goes on; end of input acts as "exit".
func (sh *csShell) interactive(in io.Reader) error {
	r := bufio.NewReader(in)
	for !sh.exiting && sh.p.ctx.Err() == nil {
		io.WriteString(sh.out, sh.prompt())
		line, err := r.ReadString('\n')
		if err != nil && line == "" {
			io.WriteString(sh.out, "exit\n")
			sh.exiting = true
			break
		}
		if rerr := sh.runLine(line); rerr != nil {
			if c := (csCrash{}); errors.As(rerr, &c) {
				return c
			}
			fmt.Fprintln(sh.errw, rerr.Error())
		}
	}
	return nil
}

// crash prints a Python traceback ending in exc.
func crash(w io.Writer, tool, exc string) {
	fmt.Fprintf(w, "Traceback (most recent call last):\n  File \"%s\", line 8, in <module>\n    sys.exit(main())\n%s\n", tool, exc)
}
