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

// poolProps are the pool properties of OpenZFS 2.2 in zpool_prop_t order.
var poolProps = []*propDesc{
	hidden(noDef(str("name", "NAME", attrReadonly, 0, "", ""))),
	num("size", "SIZE", attrReadonly, 0, "", "<size>"),
	num("capacity", "CAP", attrReadonly, 0, "", "<size>"),
	noDef(str("altroot", "ALTROOT", attrDefault, 0, "", "<path>")),
	num("health", "HEALTH", attrReadonly, 0, "", "<state>"),
	flex(num("guid", "GUID", attrReadonly, 0, "", "<guid>")),
	num("version", "VERSION", attrDefault, 0, "5000", "<version>"),
	noDef(str("bootfs", "BOOTFS", attrDefault, 0, "", "<filesystem>")),
	index("delegation", "DELEGATION", attrDefault, 0, "on", "on | off", boolTable),
	index("autoreplace", "REPLACE", attrDefault, 0, "off", "on | off", boolTable),
	noDef(str("cachefile", "CACHEFILE", attrDefault, 0, "", "<file> | none")),
	index("failmode", "FAILMODE", attrDefault, 0, "wait", "wait | continue | panic", idx("wait", "continue", "panic")),
	index("listsnapshots", "LISTSNAPS", attrDefault, 0, "off", "on | off", boolTable),
	index("autoexpand", "EXPAND", attrDefault, 0, "off", "on | off", boolTable),
	num("dedupratio", "DEDUP", attrReadonly, 0, "", "<1.00x or higher if deduped>"),
	num("free", "FREE", attrReadonly, 0, "", "<size>"),
	num("allocated", "ALLOC", attrReadonly, 0, "", "<size>"),
	index("readonly", "RDONLY", attrDefault, 0, "off", "on | off", boolTable),
	num("ashift", "ASHIFT", attrDefault, 0, "0", "<ashift, 9-16, or 0=default>"),
	noDef(str("comment", "COMMENT", attrDefault, 0, "", "<comment-string>")),
	num("expandsize", "EXPANDSZ", attrReadonly, 0, "", "<size>"),
	num("freeing", "FREEING", attrReadonly, 0, "", "<size>"),
	num("fragmentation", "FRAG", attrReadonly, 0, "", "<percent>"),
	num("leaked", "LEAKED", attrReadonly, 0, "", "<size>"),
	index("multihost", "MULTIHOST", attrDefault, 0, "off", "on | off", boolTable),
	num("checkpoint", "CKPOINT", attrReadonly, 0, "", "<size>"),
	flex(num("load_guid", "LOAD_GUID", attrReadonly, 0, "", "<load_guid>")),
	index("autotrim", "AUTOTRIM", attrDefault, 0, "off", "on | off", boolTable),
	str("compatibility", "COMPATIBILITY", attrDefault, 0, "off", "<file[,file...]> | off | legacy"),
	num("bcloneused", "BCLONE_USED", attrReadonly, 0, "", "<size>"),
	num("bclonesaved", "BCLONE_SAVED", attrReadonly, 0, "", "<size>"),
	num("bcloneratio", "BCLONE_RATIO", attrReadonly, 0, "", "<1.00x or higher if cloned>"),
}

var poolPropByName = func() map[string]*propDesc {
	m := map[string]*propDesc{}
	for _, p := range poolProps {
		m[p.name] = p
	}
	for _, p := range poolProps {
		if c := strings.ToLower(p.colname); m[c] == nil {
			m[c] = p
		}
	}
	return m
}()

// poolWidth is zprop_width for pool properties ('health' is 8 wide).
func poolWidth(p *propDesc) int {
	if p.name == "health" {
		return 8
	}
	return p.width()
}

