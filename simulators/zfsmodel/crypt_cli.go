package zfsmodel

import (
	"fmt"
	"io"
	"strconv"
)

// zfs load-key, unload-key and change-key (cmd/zfs/zfs_main.c
// load_unload_keys and zfs_do_change_key over libzfs_crypto.c). A key is
// read from its location with the model unlocked; the outcome is applied
// under the lock after checking the dataset again.

// LoadKey loads the key of encryption root name from location ("" for its
// keylocation property; "prompt" reads stdin). noop only verifies it.
func (m *Model) LoadKey(name, location string, noop bool, stdin io.Reader) error {
	return m.loadKey(name, location, noop, stdin, true)
}

// loadKey is LoadKey; without privilege every check and the reading of
// the key happen as for root, and then the kernel refuses (EPERM).
func (m *Model) loadKey(name, location string, noop bool, stdin io.Reader, privileged bool) error {
	if err := m.beginRead(); err != nil {
		return err
	}
	d, err := m.open(name, Filesystem|Volume)
	if err != nil {
		m.mu.RUnlock()
		return err
	}
	format, loc, err := m.loadKeyCheck(d, location, noop)
	m.mu.RUnlock()
	if err != nil {
		return err
	}
	key := m.fetchKey(loc, format, stdin)
	if err := m.begin(); err != nil {
		return err
	}
	defer m.unlock()
	if m.lookup(name) != d {
		return errNoDataset(name)
	}
	if _, _, err := m.loadKeyCheck(d, location, noop); err != nil {
		return err
	}
	const ctx = "Key load error"
	if key.err != nil {
		return errCrypto(ctx, key.err.Error())
	}
	if aux := validateKey(format, key.material, false); aux != "" {
		return errCrypto(ctx, aux)
	}
	if !privileged {
		return errCrypto(ctx, "Permission denied.")
	}
	if !keyMatches(d, key.material) {
		return errCrypto(ctx, fmt.Sprintf("Incorrect key provided for '%s'.", d.full))
	}
	if !noop {
		m.keys[d.guid] = true
		m.remountAll()
	}
	return nil
}

// loadKeyCheck is zfs_crypto_load_key's checks before the key is read; it
// returns the key format and the location to read.
func (m *Model) loadKeyCheck(d *dataset, location string, noop bool) (format, loc string, err error) {
	const ctx = "Key load error"
	if !encrypted(d) {
		return "", "", errCrypto(ctx, fmt.Sprintf("'%s' is not encrypted.", d.full))
	}
	r := m.encRoot(d)
	if r != d {
		return "", "", errCrypto(ctx, fmt.Sprintf("Keys must be loaded for encryption root of '%s' (%s).", d.full, rootName(r)))
	}
	loc = location
	if loc == "" {
		loc = d.local["keylocation"]
	}
	if !noop && m.keys[d.guid] {
		return "", "", errCrypto(ctx, fmt.Sprintf("Key already loaded for '%s'.", d.full))
	}
	return d.local[cryptFmtKey], loc, nil
}

func rootName(r *dataset) string {
	if r == nil {
		return ""
	}
	return r.full
}

// UnloadKey unloads the key of encryption root name (zfs unload-key). The
// model has no unmounted state of its own (zfs unmount leaves a filesystem
// mounted), so where zfs wants the filesystems unmounted first
// ("'<ds>' is busy."), the model unmounts them as the unload makes them
// unreadable.
func (m *Model) UnloadKey(name string) error { return m.unloadKey(name, true) }

func (m *Model) unloadKey(name string, privileged bool) error {
	if err := m.begin(); err != nil {
		return err
	}
	defer m.unlock()
	d, err := m.open(name, Filesystem|Volume)
	if err != nil {
		return err
	}
	const ctx = "Key unload error"
	if !encrypted(d) {
		return errCrypto(ctx, fmt.Sprintf("'%s' is not encrypted.", d.full))
	}
	if r := m.encRoot(d); r != d {
		return errCrypto(ctx, fmt.Sprintf("Keys must be unloaded for encryption root of '%s' (%s).", d.full, rootName(r)))
	}
	if !m.keys[d.guid] {
		return errCrypto(ctx, fmt.Sprintf("Key already unloaded for '%s'.", d.full))
	}
	if !privileged {
		return errCrypto(ctx, "Permission denied.")
	}
	delete(m.keys, d.guid)
	m.remountAll()
	return nil
}

// remountAll recomputes which filesystems are mounted after a key came or
// went (a key's datasets need not sit below its root: clones).
func (m *Model) remountAll() {
	for _, p := range m.pools {
		m.remount(p.root)
	}
}

func (c *cli) zfsLoadKey(args []string) int   { return c.loadUnload(args, true) }
func (c *cli) zfsUnloadKey(args []string) int { return c.loadUnload(args, false) }

