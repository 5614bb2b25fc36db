package zfsmodel

import (
	"fmt"
	"strings"
)

// zfs get: columns, sources and the get output format (shared with zpool get).

// get columns (GET_COL_*).
const (
	colNone = iota
	colName
	colProperty
	colValue
	colReceived
	colSource
)

// zfs get's -s and -o names (built once: a map literal in the loop was
// built again for every name of every zfs get).
var (
	getSources = map[string]Source{"local": SourceLocal, "default": SourceDefault, "inherited": SourceInherited,
		"received": SourceReceived, "temporary": SourceTemporary, "none": SourceNone}
	getColumnNames = map[string]int{"name": colName, "property": colProperty, "value": colValue,
		"received": colReceived, "source": colSource, "all": -1}
)

func (c *cli) zfsGet(args []string) int {
	opts, ops := getopt(args, ":d:o:s:rt:Hp")
	columns := []int{colName, colProperty, colValue, colSource}
	sources := sourceAll
	it := iterSpec{types: AnyType, pathArgs: true}
	literal, scripted, received := false, false, false
	for _, o := range opts {
		switch o.c {
		case 'p':
			literal = true
		case 'd', 'r', 't':
			if !c.iterOpt(o, &it) {
				return c.usage()
			}
		case 'H':
			scripted = true
		case 'o':
			var ok bool
			if columns, received, ok = c.getColumns(o.arg); !ok {
				return c.usage()
			}
		case 's':
			sources = 0
			for _, tok := range strings.Split(o.arg, ",") {
				s, ok := getSources[tok]
				if !ok {
					c.errorf("invalid source '%s'\n", tok)
					return c.usage()
				}
				sources |= s
			}
		default:
			return c.badOpt(o)
		}
	}
	if len(ops) < 1 {
		c.errorf("missing property argument\n")
		return c.usage()
	}
	it.includeSnaps = it.types&Snapshot != 0
	if it.types == Snapshot && len(ops) > 1 && !it.recurse {
		it.recurse, it.limited, it.depth = true, true, 1
	}
	cols, err := propList(ops[0])
	if err != nil {
		c.errorf("%s\n", err)
		return c.usage()
	}
	if cols == nil {
		cols = expandAll()
	} else {
		p := propByName["name"]
		cols = append([]*column{{prop: p, width: 4}}, cols...)
	}
	if err := c.m.beginRead(); err != nil {
		return c.fail(err)
	}
	defer c.m.mu.RUnlock()
	ds, collectErr := c.m.collect(ops[1:], it)
	if collectErr != nil {
		c.errorf("%s\n", collectErr)
	}
	c.measure(ds, needsSpace(cols))
	c.m.spaceMu.Lock()
	defer c.m.spaceMu.Unlock()
	for _, d := range ds {
		cols = c.expand(d, cols, literal, received)
	}
	g := &getPrinter{c: c, columns: columns, scripted: scripted}
	g.widths(cols)
	for _, d := range ds {
		for _, col := range cols[1:] {
			pv, ok := c.value(d, col, literal)
			if !ok {
				if col.all {
					continue
				}
				pv = PropValue{Value: "-", Source: SourceNone, Received: pv.Received}
				if pv.Received == "" {
					pv.Received = "-"
				}
			}
			if pv.Source&sources == 0 {
				continue
			}
			g.row(d.full, col.name(), pv)
		}
	}
	if collectErr != nil {
		return 1
	}
	return 0
}

// getColumns parses zfs get -o; it reports whether "received" is shown.
func (c *cli) getColumns(arg string) ([]int, bool, bool) {
	var columns []int
	received := false
	for _, tok := range strings.Split(arg, ",") {
		if len(columns) == 5 {
			c.errorf("too many fields given to -o option\n")
			return nil, false, false
		}
		col := getColumnNames[tok]
		switch col {
		case 0:
			c.errorf("invalid column name '%s'\n", tok)
			return nil, false, false
		case -1:
			if len(columns) > 0 {
				c.errorf("\"all\" conflicts with specific fields given to -o option\n")
				return nil, false, false
			}
			columns = []int{colName, colProperty, colValue, colReceived, colSource}
			received = true
		default:
			columns = append(columns, col)
			received = received || col == colReceived
		}
	}
	return columns, received, true
}

// getPrinter prints zfs get / zpool get rows (zprop_print_one_property).
type getPrinter struct {
	c        *cli
	columns  []int
	scripted bool
	w        [6]int
	started  bool
}

// widths is zprop_print_headers' width computation.
func (g *getPrinter) widths(cols []*column) {
	g.w[colName], g.w[colProperty], g.w[colValue], g.w[colReceived], g.w[colSource] = 4, 8, 5, 8, 6
	for i, col := range cols {
		if len(col.name()) > g.w[colProperty] && !(i == 0 && col.prop != nil && col.prop.name == "name") {
			g.w[colProperty] = len(col.name())
		}
		if i > 0 && col.width > g.w[colValue] {
			g.w[colValue] = col.width
		}
		if i > 0 && col.recvdWidth > g.w[colReceived] {
			g.w[colReceived] = col.recvdWidth
		}
		if col.prop != nil && col.prop.name == "name" && col.width > g.w[colName] {
			g.w[colName] = col.width
			g.w[colSource] = col.width + len("inherited from")
		}
	}
}

// line writes one row into the buffered output, cell by cell: a row
// assembled first cost a copy and an allocation per row (zfs get answers
// every create of a driver's). A bufio.Writer's error is sticky: the
// command's final flush reports it.
func (g *getPrinter) line(cells []string) {
	out := g.c.out
	for i, s := range cells {
		last := i == len(cells)-1
		switch {
		case last:
			_, _ = out.WriteString(s)
		case g.scripted:
			_, _ = out.WriteString(s)
			_ = out.WriteByte('\t')
		default:
			fmt.Fprintf(out, "%-*s  ", g.w[g.columns[i]], s)
		}
	}
	_ = out.WriteByte('\n')
}

func (g *getPrinter) row(name, prop string, pv PropValue) {
	if !g.started {
		g.started = true
		if !g.scripted {
			titles := map[int]string{colName: "NAME", colProperty: "PROPERTY", colValue: "VALUE",
				colReceived: "RECEIVED", colSource: "SOURCE"}
			cells := make([]string, len(g.columns))
			for i, col := range g.columns {
				cells[i] = titles[col]
			}
			g.line(cells)
		}
	}
	cells := make([]string, len(g.columns))
	for i, col := range g.columns {
		switch col {
		case colName:
			cells[i] = name
		case colProperty:
			cells[i] = prop
		case colValue:
			cells[i] = pv.Value
		case colReceived:
			cells[i] = pv.Received
		case colSource:
			cells[i] = pv.SourceString()
		}
	}
	g.line(cells)
}
