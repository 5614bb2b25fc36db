package zfsmodel

import (
	"bufio"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
)

// The command-line emulation: option parsing as glibc getopt does it
// (options may follow operands; "--" ends them), usage texts, dispatch.

// cli is one command invocation.
type cli struct {
	m    *Model
	in   io.Reader
	out  *bufio.Writer
	err  io.Writer
	prog string // "zfs" or "zpool"
	cmd  string // the current subcommand, for its usage text
	// unprivileged: run by a user without root (ZFSUnprivileged).
	unprivileged bool
}

func newCLI(m *Model, prog string, stdin io.Reader, stdout, stderr io.Writer) *cli {
	if stdin == nil {
		stdin = strings.NewReader("")
	}
	if stdout == nil {
		stdout = io.Discard
	}
	if stderr == nil {
		stderr = io.Discard
	}
	out := outBufs.Get().(*bufio.Writer)
	out.Reset(stdout)
	return &cli{m: m, in: stdin, out: out, err: stderr, prog: prog}
}

// outBufs recycles the commands' 64 KiB output buffers: allocating one per
// command was a tenth of the model's CPU (and most of its garbage) in the
// create/get/destroy benchmark.
var outBufs = sync.Pool{New: func() any { return bufio.NewWriterSize(io.Discard, 1<<16) }}

// done flushes the output and returns its buffer to the pool; the cli is
// not used afterwards.
func (c *cli) done() {
	c.out.Flush()
	c.out.Reset(io.Discard)
	outBufs.Put(c.out)
	c.out = nil
}

func (c *cli) errorf(format string, args ...any) { fmt.Fprintf(c.err, format, args...) }

// fail prints an error's text and returns exit status 1.
func (c *cli) fail(err error) int {
	c.out.Flush()
	fmt.Fprintln(c.err, err.Error())
	return 1
}

// opt is one parsed option: c is the option letter, '?' for an unknown
// option or ':' for a missing argument (with a leading ':' in the spec;
// '?' otherwise), and bad the offending letter.
type opt struct {
	c   byte
	bad byte
	arg string
}

// getopt parses args against a getopt(3) spec, GNU style: options and
// operands may be mixed; "--" ends the options.
func getopt(args []string, spec string) ([]opt, []string) {
	colon := strings.HasPrefix(spec, ":")
	spec = strings.TrimPrefix(spec, ":")
	var opts []opt
	var operands []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			operands = append(operands, args[i+1:]...)
			break
		}
		if len(a) < 2 || a[0] != '-' {
			operands = append(operands, a)
			continue
		}
		for j := 1; j < len(a); j++ {
			ch := a[j]
			k := strings.IndexByte(spec, ch)
			if k < 0 || ch == ':' {
				opts = append(opts, opt{c: '?', bad: ch})
				continue
			}
			if k+1 < len(spec) && spec[k+1] == ':' {
				switch {
				case j+1 < len(a):
					opts = append(opts, opt{c: ch, arg: a[j+1:]})
				case i+1 < len(args):
					i++
					opts = append(opts, opt{c: ch, arg: args[i]})
				case colon:
					opts = append(opts, opt{c: ':', bad: ch})
				default:
					opts = append(opts, opt{c: '?', bad: ch})
				}
				break
			}
			opts = append(opts, opt{c: ch})
		}
	}
	return opts, operands
}

// badOpt reports an option error as zfs does and prints the usage.
func (c *cli) badOpt(o opt) int {
	if o.c == ':' {
		c.errorf("missing argument for '%c' option\n", o.bad)
	} else {
		c.errorf("invalid option '%c'\n", o.bad)
	}
	return c.usage()
}

// operands checks that there is exactly one operand per name in missing
// ("missing <name> argument" names the first absent one).
func (c *cli) operands(ops []string, missing ...string) (int, bool) {
	if len(ops) < len(missing) {
		c.errorf("missing %s argument\n", missing[len(ops)])
		return c.usage(), false
	}
	if len(ops) > len(missing) {
		c.errorf("too many arguments\n")
		return c.usage(), false
	}
	return 0, true
}