func (c *cli) loadUnload(args []string, load bool) int {
	spec := "ar"
	if load {
		spec = "anrL:"
	}
	opts, ops := getopt(args, spec)
	all, recursive, noop := false, false, false
	location := ""
	for _, o := range opts {
		switch o.c {
		case 'a':
			all, recursive = true, true
		case 'r':
			recursive = true
		case 'n':
			noop = true
		case 'L':
			location = o.arg
		default:
			c.errorf("invalid option '%c'\n", o.bad)
			return c.usage()
		}
	}
	switch {
	case !all && len(ops) == 0:
		c.errorf("Missing dataset argument or -a option\n")
		return c.usage()
	case all && len(ops) != 0:
		c.errorf("Cannot specify dataset with -a option\n")
		return c.usage()
	case recursive && location != "" && location != "prompt":
		c.errorf("alternate keylocation may only be 'prompt' with -r or -a\n")
		return c.usage()
	}
	targets, ret := c.keyTargets(ops, all, recursive, load)
	attempted, failed := 0, 0
	for _, name := range targets {
		attempted++
		var err error
		if load {
			err = c.m.loadKey(name, location, noop, c.in, !c.unprivileged)
		} else {
			err = c.m.unloadKey(name, !c.unprivileged)
		}
		if err != nil {
			c.fail(err)
			failed++
		}
	}
	if noop || recursive && attempted != 0 {
		verb := "unloaded"
		if load {
			verb = "loaded"
			if noop {
				verb = "verified"
			}
		}
		fmt.Fprintf(c.out, "%d / %d key(s) successfully %s\n", attempted-failed, attempted, verb)
	}
	if failed != 0 {
		return 255 // zfs returns -1
	}
	return ret
}

// keyTargets lists the datasets load_key_callback acts on: the named ones,
// or with -r/-a the encryption roots below them whose key is not yet in
// the wanted state.
func (c *cli) keyTargets(ops []string, all, recursive, load bool) ([]string, int) {
	m := c.m
	if err := m.beginRead(); err != nil {
		return nil, c.fail(err)
	}
	defer m.mu.RUnlock()
	var tops []*dataset
	ret := 0
	if all {
		for _, p := range m.pools {
			tops = append(tops, p.root)
		}
	}
	for _, n := range ops {
		d, err := m.open(n, Filesystem|Volume)
		if err != nil {
			c.fail(err)
			ret = 1
			continue
		}
		tops = append(tops, d)
	}
	var out []string
	for _, t := range tops {
		if !recursive {
			out = append(out, t.full)
			continue
		}
		walk(t, func(x *dataset) {
			if x.isSnap() || !encrypted(x) || m.encRoot(x) != x || m.keys[x.guid] == load {
				return
			}
			out = append(out, x.full)
		})
	}
	return out, ret
}

// ChangeKey is zfs change-key: a new key (and format, location, iterations)
// for dataset name, which becomes an encryption root, or with inherit, the
// key of its parent's encryption root. load first loads the current key.
func (m *Model) ChangeKey(name string, props map[string]string, inherit, load bool, stdin io.Reader) error {
	return m.changeKey(name, sortedKV(props), inherit, load, stdin)
}

