package zfsmodel

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
)

// zpool list, get, set, status and version for the model's pools. A pool
// has one virtual vdev; its size is PoolSpec.Size and its health ONLINE.

// Zpool runs a zpool(8) command line (args exclude the program name) and
// returns its exit status.
func (m *Model) Zpool(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	c := newCLI(m, "zpool", stdin, stdout, stderr)
	defer c.done()
	if len(args) == 0 {
		c.errorf("missing command\n")
		return c.usage()
	}
	switch name := args[0]; name {
	case "-?", "--help":
		c.writeUsage(c.out)
		return 0
	case "-V", "--version", "version":
		fmt.Fprint(c.out, "zfs-2.2.7-1\nzfs-kmod-2.2.7-1\n")
		return 0
	case "help":
		if len(args) > 1 && commandUsage(zpoolCommands, args[1]) != "" {
			c.cmd = args[1]
		}
		c.writeUsage(c.out)
		return 0
	default:
		if commandUsage(zpoolCommands, name) == "" {
			c.errorf("unrecognized command '%s'\n", name)
			return c.usage()
		}
		c.cmd = name
		if len(args) >= 2 && (args[1] == "--help" || args[1] == "-?") {
			return c.usage()
		}
		switch name {
		case "list":
			return c.zpoolList(args[1:])
		case "get":
			return c.zpoolGet(args[1:])
		case "set":
			return c.zpoolSet(args[1:])
		case "status":
			return c.zpoolStatus(args[1:])
		}
		c.errorf("zpool %s: this command is not modelled by the simulator\n", name)
		return 1
	}
}

func (c *cli) writeZpoolUsage(w io.Writer) {
	if c.cmd == "" {
		fmt.Fprint(w, "usage: zpool command args ...\nwhere 'command' is one of the following:\n\n")
		for _, e := range zpoolCommands {
			if e.name == "" {
				fmt.Fprint(w, "\n")
			} else {
				fmt.Fprint(w, e.text)
			}
		}
		fmt.Fprint(w, "\nFor further help on a command or topic, run: zpool help [<topic>]\n")
		return
	}
	fmt.Fprint(w, "usage:\n"+commandUsage(zpoolCommands, c.cmd))
	switch c.cmd {
	case "set", "get", "list":
	default:
		return
	}
	fmt.Fprint(w, "\nthe following properties are supported:\n")
	fmt.Fprintf(w, "\n\t%-19s  %s   %s\n\n", "PROPERTY", "EDIT", "VALUES")
	props := forUsage(poolProps)
	for _, p := range props {
		edit := " YES   "
		if p.readonly() {
			edit = "  NO   "
		}
		fmt.Fprintf(w, "\t%-19s  %s%s\n", p.name, edit, p.values)
	}
	fmt.Fprintf(w, "\t%-19s   ", "feature@...")
	fmt.Fprint(w, "YES   disabled | enabled | active\n")
	fmt.Fprint(w, "\nThe feature@ properties must be appended with a feature name.\nSee zpool-features(7).\n")
}

// poolList parses a pool property list (zprop_get_list for pools).
func poolList(list string) ([]*column, error) {
	if list == "all" {
		p := poolPropByName["name"]
		cols := []*column{{prop: p, width: poolWidth(p), all: true}}
		for _, p := range poolProps {
			if p.visible {
				cols = append(cols, &column{prop: p, width: poolWidth(p), fixed: !p.flex, all: true})
			}
		}
		return cols, nil
	}
	if list == "" {
		return nil, newErr(KindInvalid, "bad property list: no properties specified")
	}
	var cols []*column
	for _, n := range strings.Split(list, ",") {
		p := poolPropByName[n]
		if p == nil {
			return nil, newErr(KindInvalid, "bad property list: invalid property '%s'", n)
		}
		cols = append(cols, &column{prop: p, width: poolWidth(p), fixed: !p.flex})
	}
	return cols, nil
}

// pickPools resolves pool arguments; unknown ones are reported.
func (c *cli) pickPools(args []string) ([]*pool, bool) {
	ok := true
	var out []*pool
	if len(args) == 0 {
		names := make([]string, 0, len(c.m.pools))
		for n := range c.m.pools {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			out = append(out, c.m.pools[n])
		}
		return out, true
	}
	for _, a := range args {
		p := c.m.pools[a]
		if p == nil {
			c.errorf("cannot open '%s': no such pool\n", a)
			ok = false
			continue
		}
		out = append(out, p)
	}
	return out, ok
}

func (c *cli) zpoolList(args []string) int {
	opts, ops := getopt(args, ":gHLo:pPT:v")
	fields := "name,size,allocated,free,checkpoint,expandsize,fragmentation,capacity,dedupratio,health,altroot"
	literal, scripted := false, false
	for _, o := range opts {
		switch o.c {
		case 'H':
			scripted = true
		case 'o':
			fields = o.arg
		case 'p':
			literal = true
		case 'g', 'L', 'P', 'T', 'v':
		default:
			return c.badOpt(o)
		}
	}
	for len(ops) > 0 { // a trailing [interval [count]]: list once
		if _, err := strconv.ParseFloat(ops[len(ops)-1], 64); err != nil {
			break
		}
		ops = ops[:len(ops)-1]
	}
	cols, err := poolList(fields)
	if err != nil {
		c.errorf("%s\n", err)
		return c.usage()
	}
	if err := c.m.beginRead(); err != nil {
		return c.fail(err)
	}
	defer c.m.mu.RUnlock()
	pools, ok := c.pickPools(ops)
	c.m.freshen()
	c.m.spaceMu.Lock()
	defer c.m.spaceMu.Unlock()
	c.expandPools(pools, cols, literal)
	if len(pools) > 0 && !scripted {
		c.listHeader(cols)
	}
	for _, p := range pools {
		cells := make([]string, len(cols))
		right := make([]bool, len(cols))
		for i, col := range cols {
			cells[i], right[i] = c.m.poolProp(p, col.prop, literal).Value, col.prop.right
		}
		c.writeRow(cells, cols, right, scripted)
	}
	if len(ops) == 0 && !scripted && len(pools) == 0 {
		fmt.Fprint(c.out, "no pools available\n")
	}
	if !ok {
		return 1
	}
	return 0
}