// forUsage orders a property table as usage lists it: read-only
// properties first, then by name; hidden ones are left out.
func forUsage(table []*propDesc) []*propDesc {
	var props []*propDesc
	for _, p := range table {
		if p.visible {
			props = append(props, p)
		}
	}
	sort.SliceStable(props, func(i, j int) bool {
		ri, rj := props[i].attr == attrReadonly, props[j].attr == attrReadonly
		if ri != rj {
			return ri
		}
		return props[i].name < props[j].name
	})
	return props
}

// usage prints the current command's usage to stderr: exit status 2.
func (c *cli) usage() int {
	c.out.Flush()
	c.writeUsage(c.err)
	return 2
}

func (c *cli) writeUsage(w io.Writer) {
	if c.prog == "zpool" {
		c.writeZpoolUsage(w)
		return
	}
	if c.cmd == "" {
		fmt.Fprint(w, "usage: zfs command args ...\nwhere 'command' is one of the following:\n\n")
		for _, e := range zfsCommands {
			if e.name == "" {
				fmt.Fprint(w, "\n")
			} else {
				fmt.Fprint(w, e.text)
			}
		}
		fmt.Fprint(w, "\nEach dataset is of the form: pool/[dataset/]*dataset[@name]\n")
	} else {
		fmt.Fprint(w, "usage:\n"+commandUsage(zfsCommands, c.cmd))
	}
	switch c.cmd {
	case "set", "get", "inherit", "list":
		writePropertyTable(w)
	default:
		fmt.Fprint(w, "\nFor the property list, run: zfs set|get\n")
		fmt.Fprint(w, "\nFor the delegated permission list, run: zfs allow|unallow\n")
		fmt.Fprint(w, "\nFor further help on a command or topic, run: zfs help [<topic>]\n")
	}
}

func commandUsage(table []usageEntry, name string) string {
	for _, e := range table {
		if e.name == name {
			return e.text
		}
	}
	return ""
}

// writePropertyTable is the property list zfs set/get/inherit/list print
// with their usage: read-only properties first, then by name.
func writePropertyTable(w io.Writer) {
	fmt.Fprint(w, "\nThe following properties are supported:\n")
	fmt.Fprintf(w, "\n\t%-14s %s  %s   %s\n\n", "PROPERTY", "EDIT", "INHERIT", "VALUES")
	props := forUsage(propTable)
	for _, p := range props {
		edit, inherit := "YES    ", "   NO   "
		if p.readonly() {
			edit = " NO    "
		}
		if p.inheritable() {
			inherit = "  YES   "
		}
		fmt.Fprintf(w, "\t%-15s %s%s%s\n", p.name, edit, inherit, p.values)
	}
	for _, x := range []struct{ name, rest string }{
		{"userused@...", " NO       NO   <size>"}, {"groupused@...", " NO       NO   <size>"},
		{"projectused@...", " NO       NO   <size>"}, {"userobjused@...", " NO       NO   <size>"},
		{"groupobjused@...", " NO       NO   <size>"}, {"projectobjused@...", " NO       NO   <size>"},
		{"userquota@...", "YES       NO   <size> | none"}, {"groupquota@...", "YES       NO   <size> | none"},
		{"projectquota@...", "YES       NO   <size> | none"}, {"userobjquota@...", "YES       NO   <size> | none"},
		{"groupobjquota@...", "YES       NO   <size> | none"}, {"projectobjquota@...", "YES       NO   <size> | none"},
		{"written@<snap>", " NO       NO   <size>"}, {"written#<bookmark>", " NO       NO   <size>"},
	} {
		fmt.Fprintf(w, "\t%-15s %s\n", x.name, x.rest)
	}
	fmt.Fprint(w, "\nSizes are specified in bytes with standard units such as K, M, G, etc.\n")
	fmt.Fprint(w, "\nUser-defined properties can be specified by using a name containing a colon (:).\n")
	fmt.Fprint(w, "\nThe {user|group|project}[obj]{used|quota}@ properties must be appended with\n"+
		"a user|group|project specifier of one of these forms:\n"+
		"    POSIX name      (eg: \"matt\")\n"+
		"    POSIX id        (eg: \"126829\")\n"+
		"    SMB name@domain (eg: \"matt@sun\")\n"+
		"    SMB SID         (eg: \"S-1-234-567-89\")\n")
}

