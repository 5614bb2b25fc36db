package zfsmodel

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// zfs list and zfs get: property lists, column widths and output as
// libzfs's zprop_get_list, zfs_expand_proplist and the print functions.

// column is one entry of a property list (zprop_list_t).
type column struct {
	prop       *propDesc // native property, or nil
	user       string    // user property (or an unmodelled userquota@/written@ name)
	width      int
	fixed      bool
	recvdWidth int
	all        bool // added by "all"
}

func (col *column) name() string {
	if col.prop != nil {
		return col.prop.name
	}
	return col.user
}

// propList mirrors zprop_get_list for datasets; "all" returns nil.
func propList(list string) ([]*column, error) {
	if list == "all" {
		return nil, nil
	}
	if list == "" {
		return nil, newErr(KindInvalid, "bad property list: no properties specified")
	}
	var cols []*column
	add := func(name string) error {
		if p := lookupProp(name); p != nil {
			cols = append(cols, &column{prop: p, width: p.width(), fixed: !p.flex})
			return nil
		}
		if isUserProp(name) || isUserquotaProp(name) || isWrittenProp(name) {
			cols = append(cols, &column{user: name, width: len(name)})
			return nil
		}
		return newErr(KindInvalid, "bad property list: invalid property '%s'", name)
	}
	for _, p := range strings.Split(list, ",") {
		if p == "space" {
			for _, s := range []string{"name", "avail", "used", "usedbysnapshots", "usedbydataset", "usedbyrefreservation", "usedbychildren"} {
				if err := add(s); err != nil {
					return nil, err
				}
			}
			continue
		}
		if err := add(p); err != nil {
			return nil, err
		}
	}
	return cols, nil
}

// expandAll builds the "all" list: name, then every visible property.
func expandAll() []*column {
	p := propByName["name"]
	cols := []*column{{prop: p, width: p.width(), all: true}}
	for _, p := range propTable {
		if p.visible {
			cols = append(cols, &column{prop: p, width: p.width(), fixed: !p.flex, all: true})
		}
	}
	return cols
}

// expand mirrors zfs_expand_proplist for one dataset: "all" lists gain the
// dataset's user properties; flexible columns grow to fit its values.
func (c *cli) expand(d *dataset, cols []*column, literal, received bool) []*column {
	if len(cols) > 0 && cols[0].all {
		have := map[string]bool{}
		for _, col := range cols {
			if col.prop == nil {
				have[col.user] = true
			}
		}
		for _, u := range userPropNames(d) {
			if !have[u] {
				cols = append(cols, &column{user: u, width: len(u), all: true})
			}
		}
	}
	for _, col := range cols {
		if col.fixed && !literal {
			continue
		}
		pv, ok := c.value(d, col, literal)
		if ok && len(pv.Value) > col.width {
			col.width = len(pv.Value)
		}
		if received && ok && pv.Received != "-" && len(pv.Received) > col.recvdWidth {
			col.recvdWidth = len(pv.Received)
		}
	}
	return cols
}

// value is one column's value for a dataset; ok=false when zfs prints "-"
// (or, for "all" lists, skips it).
func (c *cli) value(d *dataset, col *column, literal bool) (PropValue, bool) {
	if col.prop != nil {
		return c.m.nativeProp(d, col.prop, literal)
	}
	if isUserquotaProp(col.user) || isWrittenProp(col.user) {
		return PropValue{Value: "-", Source: SourceNone, Received: "-"}, false
	}
	return userProp(d, col.user)
}

// needsSpace reports whether a list shows space figures (which are then
// measured before printing).
func needsSpace(cols []*column) bool {
	for _, col := range cols {
		if col.prop == nil {
			continue
		}
		switch col.prop.name {
		case "used", "available", "referenced", "usedbysnapshots", "usedbydataset", "usedbychildren",
			"usedbyrefreservation", "written", "logicalused", "logicalreferenced":
			return true
		}
	}
	return cols == nil
}

