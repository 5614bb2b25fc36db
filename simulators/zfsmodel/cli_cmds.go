package zfsmodel

import (
	"fmt"
	"strconv"
	"strings"
)

// zfs subcommands that change datasets, after cmd/zfs/zfs_main.c.

func (c *cli) zfsCreate(args []string) int {
	opts, ops := getopt(args, ":PV:b:nso:puv")
	typ := Filesystem
	var co CreateOptions
	var props []kv
	var volsize, bs uint64
	bflag, dry, verbose, parsable, nomount := false, false, false, false, false
	for _, o := range opts {
		switch o.c {
		case 'V':
			typ = Volume
			n, aux := parseNiceNum(o.arg)
			if aux != "" {
				c.errorf("bad volume size '%s': %s\n", o.arg, aux)
				return 1
			}
			volsize = n
		case 'P':
			verbose, parsable = true, true
		case 'p':
			co.Parents = true
		case 'b':
			bflag = true
			n, aux := parseNiceNum(o.arg)
			if aux != "" {
				c.errorf("bad volume block size '%s': %s\n", o.arg, aux)
				return 1
			}
			bs = n
			props = setKV(props, "volblocksize", strconv.FormatUint(n, 10))
		case 'n':
			dry = true
		case 'o':
			var ok bool
			if props, ok = c.parseProp(props, o.arg); !ok {
				return 1
			}
		case 's':
			co.Sparse = true
		case 'u':
			nomount = true
		case 'v':
			verbose = true
		case ':':
			c.errorf("missing size argument\n")
			return c.usage()
		default:
			return c.badOpt(o)
		}
	}
	if (bflag || co.Sparse) && typ != Volume {
		c.errorf("'-s' and '-b' can only be used when creating a volume\n")
		return c.usage()
	}
	if nomount && typ != Filesystem {
		c.errorf("'-u' can only be used when creating a filesystem\n")
		return c.usage()
	}
	if code, ok := c.operands(ops, typ.String()); !ok {
		return code
	}
	name := ops[0]
	if typ == Volume {
		for _, p := range props {
			if lookupProp(p.name) == propByName["volblocksize"] {
				if n, aux := parseNiceNum(p.value); aux == "" {
					bs = n
				}
			}
		}
		if bs != 0 && bs < 16384 {
			c.errorf("Warning: volblocksize (%d) is less than the default minimum block size (%d).\n"+
				"To reduce wasted space a volblocksize of %d is recommended.\n", bs, 16384, 16384)
		}
		if bs == 0 {
			bs = 16384
		}
		if volsize%bs != 0 {
			volsize += bs - volsize%bs
		}
		co.Volsize = int64(volsize)
		props = deleteKV(props, "volblocksize")
		co.Blocksize = int64(bs)
	}
	if verbose {
		verb := "create"
		if dry {
			verb = "would create"
		}
		if parsable {
			fmt.Fprintf(c.out, "create\t%s\n", name)
		} else {
			fmt.Fprintf(c.out, "%s %s\n", verb, name)
		}
		for _, p := range props {
			if parsable {
				fmt.Fprintf(c.out, "property\t%s\t%s\n", p.name, p.value)
			} else {
				fmt.Fprintf(c.out, "\t%s=%s\n", p.name, p.value)
			}
		}
	}
	if dry {
		return 0
	}
	co.Key = c.in
	if err := c.m.create(name, typ, props, co); err != nil {
		return c.fail(err)
	}
	return 0
}

func setKV(props []kv, name, value string) []kv {
	for i := range props {
		if props[i].name == name {
			props[i].value = value
			return props
		}
	}
	return append(props, kv{name, value})
}

func deleteKV(props []kv, name string) []kv {
	out := props[:0:0]
	for _, p := range props {
		if lookupProp(p.name) != propByName[name] {
			out = append(out, p)
		}
	}
	return out
}

