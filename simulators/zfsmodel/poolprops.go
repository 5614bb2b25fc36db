package zfsmodel

import (
	"sort"
	"strconv"
	"strings"
)

// Pool properties: the table, their values and zpool set.

// poolProps are the pool properties of OpenZFS 2.2 in zpool_prop_t order.
var poolProps = []*propDesc{
	hidden(noDef(str("name", "NAME", attrReadonly, 0, "", ""))),
	num("size", "SIZE", attrReadonly, 0, "", "<size>"),
	num("capacity", "CAP", attrReadonly, 0, "", "<size>"),
	noDef(str("altroot", "ALTROOT", attrDefault, 0, "", "<path>")),
	num("health", "HEALTH", attrReadonly, 0, "", "<state>"),
	flex(num("guid", "GUID", attrReadonly, 0, "", "<guid>")),
	num("version", "VERSION", attrDefault, 0, "5000", "<version>"),
	noDef(str("bootfs", "BOOTFS", attrDefault, 0, "", "<filesystem>")),
	index("delegation", "DELEGATION", attrDefault, 0, "on", "on | off", boolTable),
	index("autoreplace", "REPLACE", attrDefault, 0, "off", "on | off", boolTable),
	noDef(str("cachefile", "CACHEFILE", attrDefault, 0, "", "<file> | none")),
	index("failmode", "FAILMODE", attrDefault, 0, "wait", "wait | continue | panic", idx("wait", "continue", "panic")),
	index("listsnapshots", "LISTSNAPS", attrDefault, 0, "off", "on | off", boolTable),
	index("autoexpand", "EXPAND", attrDefault, 0, "off", "on | off", boolTable),
	num("dedupratio", "DEDUP", attrReadonly, 0, "", "<1.00x or higher if deduped>"),
	num("free", "FREE", attrReadonly, 0, "", "<size>"),
	num("allocated", "ALLOC", attrReadonly, 0, "", "<size>"),
	index("readonly", "RDONLY", attrDefault, 0, "off", "on | off", boolTable),
	num("ashift", "ASHIFT", attrDefault, 0, "0", "<ashift, 9-16, or 0=default>"),
	noDef(str("comment", "COMMENT", attrDefault, 0, "", "<comment-string>")),
	num("expandsize", "EXPANDSZ", attrReadonly, 0, "", "<size>"),
	num("freeing", "FREEING", attrReadonly, 0, "", "<size>"),
	num("fragmentation", "FRAG", attrReadonly, 0, "", "<percent>"),
	num("leaked", "LEAKED", attrReadonly, 0, "", "<size>"),
	index("multihost", "MULTIHOST", attrDefault, 0, "off", "on | off", boolTable),
	num("checkpoint", "CKPOINT", attrReadonly, 0, "", "<size>"),
	flex(num("load_guid", "LOAD_GUID", attrReadonly, 0, "", "<load_guid>")),
	index("autotrim", "AUTOTRIM", attrDefault, 0, "off", "on | off", boolTable),
	str("compatibility", "COMPATIBILITY", attrDefault, 0, "off", "<file[,file...]> | off | legacy"),
	num("bcloneused", "BCLONE_USED", attrReadonly, 0, "", "<size>"),
	num("bclonesaved", "BCLONE_SAVED", attrReadonly, 0, "", "<size>"),
	num("bcloneratio", "BCLONE_RATIO", attrReadonly, 0, "", "<1.00x or higher if cloned>"),
}

var poolPropByName = func() map[string]*propDesc {
	m := map[string]*propDesc{}
	for _, p := range poolProps {
		m[p.name] = p
	}
	for _, p := range poolProps {
		if c := strings.ToLower(p.colname); m[c] == nil {
			m[c] = p
		}
	}
	return m
}()

// poolWidth is zprop_width for pool properties ('health' is 8 wide).
func poolWidth(p *propDesc) int {
	if p.name == "health" {
		return 8
	}
	return p.width()
}