// expandPools widens flexible columns to the pools' values (all columns with -p).
func (c *cli) expandPools(pools []*pool, cols []*column, literal bool) {
	for _, p := range pools {
		for _, col := range cols {
			if col.fixed && !literal {
				continue
			}
			if v := c.m.poolProp(p, col.prop, literal).Value; len(v) > col.width {
				col.width = len(v)
			}
		}
	}
}

func (c *cli) zpoolGet(args []string) int {
	opts, ops := getopt(args, ":Hpo:")
	columns := []int{colName, colProperty, colValue, colSource}
	literal, scripted := false, false
	for _, o := range opts {
		switch o.c {
		case 'p':
			literal = true
		case 'H':
			scripted = true
		case 'o':
			columns = columns[:0:0]
			for _, tok := range strings.Split(o.arg, ",") {
				if len(columns) == 4 {
					c.errorf("too many fields given to -o option\n")
					return c.usage()
				}
				col := map[string]int{"name": colName, "property": colProperty, "value": colValue,
					"source": colSource, "all": -1}[tok]
				switch col {
				case 0:
					c.errorf("invalid column name '%s'\n", tok)
					return c.usage()
				case -1:
					if len(columns) > 0 {
						c.errorf("\"all\" conflicts with specific fields given to -o option\n")
						return c.usage()
					}
					columns = []int{colName, colProperty, colValue, colSource}
				default:
					columns = append(columns, col)
				}
			}
		default:
			return c.badOpt(o)
		}
	}
	if len(ops) < 1 {
		c.errorf("missing property argument\n")
		return c.usage()
	}
	if err := c.m.beginRead(); err != nil {
		return c.fail(err)
	}
	defer c.m.mu.RUnlock()
	for _, a := range ops[1:] {
		if c.m.pools[a] == nil {
			c.errorf("Cannot get properties of %s: no such pool available.\n", ops[1])
			return 1
		}
	}
	cols, err := poolList(ops[0])
	if err != nil {
		c.errorf("%s\n", err)
		return c.usage()
	}
	if !cols[0].all {
		p := poolPropByName["name"]
		cols = append([]*column{{prop: p, width: 4}}, cols...)
	}
	pools, _ := c.pickPools(ops[1:])
	c.m.freshen()
	c.m.spaceMu.Lock()
	defer c.m.spaceMu.Unlock()
	c.expandPools(pools, cols, literal)
	g := &getPrinter{c: c, columns: columns, scripted: scripted}
	g.widths(cols)
	for _, p := range pools {
		for _, col := range cols[1:] {
			g.row(p.name, col.prop.name, c.m.poolProp(p, col.prop, literal))
		}
	}
	return 0
}

func (c *cli) zpoolSet(args []string) int {
	if len(args) > 0 && len(args[0]) > 1 && args[0][0] == '-' {
		c.errorf("invalid option '%c'\n", args[0][1])
		return c.usage()
	}
	if len(args) < 1 {
		c.errorf("missing property=value argument\n")
		return c.usage()
	}
	if len(args) < 2 {
		c.errorf("missing pool name\n")
		return c.usage()
	}
	if len(args) > 2 {
		c.errorf("too many pool names\n")
		return c.usage()
	}
	name, value, ok := strings.Cut(args[0], "=")
	if !ok {
		c.errorf("missing value in property=value argument\n")
		return c.usage()
	}
	if err := c.m.SetPoolProperty(args[1], name, value); err != nil {
		return c.fail(err)
	}
	return 0
}

func (c *cli) zpoolStatus(args []string) int {
	_, ops := getopt(args, "cDegiLpPstvxT:")
	if err := c.m.beginRead(); err != nil {
		return c.fail(err)
	}
	defer c.m.mu.RUnlock()
	pools, ok := c.pickPools(ops)
	for i, p := range pools {
		if i > 0 {
			fmt.Fprint(c.out, "\n")
		}
		fmt.Fprintf(c.out, "  pool: %s\n state: ONLINE\nconfig:\n\n", p.name)
		fmt.Fprintf(c.out, "\t%-14s  %-8s %5s %5s %5s\n", "NAME", "STATE", "READ", "WRITE", "CKSUM")
		fmt.Fprintf(c.out, "\t%-14s  %-8s %5d %5d %5d\n", p.name, "ONLINE", 0, 0, 0)
		fmt.Fprintf(c.out, "\t  %-12s  %-8s %5d %5d %5d\n", "sim-"+p.name, "ONLINE", 0, 0, 0)
		fmt.Fprint(c.out, "\nerrors: No known data errors\n")
	}
	if len(pools) == 0 && len(ops) == 0 {
		fmt.Fprint(c.out, "no pools available\n")
	}
	if !ok {
		return 1
	}
	return 0
}