func (c *cli) zfsDestroy(args []string) int {
	opts, ops := getopt(args, "vpndfrR")
	var do DestroyOptions
	verbose, parsable := false, false
	for _, o := range opts {
		switch o.c {
		case 'v':
			verbose = true
		case 'p':
			verbose, parsable = true, true
		case 'n':
			do.DryRun = true
		case 'd':
			do.Defer = true
		case 'f':
			do.Force = true
		case 'r':
			do.Recursive = true
		case 'R':
			do.Recursive, do.Dependents = true, true
		default:
			return c.badOpt(o)
		}
	}
	if code, ok := c.operands(ops, "dataset"); !ok {
		return code
	}
	if strings.Contains(ops[0], "#") {
		c.errorf("bookmark '%s' does not exist.\n", ops[0])
		return 1
	}
	names, reclaim, err := c.m.destroy(ops[0], do)
	if err != nil {
		return c.fail(err)
	}
	if verbose {
		verb := "will destroy"
		if do.DryRun {
			verb = "would destroy"
		}
		for _, n := range names {
			if parsable {
				fmt.Fprintf(c.out, "destroy\t%s\n", n)
			} else {
				fmt.Fprintf(c.out, "%s %s\n", verb, n)
			}
		}
		if strings.Contains(ops[0], "@") {
			switch {
			case parsable:
				fmt.Fprintf(c.out, "reclaim\t%d\n", reclaim)
			case do.DryRun:
				fmt.Fprintf(c.out, "would reclaim %s\n", niceBytes(reclaim))
			default:
				fmt.Fprintf(c.out, "will reclaim %s\n", niceBytes(reclaim))
			}
		}
	}
	return 0
}

func (c *cli) zfsSnapshot(args []string) int {
	opts, ops := getopt(args, "ro:")
	var props []kv
	recursive := false
	for _, o := range opts {
		switch o.c {
		case 'o':
			var ok bool
			if props, ok = c.parseProp(props, o.arg); !ok {
				return 1
			}
		case 'r':
			recursive = true
		default:
			return c.badOpt(o)
		}
	}
	if len(ops) == 0 {
		c.errorf("missing snapshot argument\n")
		return c.usage()
	}
	for _, a := range ops {
		if !strings.Contains(a, "@") {
			return c.usage()
		}
	}
	openFailed, err := c.m.snapshot(ops, props, recursive)
	if err != nil {
		c.fail(err)
		if openFailed {
			return c.usage()
		}
		if recursive || len(ops) > 1 {
			c.errorf("no snapshots were created\n")
		}
		return 1
	}
	return 0
}

func (c *cli) zfsRollback(args []string) int {
	opts, ops := getopt(args, "rRf")
	var ro RollbackOptions
	for _, o := range opts {
		switch o.c {
		case 'r':
			ro.DestroyRecent = true
		case 'R':
			ro.DestroyRecent, ro.DestroyClones = true, true
		case 'f':
			ro.Force = true
		default:
			return c.badOpt(o)
		}
	}
	if code, ok := c.operands(ops, "dataset"); !ok {
		return code
	}
	if err := c.m.Rollback(ops[0], ro); err != nil {
		return c.fail(err)
	}
	return 0
}

func (c *cli) zfsClone(args []string) int {
	opts, ops := getopt(args, "o:p")
	var props []kv
	parents := false
	for _, o := range opts {
		switch o.c {
		case 'o':
			var ok bool
			if props, ok = c.parseProp(props, o.arg); !ok {
				return 1
			}
		case 'p':
			parents = true
		default:
			return c.badOpt(o)
		}
	}
	if code, ok := c.operands(ops, "source dataset", "target dataset"); !ok {
		return code
	}
	if err := c.m.clone(ops[0], ops[1], props, parents); err != nil {
		return c.fail(err)
	}
	return 0
}

