package storage

import (
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/switchyard-csi/switchyard/simulators/zfsmodel"
)

// propEntryMaps is propEntry and userPropEntry as they were before the
// forms shared one boxed value (issue 16, sixth round): the reference
// for TestPropEntryIsTheMapOfForms.
func propEntryMaps(prop string, pv zfsmodel.PropValue, xf func(string) any) map[string]any {
	var info any
	if pv.Source == zfsmodel.SourceInherited && pv.From != "" {
		info = pv.From
	}
	if isUserProp(prop) {
		return map[string]any{"parsed": pv.Value, "rawvalue": pv.Value, "value": pv.Value,
			"source": sourceName(pv.Source), "source_info": info}
	}
	var value any = human(prop, pv.Value)
	if xf != nil {
		value = xf(human(prop, pv.Value))
	}
	return map[string]any{"parsed": parsed(prop, pv.Value), "rawvalue": pv.Value, "value": value,
		"source": sourceName(pv.Source), "source_info": info}
}

// Every entry property, with the values each kind can take and every
// source, gives the maps the plain construction gave.
func TestPropEntryIsTheMapOfForms(t *testing.T) {
	values := []string{"", "-", "0", "1", "512", "131072", "1073741824", "1610612736", "18446744073709551615",
		"-1", "on", "off", "yes", "no", "none", "legacy", "lz4", "posix", "1700000000", "1.00", "x:y", "/mnt/tank/a"}
	sources := []zfsmodel.Source{zfsmodel.SourceNone, zfsmodel.SourceDefault, zfsmodel.SourceLocal,
		zfsmodel.SourceInherited, zfsmodel.SourceTemporary, zfsmodel.SourceReceived}
	n := 0
	for _, p := range entryProps {
		for _, v := range values {
			for _, src := range sources {
				for _, from := range []string{"", "tank/parent"} {
					pv := zfsmodel.PropValue{Value: v, Source: src, From: from}
					want := propEntryMaps(p.zfs, pv, p.xf)
					var got map[string]any
					if isUserProp(p.zfs) {
						got = userPropEntry(pv)
					} else {
						got = propEntry(p.zfs, pv, p.xf)
					}
					if !reflect.DeepEqual(got, want) {
						t.Fatalf("%s %+v:\ngot  %#v\nwant %#v", p.zfs, pv, got, want)
					}
					n++
				}
			}
		}
	}
	if n == 0 || !strings.Contains(sourceName(zfsmodel.SourceInherited), "INHERITED") {
		t.Fatal("nothing compared")
	}
}

// parseUint and parseInt answer what strconv does (the value, and whether
// it is an error) for words, signs, blanks, overflow and digits.
func TestParseIsStrconv(t *testing.T) {
	in := []string{"", "0", "1", "007", "-", "+", "-1", "+1", "--1", "+-1", "1-", " 1", "1 ", "1_000", "0x10", "1e3",
		"1.5", "on", "-0", "18446744073709551615", "18446744073709551616", "9223372036854775807",
		"9223372036854775808", "-9223372036854775808", "-9223372036854775809", "٣", "1\x00"}
	for _, s := range in {
		u, uerr := parseUint(s)
		su, suerr := strconv.ParseUint(s, 10, 64)
		if (uerr == nil) != (suerr == nil) || uerr == nil && u != su {
			t.Errorf("parseUint(%q) = %d, %v; strconv: %d, %v", s, u, uerr, su, suerr)
		}
		i, ierr := parseInt(s)
		si, sierr := strconv.ParseInt(s, 10, 64)
		if (ierr == nil) != (sierr == nil) || ierr == nil && i != si {
			t.Errorf("parseInt(%q) = %d, %v; strconv: %d, %v", s, i, ierr, si, sierr)
		}
	}
}

// upper answers strings.ToUpper, from its cache the second time too.
func TestUpperIsToUpper(t *testing.T) {
	for round := 0; round < 2; round++ {
		for _, s := range []string{"on", "off", "lz4", "zstd-3", "posix", "ON", "", "mixedCase", "ß"} {
			if got := upper(s); got != strings.ToUpper(s) {
				t.Errorf("upper(%q) = %v, want %q", s, got, strings.ToUpper(s))
			}
		}
	}
}
