package zfsmodel

import (
	"os"
	"strconv"
)

// zfs clone and zfs promote.

// Clone creates target from snapshot snap (zfs clone [-p] [-o ...]).
func (m *Model) Clone(snap, target string, props map[string]string, parents bool) error {
	return m.clone(snap, target, sortedKV(props), parents)
}

func (m *Model) clone(snapName, target string, props []kv, parents bool) error {
	if err := m.begin(); err != nil {
		return err
	}
	locked := true
	defer func() {
		if locked {
			m.unlock()
		}
	}()
	snap, err := m.open(snapName, Snapshot)
	if err != nil {
		return err
	}
	if parents && nameCheck(target, Filesystem|Volume, false) == "" {
		if m.lookup(target) != nil {
			return nil
		}
		if err := m.createAncestors(target); err != nil {
			return err
		}
	}
	prefix := "cannot create '" + target + "'"
	if aux := nameCheck(target, Filesystem, true); aux != "" {
		return newErr(KindInvalid, "%s: %s", prefix, aux)
	}
	parent, err := m.checkParents(target)
	if err != nil {
		return err
	}
	head := snap.parent
	for _, a := range props { // zfs_crypto_clone_check, before the property checks
		switch lookupProp(a.name) {
		case propByName["encryption"], propByName["keyformat"], propByName["keylocation"], propByName["pbkdf2iters"]:
			return errCrypto(prefix, "Encryption properties must inherit from origin dataset.")
		}
	}
	if len(props) > 0 {
		if props, err = m.validateProps(props, head.typ, snap, prefix); err != nil {
			return err
		}
	}
	if m.lookup(target) != nil || m.pending[target] {
		return newErr(KindExists, "%s: dataset already exists", prefix)
	}
	if parent.pool != snap.pool {
		return newErr(KindInvalid, "%s: source and target pools differ", prefix)
	}
	if !m.keyLoaded(snap) { // the kernel's EACCES, worded by zfs_standard_error
		return newErr(KindCrypto, "%s: permission denied", prefix)
	}
	c := m.newDataset(leafOf(target), head.typ, parent, parent.pool)
	for _, a := range props {
		c.local[a.name] = a.value
	}
	if encrypted(head) { // a clone shares its origin's encryption root and key
		c.local[cryptSuiteKey] = head.local[cryptSuiteKey]
		c.local[cryptRootKey] = head.local[cryptRootKey]
	}
	if head.typ == Volume {
		c.local["volsize"] = snap.local["volsize"]
		if bs, ok := head.local["volblocksize"]; ok {
			c.local["volblocksize"] = bs
		}
		if c.local["refreservation"] == "auto" {
			vs, _ := strconv.ParseInt(c.local["volsize"], 10, 64)
			c.local["refreservation"] = strconv.FormatInt(zvolReservation(vs, volBlockSize(c), copiesOf(parent)), 10)
		}
	}
	need := max64(numProp(c, "refreservation"), numProp(c, "reservation"))
	if need > 0 {
		m.freshen()
		m.spaceMu.Lock()
		short := need > m.dirAvail(parent)
		m.spaceMu.Unlock()
		if short {
			return newErr(KindOutOfSpace, "%s: out of space", prefix)
		}
	}
	job := copyJob{src: m.dataPath(snap), dst: m.dataPath(c), dir: head.typ == Filesystem}
	m.pending[target] = true
	snap.busy++
	parent.busy++ // its directory must stay put while the clone's is filled
	m.inflight.Add(1)
	defer m.inflight.Done()
	m.unlock()
	locked = false

	copyErr := job.run()

	m.mu.Lock()
	locked = true
	delete(m.pending, target)
	snap.busy--
	parent.busy--
	if copyErr != nil {
		_ = os.RemoveAll(job.dst)
		return errIO(prefix, copyErr)
	}
	if m.closed || m.byGUID[parent.guid] == nil {
		_ = os.RemoveAll(job.dst)
		return newErr(KindNotFound, "%s: no such parent '%s'", prefix, parent.full)
	}
	c.origin = snap
	c.full = c.computeName()
	if err := m.writeRecord(c); err != nil {
		_ = os.RemoveAll(job.dst)
		return err
	}
	snap.clones[c] = true
	m.index(c)
	m.spaceMu.Lock()
	c.sp.data = m.measure(c)
	m.attachSpace(c)
	m.spaceMu.Unlock()
	m.remount(c)
	return nil
}

// Promote makes a clone independent of its origin (zfs promote): the
// origin snapshot and the snapshots before it move to the clone, and the
// former origin dataset becomes a clone of that snapshot.
func (m *Model) Promote(name string) error {
	if err := m.begin(); err != nil {
		return err
	}
	defer m.unlock()
	c, err := m.open(name, Filesystem|Volume)
	if err != nil {
		return err
	}
	prefix := "cannot promote '" + name + "'"
	if c.origin == nil {
		return newErr(KindBadType, "%s: not a cloned filesystem", prefix)
	}
	s := c.origin
	o := s.parent
	var moving []*dataset
	for _, x := range o.snaps {
		if x.txg <= s.txg {
			moving = append(moving, x)
		}
	}
	for _, x := range moving {
		if c.snapshot(x.leaf) != nil {
			return newErr(KindExists, "%s: conflicting snapshot '%s' from parent '%s'", prefix, x.leaf, s.full) // dds_origin: the origin snapshot
		}
	}
	if !m.promoteCryptOK(c, o) {
		return newErr(KindExists, "%s: cannot promote dataset outside its encryption root", prefix)
	}
	if err := m.promoteCrypt(c, o); err != nil {
		return err
	}
	m.spaceMu.Lock()
	defer m.spaceMu.Unlock()
	for _, x := range moving {
		m.unindex(x)
		x.parent = c
		m.index(x)
	}
	// Origins: c takes o's origin; o becomes a clone of s.
	delete(s.clones, c)
	c.origin = o.origin
	if c.origin != nil {
		delete(c.origin.clones, o)
		c.origin.clones[c] = true
	}
	o.origin = s
	s.clones[o] = true
	for _, x := range moving {
		m.renameSubtree(x)
		if err := m.writeRecord(x); err != nil {
			return err
		}
	}
	for _, x := range []*dataset{o, c} {
		if err := m.writeRecord(x); err != nil {
			return err
		}
	}
	m.updateSnapMax(o)
	m.updateSnapMax(c)
	return nil
}