func (c *cli) zfsPromote(args []string) int {
	if len(args) > 0 && len(args[0]) > 1 && args[0][0] == '-' {
		c.errorf("invalid option '%c'\n", args[0][1])
		return c.usage()
	}
	if len(args) < 1 {
		c.errorf("missing clone filesystem argument\n")
		return c.usage()
	}
	if len(args) > 1 {
		c.errorf("too many arguments\n")
		return c.usage()
	}
	if err := c.m.Promote(args[0]); err != nil {
		return c.fail(err)
	}
	return 0
}

func (c *cli) zfsRename(args []string) int {
	opts, ops := getopt(args, "pruf")
	var ro RenameOptions
	for _, o := range opts {
		switch o.c {
		case 'p':
			ro.Parents = true
		case 'r':
			ro.Recursive = true
		case 'u':
			ro.NoUnmount = true
		case 'f':
			ro.Force = true
		default:
			return c.badOpt(o)
		}
	}
	if code, ok := c.operands(ops, "source dataset", "target dataset"); !ok {
		return code
	}
	switch {
	case ro.Recursive && ro.Parents:
		c.errorf("-p and -r options are mutually exclusive\n")
		return c.usage()
	case ro.NoUnmount && ro.Parents:
		c.errorf("-u and -p options are mutually exclusive\n")
		return c.usage()
	case ro.Recursive && !strings.Contains(ops[0], "@"):
		c.errorf("source dataset for recursive rename must be a snapshot\n")
		return c.usage()
	}
	if err := c.m.Rename(ops[0], ops[1], ro); err != nil {
		return c.fail(err)
	}
	return 0
}

func (c *cli) zfsSet(args []string) int {
	opts, ops := getopt(args, "u")
	for _, o := range opts {
		if o.c != 'u' {
			return c.badOpt(o)
		}
	}
	if len(ops) < 1 {
		c.errorf("missing arguments\n")
		return c.usage()
	}
	if len(ops) < 2 {
		if !strings.Contains(ops[0], "=") {
			c.errorf("missing property=value argument(s)\n")
		} else {
			c.errorf("missing dataset name(s)\n")
		}
		return c.usage()
	}
	start := -1
	for i, a := range ops {
		if strings.Contains(a, "=") {
			if start > 0 {
				c.errorf("invalid argument order\n")
				return c.usage()
			}
		} else if start < 0 {
			start = i
		}
	}
	if start < 0 {
		c.errorf("missing dataset name(s)\n")
		return c.usage()
	}
	var props []kv
	for _, a := range ops[:start] {
		var ok bool
		if props, ok = c.parseProp(props, a); !ok {
			return 255 // zfs set returns -1 here
		}
	}
	ret := 0
	for _, name := range ops[start:] {
		if err := c.m.setProps(name, props); err != nil {
			c.fail(err)
			ret = 1
		}
	}
	return ret
}

func (c *cli) zfsInherit(args []string) int {
	opts, ops := getopt(args, "rS")
	recursive, received := false, false
	for _, o := range opts {
		switch o.c {
		case 'r':
			recursive = true
		case 'S':
			received = true
		default:
			return c.badOpt(o)
		}
	}
	if len(ops) < 1 {
		c.errorf("missing property argument\n")
		return c.usage()
	}
	if len(ops) < 2 {
		c.errorf("missing dataset argument\n")
		return c.usage()
	}
	prop := ops[0]
	if p := lookupProp(prop); p != nil {
		switch {
		case p.readonly():
			c.errorf("%s property is read-only\n", prop)
			return 1
		case !p.inheritable() && !received:
			c.errorf("'%s' property cannot be inherited\n", prop)
			switch p.name {
			case "quota", "reservation", "refquota", "refreservation":
				c.errorf("use 'zfs set %s=none' to clear\n", prop)
				c.errorf("use 'zfs inherit -S %s' to revert to received value\n", prop)
			}
			return 1
		case received && (p.name == "volsize" || p.name == "version"):
			c.errorf("'%s' property cannot be reverted to a received value\n", prop)
			return 1
		}
	} else if !isUserProp(prop) {
		c.errorf("invalid property '%s'\n", prop)
		return c.usage()
	}
	ret := 0
	for _, name := range ops[1:] {
		if err := c.m.InheritProperty(name, prop, recursive, received); err != nil {
			c.fail(err)
			ret = 1
		}
	}
	return ret
}