func (m *Model) changeKey(name string, props []kv, inherit, load bool, stdin io.Reader) error {
	if err := m.beginRead(); err != nil {
		return err
	}
	d, err := m.open(name, Filesystem|Volume)
	if err != nil {
		m.mu.RUnlock()
		return err
	}
	loaded := m.keyLoaded(d)
	m.mu.RUnlock()
	if load && !loaded {
		if err := m.LoadKey(rootName(m.encRootLocked(d)), "", false, stdin); err != nil {
			return err
		}
	}
	const ctx = "Key change error"
	for _, p := range props {
		switch lookupProp(p.name) {
		case propByName["keyformat"], propByName["keylocation"], propByName["pbkdf2iters"]:
		default:
			return errCrypto(ctx, "Only keyformat, keylocation and pbkdf2iters may be set with this command.")
		}
	}
	vals, err := m.validateProps(props, d.typ, nil, ctx)
	if err != nil {
		return err
	}
	_, cc := takeCryptProps(vals)
	var key keyInput
	if !inherit {
		if err := m.beginRead(); err != nil {
			return err
		}
		format, location, err := m.changeKeyPlan(d, cc)
		m.mu.RUnlock()
		if err != nil {
			return err
		}
		cc.format, cc.location = format, location
		key = m.fetchKey(location, format, stdin)
		if key.err != nil {
			return errCrypto(ctx, key.err.Error())
		}
		if aux := validateKey(format, key.material, true); aux != "" {
			return errCrypto(ctx, aux)
		}
		if cc.hasIters && format != "passphrase" {
			return errCrypto(ctx, "Cannot specify pbkdf2iters with a non-passphrase keyformat.")
		}
	}
	if err := m.begin(); err != nil {
		return err
	}
	defer m.unlock()
	if m.lookup(name) != d {
		return errNoDataset(name)
	}
	switch { // checked again: the dataset may have changed while the key was read
	case !encrypted(d):
		return errCrypto(ctx, "Dataset not encrypted.")
	case d.origin != nil:
		return errCrypto(ctx, "Keys cannot be changed on clones.")
	}
	oldRoot := m.encRoot(d)
	var newRoot *dataset
	if inherit {
		if oldRoot != d {
			return errCrypto(ctx, "Key inheritting can only be performed on encryption roots.")
		}
		if d.parent == nil {
			return errCrypto(ctx, "Root dataset cannot inherit key.")
		}
		if !encrypted(d.parent) {
			return errCrypto(ctx, "Parent must be encrypted.")
		}
		if !m.keyLoaded(d.parent) {
			return errCrypto(ctx, "Parent key must be loaded.")
		}
		newRoot = m.encRoot(d.parent)
	}
	if !m.keys[oldRoot.guid] {
		return errCrypto(ctx, "Key must be loaded.")
	}
	if inherit {
		for _, k := range []string{cryptFmtKey, cryptItersKey, cryptSaltKey, cryptCheckKey} {
			delete(d.local, k)
		}
		delete(d.local, "keylocation")
	} else {
		iters := uint64(defaultPBKDF2Iters)
		if cc.hasIters {
			iters = cc.iters
		} else if oldRoot == d && d.local[cryptFmtKey] == "passphrase" {
			iters, _ = strconv.ParseUint(d.local[cryptItersKey], 10, 64)
		}
		setRootKey(d, cc.format, iters, key.material)
		d.local["keylocation"] = cc.location
		newRoot = d
		m.keys[d.guid] = true
	}
	// The datasets below d that shared the old root now share the new one.
	var changed []*dataset
	walk(d, func(x *dataset) {
		if !x.isSnap() && x.local[cryptRootKey] == strconv.FormatUint(oldRoot.guid, 10) {
			x.local[cryptRootKey] = strconv.FormatUint(newRoot.guid, 10)
			changed = append(changed, x)
		}
	})
	if len(changed) == 0 || changed[0] != d {
		changed = append(changed, d)
	}
	for _, x := range changed {
		if err := m.writeRecord(x); err != nil {
			return err
		}
	}
	m.remountAll()
	return nil
}

func (m *Model) encRootLocked(d *dataset) *dataset {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.encRoot(d)
}

// changeKeyPlan is zfs_crypto_rewrap's checks before the new key is read:
// the format and location it is read in.
func (m *Model) changeKeyPlan(d *dataset, cc createCrypt) (format, location string, err error) {
	const ctx = "Key change error"
	if !encrypted(d) {
		return "", "", errCrypto(ctx, "Dataset not encrypted.")
	}
	if d.origin != nil {
		return "", "", errCrypto(ctx, "Keys cannot be changed on clones.")
	}
	format, location = cc.format, cc.location
	if !cc.hasFormat {
		format = ""
	}
	if !cc.hasLocation {
		location = ""
	}
	if m.encRoot(d) == d {
		if format == "" {
			format = d.local[cryptFmtKey]
		}
		if location == "" {
			location = d.local["keylocation"]
		}
		return format, location, nil
	}
	if format == "" {
		return "", "", errCrypto(ctx, "Keyformat required for new encryption root.")
	}
	if location == "" {
		location = "prompt"
	}
	return format, location, nil
}

func (c *cli) zfsChangeKey(args []string) int {
	opts, ops := getopt(args, "lio:")
	load, inherit := false, false
	var props []kv
	for _, o := range opts {
		switch o.c {
		case 'l':
			load = true
		case 'i':
			inherit = true
		case 'o':
			var ok bool
			if props, ok = c.parseProp(props, o.arg); !ok {
				return 1
			}
		default:
			c.errorf("invalid option '%c'\n", o.bad)
			return c.usage()
		}
	}
	if len(ops) < 1 {
		c.errorf("Missing dataset argument\n")
		return c.usage()
	}
	if len(ops) > 1 {
		c.errorf("Too many arguments\n")
		return c.usage()
	}
	if err := c.m.changeKey(ops[0], props, inherit, load, c.in); err != nil {
		if KindOf(err) == KindNotFound {
			c.fail(err)
			return c.usage()
		}
		c.fail(err)
		return 255
	}
	return 0
}

// mountLoadKey is the key step of zfs mount -l: done says the command
// ends here with code.
func (c *cli) mountLoadKey(name string) (code int, done bool) {
	m := c.m
	if err := m.beginRead(); err != nil {
		return c.fail(err), true
	}
	d, err := m.open(name, Filesystem)
	if err != nil {
		m.mu.RUnlock()
		return c.fail(err), true
	}
	need := !m.keyLoaded(d)
	root := rootName(m.encRoot(d))
	m.mu.RUnlock()
	if !need {
		return 0, false
	}
	if err := m.LoadKey(root, "", false, c.in); err != nil {
		return c.fail(err), true
	}
	return 0, true // mounted now, with its key
}
