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
	case "receive_resume_token":
		if tok := resumeToken(d); tok != "" {
			pv.Value = tok
			return pv, true
		}
		return pv, false
	case "encryption", "keyformat", "pbkdf2iters", "encryptionroot", "keystatus":
		return m.cryptProp(d, p.name)
	case "redact_snaps":
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
	if d.typ != Filesystem || m.mountpoint(d) == "" || !m.keyLoaded(d) {
		return false
	}
	v, _, _, ok := resolve(d, "canmount", false)
	return !ok || v == "on"
}
