package zfsmodel

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Property validation (zfs set, create -o, clone -o) after zfs_valid_proplist.

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
			if !validKeylocation(value, false) {
				return "", bad(KindInvalid, "invalid keylocation")
			}
			if d != nil && !encrypted(d) && value != "none" {
				return "", bad(KindInvalid, "keylocation must be 'none' for unencrypted datasets")
			}
			if d != nil && encrypted(d) && value == "none" {
				return "", bad(KindInvalid, "keylocation must not be 'none' for encrypted datasets")
			}
		}
		return value, nil
	case kindIndex:
		v, ok := p.indexValue(value)
		if !ok {
			return "", bad(KindInvalid, "'%s' must be one of '%s'", p.name, p.values)
		}
		if p.name == "copies" && v == "3" && d != nil && encrypted(d) {
			return "", bad(KindInvalid, "encrypted datasets cannot have 3 copies")
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
