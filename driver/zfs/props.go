package zfs

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// Property is one value as `zfs get` reports it.
type Property struct {
	Value  string
	Source string // "local", "default", "inherited from x", "-", ...
}

// IsSet reports whether a (user) property has a value: zfs prints "-" for
// one that was never set.
func (p Property) IsSet() bool { return p.Value != "" && p.Value != "-" }

// Properties are the values of one dataset, by property name.
type Properties map[string]Property

// Int reads a numeric property as bytes (or count), -1 when unset or "none".
func (p Properties) Int(name string) int64 {
	v, ok := p[name]
	if !ok || !v.IsSet() || v.Value == "none" {
		return -1
	}
	n, err := strconv.ParseInt(v.Value, 10, 64)
	if err != nil {
		if s, err := ParseSize(v.Value); err == nil {
			return s
		}
		return -1
	}
	return n
}

// Get runs `zfs get -Hp -o name,property,value,source p1,p2 name`.
func (c *CLI) Get(ctx context.Context, name string, props ...string) (Properties, error) {
	out, err := c.zfs(ctx, "get", "-Hp", "-o", "name,property,value,source", strings.Join(props, ","), name)
	if err != nil {
		return nil, err
	}
	return parseGet(out.Stdout)
}

// parseGet reads `zfs get -Hp -o name,property,value,source` output. It
// cuts the lines and fields out of stdout rather than splitting them into
// slices: every create and delete parses such a read-back (issue 16).
func parseGet(stdout string) (Properties, error) {
	res := make(Properties, strings.Count(stdout, "\n")+1)
	for rest := stdout; rest != ""; {
		var line string
		line, rest, _ = strings.Cut(rest, "\n")
		line = strings.TrimRight(line, "\r")
		if line == "" {
			continue
		}
		// The value may itself hold tabs: name and property come first,
		// source last.
		_, afterName, ok1 := strings.Cut(line, "\t")
		prop, valueSource, ok2 := strings.Cut(afterName, "\t")
		last := strings.LastIndexByte(valueSource, '\t')
		if !ok1 || !ok2 || last < 0 {
			return nil, fmt.Errorf("zfs get: unexpected output line %q", line)
		}
		res[prop] = Property{Value: valueSource[:last], Source: valueSource[last+1:]}
	}
	return res, nil
}

// ListOptions tune List.
type ListOptions struct {
	Recursive bool
	Depth     int      // > 0: -d depth
	Types     []string // filesystem, volume, snapshot
	Props     []string // columns after name
}

// Row is one dataset from List: its name and the asked-for columns.
type Row struct {
	Name  string
	Props map[string]string
}

// List runs `zfs list -Hp -o name,<props> [-t types] [-r|-d n] root`. A
// value zfs does not have is "-". A zfs whose `list` has no -p (zfs-fuse,
// OpenSolaris-era zfs) is read with `zfs get -p` instead (listByGet),
// which such a zfs has: the first refusal is remembered for the CLI's
// life, so a modern zfs still takes one exec per List and an old one an
// extra exec once.
func (c *CLI) List(ctx context.Context, root string, o ListOptions) ([]Row, error) {
	if !c.old.listByGet() {
		rows, err := c.listParsable(ctx, root, o)
		if !refusesListP(err) {
			return rows, err
		}
		c.old.setListByGet()
	}
	return c.listByGet(ctx, root, o)
}

func (c *CLI) listParsable(ctx context.Context, root string, o ListOptions) ([]Row, error) {
	a := []string{"-Hp", "-o", strings.Join(append([]string{"name"}, o.Props...), ",")}
	if len(o.Types) > 0 {
		a = append(a, "-t", strings.Join(o.Types, ","))
	}
	a = append(a, depthArgs(o)...)
	out, err := c.zfs(ctx, "list", append(a, root)...)
	if err != nil {
		return nil, err
	}
	var rows []Row
	for _, line := range strings.Split(out.Stdout, "\n") {
		line = strings.TrimRight(line, "\r")
		if line == "" {
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) != len(o.Props)+1 {
			return nil, fmt.Errorf("zfs list: %d columns expected, got %q", len(o.Props)+1, line)
		}
		r := Row{Name: f[0], Props: make(map[string]string, len(o.Props))}
		for i, p := range o.Props {
			r.Props[p] = f[i+1]
		}
		rows = append(rows, r)
	}
	return rows, nil
}

func depthArgs(o ListOptions) []string {
	if o.Depth > 0 {
		return []string{"-d", fmt.Sprint(o.Depth)}
	}
	if o.Recursive {
		return []string{"-r"}
	}
	return nil
}
