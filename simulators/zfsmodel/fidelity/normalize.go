package fidelity

import (
	"regexp"
	"sort"
	"strings"
)

// A kind of volatile value: one that two correct zfs hosts running the
// same commands print differently.
type kind int

const (
	stable kind = iota
	date        // creation: when the command ran
	id          // guid, createtxg, objsetid: host-chosen numbers
	size        // space figures: depend on the on-disk layout
)

var volatile = map[string]kind{
	"creation": date,
	"guid":     id, "createtxg": id, "objsetid": id,
	"used": size, "available": size, "avail": size, "referenced": size, "refer": size,
	"usedbysnapshots": size, "usedbydataset": size, "usedbychildren": size, "usedbyrefreservation": size,
	"usedsnap": size, "usedds": size, "usedchild": size, "usedrefreserv": size,
	"written": size, "logicalused": size, "logicalreferenced": size, "lused": size, "lrefer": size,
}

var (
	// ctime(3)-like, as zfs prints creation: "Sat Nov  1 18:49 2026".
	dateText = regexp.MustCompile(`[A-Z][a-z]{2} [A-Z][a-z]{2} {1,2}\d{1,2} \d{1,2}:\d{2} \d{4}`)
	dateRE   = regexp.MustCompile(`^` + dateText.String() + `$`)
	digitsRE = regexp.MustCompile(`^\d+$`)
	// Below 1K zfs-fuse prints "512", OpenZFS "512B" (zfs_nicebytes in
	// lib/libzutil/zutil_nicenum.c); both are masked.
	humanSize  = regexp.MustCompile(`^(\d+B?|\d+(\.\d+)?[KMGTPEZ])$`)
	manySpaces = regexp.MustCompile(` {2,}`)
)

// mask replaces v by a placeholder when it has the form expected of a
// value of kind k (exact numbers when parsable); anything else is kept, so
// a malformed value still shows up as a difference.
func mask(k kind, v string, parsable bool) string {
	switch k {
	case date:
		if dateRE.MatchString(v) && !parsable || digitsRE.MatchString(v) && parsable || v == "<date>" {
			return "<date>"
		}
	case id:
		if digitsRE.MatchString(v) {
			return "<id>"
		}
	case size:
		if parsable && digitsRE.MatchString(v) || !parsable && humanSize.MatchString(v) {
			return "<size>"
		}
	}
	return v
}

// command is what Normalize needs to know of a zfs get/list command line.
type command struct {
	sub      string
	scripted bool     // -H: no header, tab-separated
	parsable bool     // -p: exact numbers
	fields   []string // output columns
	props    []string // zfs get: the properties asked for
}

func parseCommand(args []string) (command, bool) {
	if len(args) == 0 || args[0] != "get" && args[0] != "list" {
		return command{}, false
	}
	c := command{sub: args[0]}
	var operands []string
	for i := 1; i < len(args); i++ {
		a := args[i]
		if len(a) < 2 || a[0] != '-' || len(operands) > 0 {
			operands = append(operands, a)
			continue
		}
		for j := 1; j < len(a); j++ {
			switch a[j] {
			case 'H':
				c.scripted = true
			case 'p':
				c.parsable = true
			case 'd', 'o', 's', 'S', 't':
				val := a[j+1:]
				if val == "" && i+1 < len(args) {
					i++
					val = args[i]
				}
				if a[j] == 'o' {
					c.fields = strings.Split(val, ",")
				}
				j = len(a)
			}
		}
	}
	switch {
	case c.sub == "list" && c.fields == nil:
		c.fields = []string{"name", "used", "avail", "refer", "mountpoint"}
	case c.sub == "get" && c.fields == nil:
		c.fields = []string{"name", "property", "value", "source"}
	case c.sub == "get" && len(c.fields) == 1 && c.fields[0] == "all":
		c.fields = []string{"name", "property", "value", "received", "source"}
	}
	if c.sub == "get" && len(operands) > 0 {
		c.props = strings.Split(operands[0], ",")
	}
	return c, true
}

// kindOf is the kind of column i of a row: for zfs list the column's
// property; for zfs get's value columns the row's property (or, without a
// property column, the one property asked for).
func (c command) kindOf(i int, row []string) kind {
	f := c.fields[i]
	if c.sub == "list" {
		return volatile[f]
	}
	if f != "value" {
		return stable
	}
	for j, g := range c.fields {
		if g == "property" && j < len(row) {
			return volatile[row[j]]
		}
	}
	if len(c.props) == 1 {
		return volatile[c.props[0]]
	}
	return stable
}

// mayHaveVolatile tells whether any output value may be volatile.
func (c command) mayHaveVolatile() bool {
	if c.sub == "list" {
		for _, f := range c.fields {
			if volatile[f] != stable {
				return true
			}
		}
		return false
	}
	for _, p := range c.props {
		if p == "all" || volatile[p] != stable {
			return true
		}
	}
	return false
}

// sortDependents sorts the datasets zfs destroy lists after "use '-r' (or
// '-R') to destroy the following datasets:". zfs walks children and clones
// in the order of their on-disk hash tables, which no other host shares.
func sortDependents(stderr string) string {
	lines := strings.SplitAfter(stderr, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "use '-") && strings.HasSuffix(l, "' to destroy the following datasets:\n") {
			rest := lines[i+1:]
			if n := len(rest); n > 0 && rest[n-1] == "" {
				rest = rest[:n-1]
			}
			sort.Strings(rest)
			break
		}
	}
	return strings.Join(lines, "")
}

// Normalize masks the values of a zfs get or zfs list result that
// legitimately differ between two hosts running the same commands:
// creation times, guids and space figures. Without -H, columns are
// re-joined with tabs when a value was masked, since column widths follow
// the values. The datasets a failed zfs destroy lists are sorted. Other
// results are returned unchanged.
func Normalize(args []string, r Result) Result {
	if len(args) > 0 && args[0] == "destroy" {
		r.Stderr = sortDependents(r.Stderr)
	}
	c, ok := parseCommand(args)
	if !ok || r.Stdout == "" || !c.mayHaveVolatile() {
		return r
	}
	lines := strings.Split(strings.TrimSuffix(r.Stdout, "\n"), "\n")
	for n, line := range lines {
		var row []string
		if c.scripted {
			row = strings.Split(line, "\t")
		} else {
			if n == 0 {
				lines[0] = strings.Join(manySpaces.Split(strings.TrimSpace(line), -1), "\t")
				continue
			}
			// Dates hold runs of spaces ("Nov  1"): mask them before splitting.
			line = dateText.ReplaceAllString(line, "<date>")
			row = manySpaces.Split(strings.TrimSpace(line), -1)
		}
		if len(row) != len(c.fields) {
			continue // not a row of this table: leave it for the comparison to show
		}
		for i := range row {
			if k := c.kindOf(i, row); k != stable {
				row[i] = mask(k, row[i], c.parsable)
			}
		}
		lines[n] = strings.Join(row, "\t")
	}
	r.Stdout = strings.Join(lines, "\n") + "\n"
	return r
}
