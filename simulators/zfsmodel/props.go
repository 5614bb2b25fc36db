package zfsmodel

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Property resolution (what zfs get shows) and validation (what zfs set
// and zfs create -o accept), after libzfs zfs_prop_get and
// zfs_valid_proplist.

// kv is one property assignment; order matters for error reporting.
type kv struct{ name, value string }

func (m *Model) defaultOf(p *propDesc) string {
	if v, ok := m.defaults[p.name]; ok {
		return v
	}
	return p.def
}

// resolve finds a settable property's value on d or, when inheritable, on
// its nearest ancestor (a snapshot inherits from its dataset).
func resolve(d *dataset, name string, inheritable bool) (string, Source, string, bool) {
	for x := d; x != nil; x = x.parent {
		v, ok := x.local[name]
		if ok && v == inheritMarker {
			if !inheritable {
				break
			}
			continue // zfs inherit masks a received value
		}
		if ok {
			if x == d {
				return v, SourceLocal, "", true
			}
			return v, SourceInherited, x.full, true
		}
		if v, ok := x.recvd[name]; ok {
			if x == d {
				return v, SourceReceived, "", true
			}
			return v, SourceInherited, x.full, true
		}
		if !inheritable {
			break
		}
	}
	return "", SourceDefault, "", false
}

// validFor mirrors zfs_prop_valid_for_type plus the snapshot "head check".
func validFor(p *propDesc, d *dataset) bool {
	if p.types&d.typ == 0 {
		return false
	}
	if d.isSnap() && p.types != Snapshot && p.types&d.parent.typ == 0 {
		return false
	}
	return true
}

// userProp returns a user property of d with its source; ok=false if unset.
func userProp(d *dataset, name string) (PropValue, bool) {
	v, src, from, ok := resolve(d, name, true)
	if !ok {
		return PropValue{Value: "-", Source: SourceNone, Received: "-"}, false
	}
	pv := PropValue{Value: v, Source: src, From: from, Received: "-"}
	if r, ok := d.recvd[name]; ok {
		pv.Received = r
	}
	return pv, true
}

// nativeProp computes a native property; ok=false when zfs_prop_get fails
// (the property does not apply, or has no value). Space figures use the
// cached measurements: callers refresh first.
func (m *Model) nativeProp(d *dataset, p *propDesc, literal bool) (PropValue, bool) {
	if !validFor(p, d) {
		return PropValue{}, false
	}
	pv := PropValue{Source: SourceNone, Received: "-"}
	if r, ok := d.recvd[p.name]; ok {
		pv.Received = m.formatStored(p, r, literal)
	}
	size := func(v int64) (PropValue, bool) {
		if literal {
			pv.Value = strconv.FormatInt(v, 10)
		} else {
			pv.Value = niceBytes(v)
		}
		return pv, true
	}
	switch p.name {
	case "type":
		pv.Value = d.typ.String()
		return pv, true
	case "name":
		pv.Value = d.full
		return pv, true
	case "creation":
		pv.Value = formatDate(d.creation, literal, false)
		return pv, true
	case "snapshots_changed":
		if len(d.snaps) == 0 {
			return pv, false
		}
		pv.Value = formatDate(d.snaps[len(d.snaps)-1].creation, literal, true)
		return pv, true
	case "used":
		return size(m.used(d))
	case "available":
		return size(m.avail(d))
	case "referenced", "logicalreferenced":
		if d.isSnap() {
			return size(d.refer)
		}
		return size(d.sp.data)
	case "usedbydataset":
		return size(m.usedDS(d))
	case "usedbysnapshots":
		return size(m.usedSnap(d))
	case "usedbychildren":
		return size(d.sp.kids)
	case "usedbyrefreservation":
		return size(m.usedRefresv(d))
	case "logicalused":
		return size(m.used(d) - m.usedRefresv(d))
	case "written":
		return size(m.written(d))
	case "compressratio", "refcompressratio":
		pv.Value = ratio(100, literal)
		return pv, true
	case "mounted":
		pv.Value = "no"
		if m.isMounted(d) {
			pv.Value = "yes"
		}
		return pv, true
	case "origin":
		if d.origin == nil {
			return pv, false
		}
		pv.Value = d.origin.full
		return pv, true
	case "clones":
		if len(d.clones) == 0 {
			return pv, false
		}
		pv.Value = strings.Join(namesOf(d.sortedClones()), ",")
		return pv, true
	case "guid":
		pv.Value = strconv.FormatUint(snapGUID(d), 10)
		return pv, true
	case "createtxg":
		pv.Value = strconv.FormatUint(d.txg, 10)
		return pv, true
	case "objsetid":
		pv.Value = strconv.FormatUint(d.objset, 10)
		return pv, true
	case "userrefs":
		pv.Value = "0"
		return pv, true
	case "defer_destroy":
		pv.Value = "off"
		if d.deferred {
			pv.Value = "on"
		}
		return pv, true
	case "filesystem_count", "snapshot_count":
		pv.Value, pv.Source = "none", SourceDefault
		return pv, true
	case "receive_resume_token", "encryptionroot", "keystatus", "redact_snaps":
		return pv, false
	case "mountpoint":
		return m.mountpointProp(d, pv), true
	case "version", "utf8only", "normalization", "casesensitivity":
		v, _, _, ok := resolve(d.head(), p.name, p.name != "version")
		if !ok {
			v = m.defaultOf(p)
		}
		pv.Value = v
		return pv, true
	case "volsize":
		v, _, _, _ := resolve(d, "volsize", false)
		pv.Value = m.formatStored(p, v, literal)
		if !d.isSnap() {
			pv.Source = SourceLocal
		}
		return pv, true
	case "volblocksize":
		v, _, _, ok := resolve(d.head(), "volblocksize", false)
		if !ok {
			v = m.defaultOf(p)
		}
		pv.Value = m.formatStored(p, v, literal)
		if v == p.def {
			pv.Source = SourceDefault
		}
		return pv, true
	}
	if p.attr == attrReadonly {
		return pv, false
	}
	v, src, from, ok := resolve(d, p.name, p.inheritable())
	if !ok {
		if p.noDef {
			return pv, false
		}
		v, src = m.defaultOf(p), SourceDefault
	}
	pv.Value, pv.Source, pv.From = m.formatStored(p, v, literal), src, from
	return pv, true
}

// formatStored formats a stored (canonical) value for display.
func (m *Model) formatStored(p *propDesc, v string, literal bool) string {
	if p.kind != kindNumber {
		return v
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return v
	}
	switch {
	case p.noneMax && n == math.MaxUint64:
		return "none"
	case p.noneZero && n == 0 && !literal:
		return "none"
	case literal:
		return v
	case p.noneZero:
		return niceNum(n, true)
	}
	return niceNum(n, false)
}

// formatDate is ZFS's "%a %b %e %k:%M %Y" (with seconds for
// snapshots_changed), or the Unix time when literal.
func formatDate(unix int64, literal, seconds bool) string {
	if literal {
		return strconv.FormatInt(unix, 10)
	}
	t := time.Unix(unix, 0).Local()
	s := fmt.Sprintf("%s %s %2d %2d:%02d", t.Weekday().String()[:3], t.Month().String()[:3], t.Day(), t.Hour(), t.Minute())
	if seconds {
		s += fmt.Sprintf(":%02d", t.Second())
	}
	return s + fmt.Sprintf(" %d", t.Year())
}

// mountpointProp computes the effective mountpoint as libzfs does: an
// inherited path gets the rest of the dataset name appended.
func (m *Model) mountpointProp(d *dataset, pv PropValue) PropValue {
	v, src, from, ok := resolve(d, "mountpoint", true)
	if !ok {
		v, src = m.defaultOf(propByName["mountpoint"]), SourceDefault
	}
	pv.Source, pv.From = src, from
	if !strings.HasPrefix(v, "/") {
		pv.Value = v
		return pv
	}
	var rel string
	switch src {
	case SourceDefault:
		rel = d.full
	case SourceInherited:
		rel = strings.TrimPrefix(d.full[len(from):], "/")
	}
	switch {
	case rel == "":
		pv.Value = v
	case v == "/":
		pv.Value = "/" + rel
	default:
		pv.Value = v + "/" + rel
	}
	return pv
}

// mountpoint is d's effective mountpoint ("" when it has none).
func (m *Model) mountpoint(d *dataset) string {
	if d.typ != Filesystem {
		return ""
	}
	pv := m.mountpointProp(d, PropValue{})
	if !strings.HasPrefix(pv.Value, "/") {
		return ""
	}
	return pv.Value
}

func (m *Model) isMounted(d *dataset) bool {
	if d.typ != Filesystem || m.mountpoint(d) == "" {
		return false
	}
	v, _, _, ok := resolve(d, "canmount", false)
	return !ok || v == "on"
}

// validateProps mirrors zfs_valid_proplist for a dataset of type typ (d is
// nil while creating). It returns canonical values, native names resolved.
func (m *Model) validateProps(props []kv, typ Type, d *dataset, prefix string) ([]kv, error) {
	out := make([]kv, 0, len(props))
	bad := func(kind Kind, format string, args ...any) error {
		return newErr(kind, "%s: %s", prefix, fmt.Sprintf(format, args...))
	}
	normal, utf := "", ""
	for _, a := range props {
		name, value := a.name, a.value
		p := lookupProp(name)
		if p == nil && isUserProp(name) {
			if len(name) >= maxPropNameLen {
				return nil, bad(KindInvalid, "property name '%s' is too long", name)
			}
			if len(value) >= maxUserValLen {
				return nil, bad(KindInvalid, "property value too long")
			}
			out = append(out, kv{name, value})
			continue
		}
		if typ == Snapshot {
			return nil, bad(KindBadType, "this property can not be modified for snapshots")
		}
		if p == nil && isUserquotaProp(name) {
			return nil, bad(KindNotSupported, "'%s': user, group and project quotas are not modelled", name)
		}
		if p == nil && isWrittenProp(name) {
			return nil, bad(KindReadOnly, "'%s' is readonly", name)
		}
		if p == nil || !p.visible && p.name != "name" {
			return nil, bad(KindInvalid, "invalid property '%s'", name)
		}
		if p.types&typ == 0 {
			return nil, bad(KindBadType, "'%s' does not apply to datasets of this type", name)
		}
		if p.readonly() && !(p.setonce() && d == nil) {
			return nil, bad(KindReadOnly, "'%s' is readonly", name)
		}
		v, err := m.parseValue(p, name, value, typ, d, bad)
		if err != nil {
			return nil, err
		}
		switch p.name {
		case "normalization":
			normal = v
		case "utf8only":
			utf = v
		}
		out = append(out, kv{p.name, v})
	}
	if normal != "" && normal != "none" {
		switch utf {
		case "":
			out = append(out, kv{"utf8only", "on"})
		case "off":
			return nil, bad(KindInvalid, "'utf8only' must be set 'on' if normalization chosen")
		}
	}
	return out, nil
}

// parseValue converts one value to its stored form (zprop_parse_value and
// the per-property checks of zfs_valid_proplist).
func (m *Model) parseValue(p *propDesc, name, value string, typ Type, d *dataset,
	bad func(Kind, string, ...any) error) (string, error) {
	switch p.kind {
	case kindString:
		if len(value) >= maxPropLen {
			return "", bad(KindInvalid, "'%s' is too long", name)
		}
		switch p.name {
		case "mountpoint":
			if value == "none" || value == "legacy" {
				return value, nil
			}
			if !strings.HasPrefix(value, "/") {
				return "", bad(KindInvalid, "'%s' must be an absolute path, 'none', or 'legacy'", name)
			}
			for _, c := range strings.Split(value, "/") {
				if len(c) >= 256 {
					return "", bad(KindInvalid, "component of '%s' is too long", name)
				}
			}
		case "keylocation":
			if value != "none" {
				return "", bad(KindInvalid, "keylocation must be 'none' for unencrypted datasets")
			}
		}
		return value, nil
	case kindIndex:
		v, ok := p.indexValue(value)
		if !ok {
			return "", bad(KindInvalid, "'%s' must be one of '%s'", p.name, p.values)
		}
		if p.name == "encryption" && v != "off" {
			return "", bad(KindNotSupported, "encryption is not modelled by this simulator")
		}
		return v, nil
	}
	var n uint64
	isNone := false
	switch value {
	case "none":
		isNone = true
	case "auto":
		if p.name != "refreservation" {
			return "", bad(KindInvalid, "'auto' is invalid value for '%s'", name)
		}
		if typ != Volume {
			return "", bad(KindInvalid, "'%s=auto' only allowed on volumes", name)
		}
		return "auto", nil // resolved against volsize by the caller
	default:
		var aux string
		if n, aux = parseNiceNum(value); aux != "" {
			return "", bad(KindInvalid, "%s", aux)
		}
	}
	if n == 0 && !isNone && (p.name == "quota" || p.name == "refquota") {
		return "", bad(KindInvalid, "use 'none' to disable quota/refquota")
	}
	if isNone && p.noneMax {
		n = math.MaxUint64
	}
	switch p.name {
	case "volblocksize", "recordsize":
		if n < 512 || n > 16<<20 || n&(n-1) != 0 {
			return "", bad(KindInvalid, "'%s' must be power of 2 from 512B to 16M", name)
		}
	case "special_small_blocks":
		if n > 16<<20 {
			return "", bad(KindInvalid, "invalid '%s' property: must be between zero and 16M", name)
		}
	case "pbkdf2iters":
		if n < 100000 {
			return "", bad(KindInvalid, "minimum pbkdf2 iterations is 100000")
		}
	case "volsize":
		if d != nil {
			bs := uint64(volBlockSize(d))
			if n%bs != 0 {
				return "", bad(KindInvalid, "'%s' must be a multiple of volume block size (%s)", name, niceNum(bs, true))
			}
			if n == 0 {
				return "", bad(KindInvalid, "'%s' cannot be zero", name)
			}
		}
	}
	return strconv.FormatUint(n, 10), nil
}

func volBlockSize(d *dataset) int64 {
	if v := numProp(d.head(), "volblocksize"); v > 0 {
		return v
	}
	return 16384
}

func copiesOf(d *dataset) int {
	v, _, _, ok := resolve(d, "copies", true)
	if !ok {
		return 1
	}
	n, _ := strconv.Atoi(v)
	if n < 1 {
		return 1
	}
	return n
}
