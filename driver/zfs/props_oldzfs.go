package zfs

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// An old zfs (zfs-fuse, the OpenSolaris-era command line that ZFS on Linux
// and illumos later extended) has `zfs get -p` but not `zfs list -p`, and
// lacks some properties newer ones list (clones, the encryption ones). The
// zfs-local drivers meet it on nodes; List reads such a host through `zfs
// get` rather than ask every host first, so a modern zfs pays nothing.

// oldZFS is what a CLI found its host's zfs to lack, learnt from the
// host's own refusals and kept for the CLI's life.
type oldZFS struct {
	mu      sync.Mutex
	noListP bool
	unknown map[string]bool // properties `zfs get` refused
}

func (o *oldZFS) listByGet() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.noListP
}

func (o *oldZFS) setListByGet() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.noListP = true
}

func (o *oldZFS) setUnknown(prop string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.unknown == nil {
		o.unknown = map[string]bool{}
	}
	o.unknown[prop] = true
}

// known is props without those the host's zfs refused.
func (o *oldZFS) known(props []string) []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.DeleteFunc(slices.Clone(props), func(p string) bool { return o.unknown[p] })
}

// refusesListP: `zfs list` refused its -p option (the message of every zfs
// whose list lacks it; a modern zfs never prints it for -p).
func refusesListP(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Command == "zfs list" && strings.Contains(e.Stderr, "invalid option 'p'")
}

// invalidProperty is the property in zfs's "bad property list: invalid
// property 'clones'".
func invalidProperty(err error) (string, bool) {
	var e *Error
	if !errors.As(err, &e) {
		return "", false
	}
	const mark = "invalid property '"
	i := strings.Index(e.Stderr, mark)
	if i < 0 {
		return "", false
	}
	rest := e.Stderr[i+len(mark):]
	j := strings.IndexByte(rest, '\'')
	if j <= 0 {
		return "", false
	}
	return rest[:j], true
}

// listByGet is List for a zfs without `list -p`: `zfs get -Hp -o
// name,property,value type,<props> [-r|-d n] root`, whose rows are
// gathered per dataset and filtered by type (this `get` has no -t, and
// walks snapshots too). The depth counts as list's does (both walk with
// the same iterator). Without Types, filesystems and volumes are listed,
// as `zfs list` does, and root whatever it is. A property the host's zfs
// refuses is left out of the command (remembered, so only its first
// refusal costs an exec) and is "-", as List reports any value zfs does
// not have: on zfs-fuse that is `clones`, whose callers' checks zfs makes
// again itself (`zfs destroy` without -R refuses a dataset with dependent
// clones).
func (c *CLI) listByGet(ctx context.Context, root string, o ListOptions) ([]Row, error) {
	types := o.Types
	if len(types) == 0 {
		types = []string{"filesystem", "volume"}
	}
	for {
		props := c.old.known(o.Props)
		cols := []string{"type"}
		for _, p := range props {
			if p != "type" {
				cols = append(cols, p)
			}
		}
		a := append([]string{"-Hp", "-o", "name,property,value"}, depthArgs(o)...)
		out, err := c.zfs(ctx, "get", append(a, strings.Join(cols, ","), root)...)
		if p, ok := invalidProperty(err); ok && p != "type" && slices.Contains(props, p) {
			c.old.setUnknown(p)
			continue // one fewer each time: ends
		}
		if err != nil {
			return nil, err
		}
		return rowsOfGet(out.Stdout, root, types, len(o.Types) == 0, o.Props)
	}
}

// rowsOfGet turns `zfs get -o name,property,value` rows (name and
// property first; the value may hold tabs) into List's rows, in the order
// zfs printed the datasets.
func rowsOfGet(stdout, root string, types []string, anyRoot bool, props []string) ([]Row, error) {
	var names []string
	vals := map[string]map[string]string{}
	for _, line := range strings.Split(stdout, "\n") {
		line = strings.TrimRight(line, "\r")
		if line == "" {
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) < 3 {
			return nil, fmt.Errorf("zfs get: unexpected output line %q", line)
		}
		if vals[f[0]] == nil {
			vals[f[0]] = map[string]string{}
			names = append(names, f[0])
		}
		vals[f[0]][f[1]] = strings.Join(f[2:], "\t")
	}
	var rows []Row
	for _, n := range names {
		v := vals[n]
		if !slices.Contains(types, v["type"]) && (!anyRoot || n != root) {
			continue
		}
		r := Row{Name: n, Props: make(map[string]string, len(props))}
		for _, p := range props {
			r.Props[p] = "-"
			if x, ok := v[p]; ok {
				r.Props[p] = x
			}
		}
		rows = append(rows, r)
	}
	return rows, nil
}
