package storage

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/switchyard-csi/switchyard/simulators/truenas/middleware"
	"github.com/switchyard-csi/switchyard/simulators/zfsmodel"
)

// The middleware reports each ZFS property as {parsed, rawvalue, value,
// source, source_info} (py-libzfs): rawvalue is what zfs get -p prints,
// value what zfs get prints (sizes as "1G"), parsed a typed rawvalue (an
// int for sizes, a bool for on/off, a string otherwise).

// byteStats are read-only space figures, printed with a B unit below 1K.
var byteStats = map[string]bool{
	"used": true, "available": true, "referenced": true, "logicalreferenced": true,
	"usedbydataset": true, "usedbysnapshots": true, "usedbychildren": true,
	"usedbyrefreservation": true, "logicalused": true, "written": true,
}

// noneZero are the sizes where 0 means "none".
var noneZero = map[string]bool{"quota": true, "refquota": true, "reservation": true, "refreservation": true}

// sizes are other byte-valued properties.
var sizes = map[string]bool{
	"volsize": true, "volblocksize": true, "recordsize": true, "special_small_blocks": true,
}

// plainNumbers print as they are (no unit).
var plainNumbers = map[string]bool{
	"createtxg": true, "guid": true, "objsetid": true, "userrefs": true, "pbkdf2iters": true,
	"copies": true,
}

// niceNum is zfs_nicenum_format: 1024-based units in at most 5 characters
// where possible ("1.50G", "96K"); withB adds the B unit below 1K.
func niceNum(num uint64, withB bool) string {
	units := []string{"", "K", "M", "G", "T", "P", "E"}
	if withB {
		units[0] = "B"
	}
	n, index := num, 0
	for n >= 1024 && index < 6 {
		n /= 1024
		index++
	}
	div := math.Pow(1024, float64(index))
	if index == 0 || num%uint64(div) == 0 {
		return strconv.FormatUint(n, 10) + units[index]
	}
	var s string
	for i := 2; i >= 0; i-- {
		s = strconv.FormatFloat(float64(num)/div, 'f', i, 64) + units[index]
		if len(s) <= 5 {
			break
		}
	}
	return s
}

// human is what zfs get (without -p) prints for a property whose literal
// value is raw.
func human(prop, raw string) string {
	n, err := parseUint(raw)
	switch {
	case prop == "creation" && err == nil:
		t := time.Unix(int64(n), 0).Local()
		return fmt.Sprintf("%s %s %2d %2d:%02d %d", t.Weekday().String()[:3], t.Month().String()[:3],
			t.Day(), t.Hour(), t.Minute(), t.Year())
	case prop == "compressratio" || prop == "refcompressratio":
		return raw + "x"
	case err != nil || plainNumbers[prop]:
		return raw
	case noneZero[prop] && n == 0:
		return "none"
	case byteStats[prop] || noneZero[prop]:
		return niceNum(n, true)
	case sizes[prop]:
		return niceNum(n, false)
	}
	return raw
}

// parsed types a literal value as py-libzfs does.
func parsed(prop, raw string) any { return parsedOr(prop, raw, raw) }

// parsedOr is parsed with rawAny (raw, boxed) as the answer that is the
// literal value itself.
func parsedOr(prop, raw string, rawAny any) any {
	if prop == "creation" {
		if n, err := parseInt(raw); err == nil {
			return map[string]any{"$date": n * 1000}
		}
	}
	if byteStats[prop] || noneZero[prop] || sizes[prop] || plainNumbers[prop] {
		if n, err := parseInt(raw); err == nil {
			if noneZero[prop] && n == 0 {
				return nil
			}
			return n
		}
	}
	if booleans[prop] {
		switch raw {
		case "on", "yes":
			return true
		case "off", "no":
			return false
		}
	}
	return rawAny
}

// booleans are the on/off properties libzfs parses as booleans.
var booleans = map[string]bool{
	"atime": true, "readonly": true, "exec": true, "devices": true, "setuid": true, "zoned": true,
	"vscan": true, "nbmand": true, "relatime": true, "overlay": true, "utf8only": true,
	"mounted": true, "defer_destroy": true,
}

// sourceName is the middleware's name of a property source.
func sourceName(s zfsmodel.Source) string { return sourceValue(s).(string) }

// sourceValue is sourceName as a map value: the constants boxed once by
// the compiler, where boxing sourceName's string allocated for each of an
// entry's ~45 properties (issue 16, seventh round).
func sourceValue(s zfsmodel.Source) any {
	switch s {
	case zfsmodel.SourceDefault:
		return "DEFAULT"
	case zfsmodel.SourceLocal:
		return "LOCAL"
	case zfsmodel.SourceInherited:
		return "INHERITED"
	case zfsmodel.SourceTemporary:
		return "TEMPORARY"
	case zfsmodel.SourceReceived:
		return "RECEIVED"
	}
	return "NONE"
}