// parseTypes parses a -t list; ok=false with the bad token.
func parseTypes(arg string) (Type, string, bool) {
	var t Type
	for _, tok := range strings.Split(arg, ",") {
		switch tok {
		case "filesystem", "fs":
			t |= Filesystem
		case "volume", "vol":
			t |= Volume
		case "snapshot", "snap":
			t |= Snapshot
		case "bookmark":
		case "all":
			t |= AnyType
		default:
			return 0, tok, false
		}
	}
	return t, "", true
}

// iterOpt applies -d (parse_depth), -r and -t, which zfs list and zfs get
// share; false after printing the complaint.
func (c *cli) iterOpt(o opt, it *iterSpec) bool {
	switch o.c {
	case 'd':
		n, err := strconv.ParseInt(o.arg, 0, 32)
		if err != nil {
			c.errorf("%s is not an integer\n", o.arg)
			return false
		}
		if n < 0 {
			c.errorf("Depth can not be negative.\n")
			return false
		}
		it.depth, it.limited, it.recurse = int(n), true, true
	case 'r':
		it.recurse = true
	case 't':
		t, bad, ok := parseTypes(o.arg)
		if !ok {
			c.errorf("invalid type '%s'\n", bad)
			return false
		}
		it.types = t
	}
	return true
}

type sortCol struct {
	prop    *propDesc
	user    string
	reverse bool
}

func (c *cli) zfsList(args []string) int {
	opts, ops := getopt(args, "HS:d:o:prs:t:")
	fields := "name,used,available,referenced,mountpoint"
	it := iterSpec{types: AnyType, pathArgs: true}
	listSnaps := true // ZFS_ITER_PROP_LISTSNAPS: the pool's listsnapshots (off)
	typesGiven, literal, scripted := false, false, false
	var sorts []sortCol
	for _, o := range opts {
		switch o.c {
		case 'o':
			fields = o.arg
		case 'p':
			literal = true
		case 'd', 'r', 't':
			if !c.iterOpt(o, &it) {
				return c.usage()
			}
			if o.c == 't' {
				typesGiven, listSnaps = true, false
			}
		case 'H':
			scripted = true
		case 's', 'S':
			p := lookupProp(o.arg)
			if p == nil && !isUserProp(o.arg) {
				c.errorf("invalid property '%s'\n", o.arg)
				return c.usage()
			}
			sorts = append(sorts, sortCol{prop: p, user: o.arg, reverse: o.c == 'S'})
		default:
			return c.badOpt(o)
		}
	}
	if fields == "space" && !typesGiven {
		it.types &^= Snapshot
	}
	if it.types == Snapshot && len(ops) > 0 && !it.recurse {
		it.recurse, it.limited, it.depth = true, true, 1
	}
	it.includeSnaps = it.types&Snapshot != 0 && !listSnaps
	it.poolSnaps = listSnaps
	cols, err := propList(fields)
	if err != nil {
		c.errorf("%s\n", err)
		return c.usage()
	}
	if cols == nil {
		cols = expandAll()
	}
	if err := c.m.beginRead(); err != nil {
		return c.fail(err)
	}
	defer c.m.mu.RUnlock()
	ds, collectErr := c.m.collect(ops, it)
	if collectErr != nil {
		c.errorf("%s\n", collectErr)
	}
	c.measure(ds, needsSpace(cols) || len(sorts) > 0)
	c.m.spaceMu.Lock()
	defer c.m.spaceMu.Unlock()
	if len(sorts) > 0 {
		sort.SliceStable(ds, func(i, j int) bool { return c.sortLess(ds[i], ds[j], sorts) })
	}
	for _, d := range ds {
		cols = c.expand(d, cols, literal, false)
	}
	if len(ds) > 0 && !scripted {
		c.listHeader(cols)
	}
	for _, d := range ds {
		c.listRow(d, cols, literal, scripted)
	}
	if len(ds) == 0 && !scripted && collectErr == nil {
		c.out.Flush()
		c.errorf("no datasets available\n")
	}
	if collectErr != nil {
		return 1
	}
	return 0
}