// poolProp formats one pool property (zpool_get_prop).
func (m *Model) poolProp(p *pool, d *propDesc, literal bool) PropValue {
	pv := PropValue{Source: SourceNone, Received: "-"}
	alloc := min64(m.poolAlloc(p), p.size) // files written behind the model's back may overshoot
	size := func(n int64) string {
		if literal {
			return strconv.FormatInt(n, 10)
		}
		return niceNum(uint64(max64(n, 0)), false)
	}
	switch d.name {
	case "name":
		pv.Value = p.name
	case "size":
		pv.Value = size(p.size)
	case "allocated":
		pv.Value = size(alloc)
	case "free":
		pv.Value = size(p.size - alloc)
	case "capacity":
		pv.Value = strconv.FormatInt(alloc*100/p.size, 10)
		if !literal {
			pv.Value += "%"
		}
	case "health":
		pv.Value = "ONLINE"
	case "guid":
		pv.Value = strconv.FormatUint(p.guid, 10)
	case "load_guid":
		pv.Value = strconv.FormatUint(p.guid^0x5a5a5a5a5a5a5a5a, 10)
	case "dedupratio", "bcloneratio":
		pv.Value = ratio(100, literal)
	case "expandsize", "checkpoint":
		pv.Value = "-"
	case "fragmentation":
		pv.Value = "0"
		if !literal {
			pv.Value += "%"
		}
	case "freeing", "leaked", "bcloneused", "bclonesaved":
		pv.Value = size(0)
	default:
		v, ok := p.props[d.name]
		pv.Source = SourceLocal
		if !ok {
			v, pv.Source = d.def, SourceDefault
			if d.noDef {
				v = "-"
			}
		}
		if d.name == "version" && v == "5000" {
			v = "-"
		}
		pv.Value = v
	}
	return pv
}

// SetPoolProperty sets a settable pool property (zpool set).
func (m *Model) SetPoolProperty(poolName, prop, value string) error {
	if err := m.begin(); err != nil {
		return err
	}
	defer m.unlock()
	p := m.pools[poolName]
	if p == nil {
		return newErr(KindNotFound, "cannot open '%s': no such pool", poolName)
	}
	prefix := "cannot set property for '" + poolName + "'"
	d := poolPropByName[prop]
	switch {
	case d == nil || !d.visible:
		return newErr(KindInvalid, "%s: invalid property '%s'", prefix, prop)
	case d.readonly():
		return newErr(KindReadOnly, "%s: '%s' is readonly", prefix, prop)
	case d.name == "version" || d.name == "ashift" || d.name == "altroot":
		return newErr(KindNotSupported, "%s: '%s' is not modelled", prefix, prop)
	case d.kind == kindIndex:
		v, ok := d.indexValue(value)
		if !ok {
			return newErr(KindInvalid, "%s: '%s' must be one of '%s'", prefix, d.name, d.values)
		}
		value = v
	}
	if p.props == nil {
		p.props = map[string]string{}
	}
	p.props[d.name] = value
	return m.writePool(p)
}

// PoolInfo describes a pool for Go callers.
type PoolInfo struct {
	Name      string
	GUID      uint64
	Size      int64
	Allocated int64
	Free      int64
	Health    string
}

// Pools lists the pools by name.
func (m *Model) Pools() []PoolInfo {
	if err := m.beginRead(); err != nil {
		return nil
	}
	defer m.mu.RUnlock()
	m.freshen()
	m.spaceMu.Lock()
	defer m.spaceMu.Unlock()
	out := make([]PoolInfo, 0, len(m.pools))
	for _, p := range m.pools {
		alloc := min64(m.poolAlloc(p), p.size)
		out = append(out, PoolInfo{Name: p.name, GUID: p.guid, Size: p.size, Allocated: alloc, Free: p.size - alloc, Health: "ONLINE"})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