// sourceInfo is an entry's source_info: the dataset an inherited value
// comes from, else null.
func sourceInfo(pv zfsmodel.PropValue) any {
	if pv.Source == zfsmodel.SourceInherited && pv.From != "" {
		return pv.From
	}
	return nil
}

// propEntry is one property of an entry. value is transformed by xf (the
// middleware upper-cases enums, turns "none" into null, ...). The forms
// that are the literal value itself share one boxed copy of it (each
// conversion to any allocated; TestPropEntryIsTheMapOfForms).
func propEntry(prop string, pv zfsmodel.PropValue, xf func(string) any) map[string]any {
	return propFormsOf(prop, pv, xf).entry()
}

// propForms are the five fields of a property's entry.
type propForms struct{ parsed, raw, value, source, sourceInfo any }

// entry is the fields as a row's map.
func (f propForms) entry() map[string]any {
	return map[string]any{
		"parsed": f.parsed, "rawvalue": f.raw, "value": f.value,
		"source": f.source, "source_info": f.sourceInfo,
	}
}

// appendJSON writes the fields as Encode writes entry's map: keys in
// byte order.
func (f propForms) appendJSON(dst []byte) ([]byte, error) {
	var err error
	for _, field := range [5]struct {
		key string
		v   any
	}{{`{"parsed":`, f.parsed}, {`,"rawvalue":`, f.raw}, {`,"source":`, f.source},
		{`,"source_info":`, f.sourceInfo}, {`,"value":`, f.value}} {
		dst = append(dst, field.key...)
		if dst, err = middleware.AppendEncoded(dst, field.v); err != nil {
			return nil, err
		}
	}
	return append(dst, '}'), nil
}

// propFormsOf is propEntry's fields, for propEntry's map and for
// propForms.appendJSON, which writes them without one (datasetAnswer).
func propFormsOf(prop string, pv zfsmodel.PropValue, xf func(string) any) propForms {
	raw := pv.Value
	var rawAny any = raw
	h := human(prop, raw)
	var value any
	switch {
	case xf != nil:
		value = xf(h)
	case h == raw:
		value = rawAny
	default:
		value = h
	}
	return propForms{parsed: parsedOr(prop, raw, rawAny), raw: rawAny, value: value,
		source: sourceValue(pv.Source), sourceInfo: sourceInfo(pv)}
}

// userPropForms are a user property's fields: every form is the string
// itself.
func userPropForms(pv zfsmodel.PropValue) propForms {
	var v any = pv.Value
	return propForms{parsed: v, raw: v, value: v, source: sourceValue(pv.Source), sourceInfo: sourceInfo(pv)}
}

// userPropEntry is a user property: every form is the string itself.
func userPropEntry(pv zfsmodel.PropValue) map[string]any {
	return userPropForms(pv).entry()
}

// upper is the middleware's upper-casing of an enum value. The values are
// a property's few choices, so each is upper-cased and boxed once and
// kept (upperCache; at most maxUpperCached of them): ToUpper and the
// boxing were two allocations per enum property per entry (issue 16,
// seventh round).
func upper(s string) any {
	if v, ok := upperCache.Load(s); ok {
		return v
	}
	var v any = strings.ToUpper(s)
	if upperCached.Load() < maxUpperCached {
		if _, loaded := upperCache.LoadOrStore(s, v); !loaded {
			upperCached.Add(1)
		}
	}
	return v
}

var (
	upperCache  sync.Map // string -> any (its upper case)
	upperCached atomic.Int64
)

const maxUpperCached = 1024

// errNotNumber is what parseUint and parseInt answer for a value that
// does not start as a number, without strconv's *NumError: most values
// parsed per entry are words ("on", "lz4", "-"), and each error allocated
// a copy of the value (issue 16, seventh round). strconv still judges
// the rest (and errs on "1x").
var errNotNumber = errors.New("not a number")

// parseUint is strconv.ParseUint(s, 10, 64) (errNotNumber for a value
// that does not start with a digit).
func parseUint(s string) (uint64, error) {
	if s == "" || s[0] < '0' || s[0] > '9' {
		return 0, errNotNumber
	}
	return strconv.ParseUint(s, 10, 64)
}

// parseInt is strconv.ParseInt(s, 10, 64), likewise after a sign.
func parseInt(s string) (int64, error) {
	t := s
	if t != "" && (t[0] == '+' || t[0] == '-') {
		t = t[1:]
	}
	if t == "" || t[0] < '0' || t[0] > '9' {
		return 0, errNotNumber
	}
	return strconv.ParseInt(s, 10, 64)
}

// nullNone is the middleware's _null: "none" becomes null.
func nullNone(s string) any {
	if s == "none" {
		return nil
	}
	return s
}

func isUserProp(name string) bool { return strings.Contains(name, ":") }