// measure refreshes the space figures of the datasets about to be shown.
func (c *cli) measure(ds []*dataset, space bool) {
	if !space {
		return
	}
	c.m.freshen()
	for _, d := range ds {
		c.m.refresh(d)
	}
}

func (c *cli) listHeader(cols []*column) {
	cells := make([]string, len(cols))
	right := make([]bool, len(cols))
	for i, col := range cols {
		cells[i] = strings.ToUpper(col.user)
		if col.prop != nil {
			cells[i], right[i] = col.prop.colname, col.prop.right
		}
	}
	c.writeRow(cells, cols, right, false)
}

func (c *cli) listRow(d *dataset, cols []*column, literal, scripted bool) {
	cells := make([]string, len(cols))
	right := make([]bool, len(cols))
	for i, col := range cols {
		cells[i] = "-"
		if pv, ok := c.value(d, col, literal); ok {
			cells[i] = pv.Value
		}
		right[i] = col.prop != nil && col.prop.right || isUserquotaProp(col.user) || isWrittenProp(col.user)
	}
	c.writeRow(cells, cols, right, scripted)
}

// writeRow prints one line of zfs list or zpool list: two spaces between
// padded columns (the last left-aligned one unpadded), or tabs with -H.
func (c *cli) writeRow(cells []string, cols []*column, right []bool, scripted bool) {
	var b strings.Builder
	for i, s := range cells {
		if i > 0 {
			if scripted {
				b.WriteByte('\t')
			} else {
				b.WriteString("  ")
			}
		}
		switch {
		case scripted || i == len(cells)-1 && !right[i]:
			b.WriteString(s)
		case right[i]:
			fmt.Fprintf(&b, "%*s", cols[i].width, s)
		default:
			fmt.Fprintf(&b, "%-*s", cols[i].width, s)
		}
	}
	b.WriteString("\n")
	c.out.WriteString(b.String())
}

// sortLess is zfs_sort: sort columns in order, then zfs_compare.
func (c *cli) sortLess(l, r *dataset, sorts []sortCol) bool {
	for _, sc := range sorts {
		var ls, rs string
		var lv, rv bool
		var ln, rn uint64
		numeric := false
		switch {
		case sc.prop == nil:
			lp, lok := userProp(l, sc.user)
			rp, rok := userProp(r, sc.user)
			ls, rs, lv, rv = lp.Value, rp.Value, lok, rok
		case sc.prop.name == "name":
			ls, rs, lv, rv = l.full, r.full, true, true
		case sc.prop.kind != kindNumber:
			lp, lok := c.m.nativeProp(l, sc.prop, true)
			rp, rok := c.m.nativeProp(r, sc.prop, true)
			ls, rs, lv, rv = lp.Value, rp.Value, lok, rok
		default:
			numeric = true
			lv, rv = validFor(sc.prop, l), validFor(sc.prop, r)
			ln, rn = c.numValue(l, sc.prop), c.numValue(r, sc.prop)
		}
		switch {
		case !lv && !rv:
			continue
		case !lv:
			return false
		case !rv:
			return true
		}
		cmp := 0
		if numeric {
			switch {
			case ln < rn:
				cmp = -1
			case ln > rn:
				cmp = 1
			}
		} else {
			cmp = strings.Compare(ls, rs)
		}
		if cmp != 0 {
			if sc.reverse {
				cmp = -cmp
			}
			return cmp < 0
		}
	}
	return compareDatasets(l, r) < 0
}

func (c *cli) numValue(d *dataset, p *propDesc) uint64 {
	pv, ok := c.m.nativeProp(d, p, true)
	if !ok {
		return 0
	}
	if pv.Value == "none" {
		return math.MaxUint64
	}
	n, _ := strconv.ParseUint(pv.Value, 10, 64)
	return n
}