// ZFS runs a zfs(8) command line (args exclude the program name) and
// returns its exit status.
func (m *Model) ZFS(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	c := newCLI(m, "zfs", stdin, stdout, stderr)
	defer c.done()
	return c.zfsMain(args)
}

var zfsHandlers map[string]func(*cli, []string) int

func init() {
	zfsHandlers = map[string]func(*cli, []string) int{
		"version": (*cli).zfsVersion, "create": (*cli).zfsCreate, "destroy": (*cli).zfsDestroy,
		"snapshot": (*cli).zfsSnapshot, "rollback": (*cli).zfsRollback, "clone": (*cli).zfsClone,
		"promote": (*cli).zfsPromote, "rename": (*cli).zfsRename, "list": (*cli).zfsList,
		"set": (*cli).zfsSet, "get": (*cli).zfsGet, "inherit": (*cli).zfsInherit,
		"mount": (*cli).zfsMount, "unmount": (*cli).zfsUnmount, "share": (*cli).zfsShare,
		"unshare": (*cli).zfsShare, "send": (*cli).zfsSend, "receive": (*cli).zfsReceive,
		"upgrade": (*cli).zfsUpgrade, "load-key": (*cli).zfsLoadKey, "unload-key": (*cli).zfsUnloadKey,
		"change-key": (*cli).zfsChangeKey,
	}
}

func (c *cli) zfsMain(args []string) int {
	if len(args) == 0 {
		c.errorf("missing command\n")
		return c.usage()
	}
	name := args[0]
	switch name {
	case "umount":
		name = "unmount"
	case "recv":
		name = "receive"
	case "snap":
		name = "snapshot"
	case "-?", "--help":
		c.writeUsage(c.out)
		return 0
	case "-V", "--version":
		return c.zfsVersion(nil)
	case "help":
		if len(args) > 1 && commandUsage(zfsCommands, args[1]) != "" {
			c.cmd = args[1]
		}
		c.writeUsage(c.out)
		return 0
	}
	known := commandUsage(zfsCommands, name) != ""
	if known && len(args) >= 2 && (args[1] == "--help" || args[1] == "-?") {
		c.cmd = name
		return c.usage()
	}
	if known {
		c.cmd = name
		if h := zfsHandlers[name]; h != nil {
			return h(c, args[1:])
		}
		c.errorf("zfs %s: this command is not modelled by the simulator\n", name)
		return 1
	}
	if strings.Contains(name, "=") {
		c.cmd = "set"
		return c.zfsSet(args)
	}
	c.errorf("unrecognized command '%s'\n", name)
	return c.usage()
}

func (c *cli) zfsVersion([]string) int { // arguments are ignored, as by zfs
	fmt.Fprint(c.out, "zfs-2.2.7-1\nzfs-kmod-2.2.7-1\n")
	return 0
}

// parseProp is zfs's parseprop: "name=value", each name once.
func (c *cli) parseProp(props []kv, arg string) ([]kv, bool) {
	name, value, ok := strings.Cut(arg, "=")
	if !ok {
		c.errorf("missing '=' for property=value argument\n")
		return props, false
	}
	for _, p := range props {
		if p.name == name {
			c.errorf("property '%s' specified multiple times\n", name)
			return props, false
		}
	}
	return append(props, kv{name, value}), true
}
