package zfsmodel

import (
	"os"
	"strconv"
)

// inheritMarker, as a local value, masks a received value: zfs inherit
// (without -S) makes the dataset inherit even where a value was received.
const inheritMarker = "\x00inherit"

// SetProperty sets one property (zfs set prop=value name).
func (m *Model) SetProperty(name, prop, value string) error {
	return m.setProps(name, []kv{{prop, value}})
}

// SetProperties sets several properties at once, all or none.
func (m *Model) SetProperties(name string, props map[string]string) error {
	return m.setProps(name, sortedKV(props))
}

func (m *Model) setProps(name string, props []kv) error {
	if err := m.begin(); err != nil {
		return err
	}
	defer m.unlock()
	d, err := m.open(name, AnyType)
	if err != nil {
		return err
	}
	return m.setPropsLocked(d, props)
}

func (m *Model) setPropsLocked(d *dataset, props []kv) error {
	prefix := "cannot set property for '" + d.full + "'"
	vals, err := m.validateProps(props, d.typ, d, prefix)
	if err != nil {
		return err
	}
	next := map[string]string{}
	for _, a := range vals {
		next[a.name] = a.value
	}
	if d.typ == Volume {
		bs, copies := volBlockSize(d), copiesOf(d)
		if vs, ok := next["volsize"]; ok {
			oldVS, _ := strconv.ParseInt(d.local["volsize"], 10, 64)
			newVS, _ := strconv.ParseInt(vs, 10, 64)
			if _, explicit := next["refreservation"]; !explicit && numProp(d, "refreservation") == zvolReservation(oldVS, bs, copies) {
				next["refreservation"] = strconv.FormatInt(zvolReservation(newVS, bs, copies), 10)
			}
		}
		if next["refreservation"] == "auto" {
			vs, _ := strconv.ParseInt(d.local["volsize"], 10, 64)
			if v, ok := next["volsize"]; ok {
				vs, _ = strconv.ParseInt(v, 10, 64)
			}
			next["refreservation"] = strconv.FormatInt(zvolReservation(vs, bs, copies), 10)
		}
	}
	if err := m.checkSpace(d, next, prefix); err != nil {
		return err
	}
	if vs, ok := next["volsize"]; ok {
		n, _ := strconv.ParseInt(vs, 10, 64)
		if err := os.Truncate(m.dataPath(d), n); err != nil {
			return errIO(prefix, err)
		}
	}
	for k, v := range next {
		d.local[k] = v
	}
	if err := m.writeRecord(d); err != nil {
		return err
	}
	m.spaceMu.Lock()
	d.sp.data = m.measure(d)
	m.propagate(d)
	m.spaceMu.Unlock()
	if _, ok := next["mountpoint"]; ok {
		m.remount(d)
	} else if _, ok := next["canmount"]; ok {
		m.remount(d)
	}
	return nil
}

// checkSpace applies the DSL's quota and reservation checks to new values.
func (m *Model) checkSpace(d *dataset, next map[string]string, prefix string) error {
	get := func(k string) (int64, bool) {
		v, ok := next[k]
		if !ok {
			return 0, false
		}
		n, _ := strconv.ParseUint(v, 10, 64)
		if n > 1<<62 {
			return 1 << 62, true
		}
		return int64(n), true
	}
	_, q1 := next["quota"]
	_, q2 := next["refquota"]
	_, r1 := next["reservation"]
	_, r2 := next["refreservation"]
	if !q1 && !q2 && !r1 && !r2 {
		return nil
	}
	m.freshen()
	m.refresh(d)
	m.spaceMu.Lock()
	defer m.spaceMu.Unlock()
	less := func() error {
		return newErr(KindOutOfSpace, "%s: size is less than current used or reserved space", prefix)
	}
	greater := func() error {
		return newErr(KindOutOfSpace, "%s: size is greater than available space", prefix)
	}
	if q, ok := get("quota"); ok && q != 0 && (q < m.used(d) || q < numProp(d, "reservation")) {
		return less()
	}
	if q, ok := get("refquota"); ok && q != 0 && (q < d.sp.data || q < numProp(d, "refreservation")) {
		return less()
	}
	if r, ok := get("reservation"); ok {
		used, old := m.used(d), numProp(d, "reservation")
		delta := max64(r, used) - max64(old, used)
		quota := numProp(d, "quota")
		if d.parent != nil && delta > 0 && delta > m.dirAvail(d.parent) || quota > 0 && r > quota {
			return greater()
		}
	}
	if r, ok := get("refreservation"); ok {
		unique, old := m.usedDS(d), numProp(d, "refreservation")
		delta := max64(r, unique) - max64(old, unique)
		if delta > 0 && delta > m.dirAvail(d) {
			return greater()
		}
	}
	return nil
}

// InheritProperty clears a property so it is inherited (zfs inherit
// [-r] [-S]). received reverts to the received value instead.
func (m *Model) InheritProperty(name, prop string, recursive, received bool) error {
	if err := m.begin(); err != nil {
		return err
	}
	defer m.unlock()
	d, err := m.open(name, AnyType)
	if err != nil {
		return err
	}
	p := lookupProp(prop)
	var targets []*dataset
	if recursive {
		walk(d, func(x *dataset) {
			if p == nil || validFor(p, x) {
				targets = append(targets, x)
			}
		})
	} else {
		targets = []*dataset{d}
	}
	for _, x := range targets {
		if err := m.inheritOne(x, prop, p, received); err != nil {
			return err
		}
	}
	return nil
}

func (m *Model) inheritOne(d *dataset, prop string, p *propDesc, received bool) error {
	prefix := "cannot inherit " + prop + " for '" + d.full + "'"
	key := prop
	if p == nil {
		if !isUserProp(prop) {
			return newErr(KindInvalid, "%s: invalid property", prefix)
		}
	} else {
		switch {
		case p.readonly():
			return newErr(KindReadOnly, "%s: read-only property", prefix)
		case !p.inheritable() && !received:
			return newErr(KindInvalid, "%s: property cannot be inherited", prefix)
		case !validFor(p, d):
			return newErr(KindBadType, "%s: property doesn't apply to datasets of this type", prefix)
		}
		key = p.name
	}
	_, hadRecvd := d.recvd[key]
	switch {
	case received:
		delete(d.local, key)
	case hadRecvd:
		d.local[key] = inheritMarker
	default:
		delete(d.local, key)
	}
	if err := m.writeRecord(d); err != nil {
		return err
	}
	m.spaceMu.Lock()
	m.propagate(d)
	m.spaceMu.Unlock()
	if key == "mountpoint" || key == "canmount" {
		m.remount(d)
	}
	return nil
}