// zfsMount lists mounted filesystems, or accepts mount requests for ones
// that are mounted already (the model mounts every filesystem it can).
func (c *cli) zfsMount(args []string) int {
	opts, ops := getopt(args, ":aRlvo:Of")
	all, loadKey := false, false
	for _, o := range opts {
		switch o.c {
		case 'a':
			all = true
		case 'l':
			loadKey = true
		case ':', '?':
			return c.badOpt(o)
		}
	}
	if loadKey && len(ops) > 0 {
		// zfs mount -l: load the encryption root's key (from its
		// keylocation) before mounting.
		if code, done := c.mountLoadKey(ops[0]); done {
			return code
		}
	}
	if err := c.m.beginRead(); err != nil {
		return c.fail(err)
	}
	defer c.m.mu.RUnlock()
	if len(ops) == 0 && !all {
		ds, _ := c.m.collect(nil, iterSpec{types: Filesystem, recurse: true})
		for _, d := range ds {
			if c.m.isMounted(d) && d.mountedAt != "" {
				fmt.Fprintf(c.out, "%-30s  %s\n", d.full, d.mountedAt)
			}
		}
		return 0
	}
	if len(ops) > 0 { // the first dataset decides: it is mounted, or its mount point is busy
		d, err := c.m.open(ops[0], Filesystem)
		if err != nil {
			return c.fail(err)
		}
		if c.m.isMounted(d) {
			c.errorf("cannot mount '%s': filesystem already mounted\n", d.full)
			return 1
		}
		if !c.m.keyLoaded(d) {
			c.errorf("cannot mount '%s': encryption key not loaded\n", d.full)
			return 1
		}
		c.errorf("cannot mount '%s': mountpoint or dataset is busy\n", d.full)
		return 1
	}
	return 0
}

func (c *cli) zfsUnmount(args []string) int {
	_, ops := getopt(args, "afu")
	if err := c.m.beginRead(); err != nil {
		return c.fail(err)
	}
	defer c.m.mu.RUnlock()
	for _, n := range ops {
		if strings.HasPrefix(n, "/") {
			if _, err := c.m.datasetForPath(n); err != nil {
				return c.fail(err)
			}
			continue
		}
		if _, err := c.m.open(n, Filesystem); err != nil {
			return c.fail(err)
		}
	}
	return 0 // the model keeps filesystems mounted; unmounting is a no-op
}

// zfsShare accepts share/unshare: sharing is the share properties' job.
func (c *cli) zfsShare(args []string) int {
	_, ops := getopt(args, "al")
	if err := c.m.beginRead(); err != nil {
		return c.fail(err)
	}
	defer c.m.mu.RUnlock()
	for _, n := range ops {
		if n == "nfs" || n == "smb" {
			continue
		}
		d, err := c.m.open(n, Filesystem)
		if err != nil && !strings.HasPrefix(n, "/") {
			return c.fail(err)
		}
		if d != nil && c.cmd == "share" && !c.m.keyLoaded(d) {
			c.errorf("cannot share '%s': encryption key not loaded\n", d.full)
			return 1
		}
	}
	return 0
}

func (c *cli) zfsUpgrade(args []string) int {
	opts, ops := getopt(args, "rvV:a")
	for _, o := range opts {
		if o.c == '?' {
			return c.badOpt(o)
		}
	}
	if len(ops) == 0 && len(opts) == 0 {
		fmt.Fprint(c.out, "This system is currently running ZFS filesystem version 5.\n\n"+
			"All filesystems are formatted with the current version.\n")
	}
	return 0
}