// poolProp formats one pool property (zpool_get_prop).
func (m *Model) poolProp(p *pool, d *propDesc, literal bool) PropValue {
	pv := PropValue{Source: SourceNone, Received: "-"}
	alloc := min64(m.poolAlloc(p), p.size) // files written behind the model's back may overshoot
	size := func(n int64) string {
		if literal {
			return strconv.FormatInt(n, 10)
		}
		return niceNum(uint64(max64(n, 0)), false)
	}
	switch d.name {
	case "name":
		pv.Value = p.name
	case "size":
		pv.Value = size(p.size)
	case "allocated":
		pv.Value = size(alloc)
	case "free":
		pv.Value = size(p.size - alloc)
	case "capacity":
		pv.Value = strconv.FormatInt(alloc*100/p.size, 10)
		if !literal {
			pv.Value += "%"
		}
	case "health":
		pv.Value = "ONLINE"
	case "guid":
		pv.Value = strconv.FormatUint(p.guid, 10)
	case "load_guid":
		pv.Value = strconv.FormatUint(p.guid^0x5a5a5a5a5a5a5a5a, 10)
	case "dedupratio", "bcloneratio":
		pv.Value = ratio(100, literal)
	case "expandsize", "checkpoint":
		pv.Value = "-"
	case "fragmentation":
		pv.Value = "0"
		if !literal {
			pv.Value += "%"
		}
	case "freeing", "leaked", "bcloneused", "bclonesaved":
		pv.Value = size(0)
	default:
		v, ok := p.props[d.name]
		pv.Source = SourceLocal
		if !ok {
			v, pv.Source = d.def, SourceDefault
			if d.noDef {
				v = "-"
			}
		}
		if d.name == "version" && v == "5000" {
			v = "-"
		}
		pv.Value = v
	}
	return pv
}

// Zpool runs a zpool(8) command line (args exclude the program name) and
// returns its exit status.
func (m *Model) Zpool(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	c := newCLI(m, "zpool", stdin, stdout, stderr)
	defer c.out.Flush()
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
	var props []*propDesc
	for _, p := range poolProps {
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
		case ':':
			c.errorf("missing argument for '%c' option\n", o.bad)
			return c.usage()
		default:
			c.errorf("invalid option '%c'\n", o.bad)
			return c.usage()
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
	if len(pools) > 0 && !scripted {
		c.listHeader(cols)
	}
	for _, p := range pools {
		var b strings.Builder
		for i, col := range cols {
			if i > 0 {
				if scripted {
					b.WriteByte('\t')
				} else {
					b.WriteString("  ")
				}
			}
			s := c.m.poolProp(p, col.prop, literal).Value
			switch {
			case scripted || i == len(cols)-1 && !col.prop.right:
				b.WriteString(s)
			case col.prop.right:
				fmt.Fprintf(&b, "%*s", col.width, s)
			default:
				fmt.Fprintf(&b, "%-*s", col.width, s)
			}
		}
		b.WriteString("\n")
		c.out.WriteString(b.String())
	}
	if len(ops) == 0 && !scripted && len(pools) == 0 {
		fmt.Fprint(c.out, "no pools available\n")
	}
	if !ok {
		return 1
	}
	return 0
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
			if o.c == ':' {
				c.errorf("missing argument for '%c' option\n", o.bad)
			} else {
				c.errorf("invalid option '%c'\n", o.bad)
			}
			return c.usage()
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
	if len(args) > 0 && strings.HasPrefix(args[0], "-") {
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

// SetPoolProperty sets a settable pool property (zpool set).
func (m *Model) SetPoolProperty(poolName, prop, value string) error {
	if err := m.begin(); err != nil {
		return err
	}
	defer m.mu.Unlock()
	p := m.pools[poolName]
	if p == nil {
		return newErr(KindNotFound, "cannot open '%s': no such pool", poolName)
	}
	prefix := "cannot set property for '" + poolName + "'"
	d := poolPropByName[prop]
	switch {
	case d == nil || !d.visible:
		return newErr(KindInvalid, "%s: invalid property '%s'", prefix, prop)
	case d.readonly():
		return newErr(KindReadOnly, "%s: '%s' is readonly", prefix, prop)
	case d.name == "version" || d.name == "ashift" || d.name == "altroot":
		return newErr(KindNotSupported, "%s: '%s' is not modelled", prefix, prop)
	case d.kind == kindIndex:
		v, ok := d.indexValue(value)
		if !ok {
			return newErr(KindInvalid, "%s: '%s' must be one of '%s'", prefix, d.name, d.values)
		}
		value = v
	}
	if p.props == nil {
		p.props = map[string]string{}
	}
	p.props[d.name] = value
	return m.writePool(p)
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
