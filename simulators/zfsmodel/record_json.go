package zfsmodel

import (
	"encoding/json"
	"slices"
	"strconv"
)

// appendRecordJSON appends what json.Marshal makes of r, byte for byte
// (TestRecordJSONIsMarshal): the fields in order, omitempty as tagged,
// map keys sorted. Every create, property change and destroy's neighbour
// writes a record; json.Marshal's reflection over the record and its
// property maps was most of a create's own CPU in the model (issue 16).
func appendRecordJSON(b []byte, r *record) []byte {
	b = append(b, `{"guid":`...)
	b = strconv.AppendUint(b, r.GUID, 10)
	if r.Parent != 0 {
		b = append(b, `,"parent":`...)
		b = strconv.AppendUint(b, r.Parent, 10)
	}
	b = append(b, `,"pool":`...)
	b = appendJSONString(b, r.Pool)
	b = append(b, `,"leaf":`...)
	b = appendJSONString(b, r.Leaf)
	b = append(b, `,"type":`...)
	b = appendJSONString(b, r.Type)
	b = append(b, `,"creation":`...)
	b = strconv.AppendInt(b, r.Creation, 10)
	b = append(b, `,"createtxg":`...)
	b = strconv.AppendUint(b, r.TXG, 10)
	b = append(b, `,"objsetid":`...)
	b = strconv.AppendUint(b, r.Objset, 10)
	if r.Origin != 0 {
		b = append(b, `,"origin":`...)
		b = strconv.AppendUint(b, r.Origin, 10)
	}
	if r.Refer != 0 {
		b = append(b, `,"refer":`...)
		b = strconv.AppendInt(b, r.Refer, 10)
	}
	if r.Deferred {
		b = append(b, `,"defer_destroy":true`...)
	}
	if len(r.Props) > 0 {
		b = append(b, `,"props":`...)
		b = appendJSONMap(b, r.Props)
	}
	if len(r.Received) > 0 {
		b = append(b, `,"received":`...)
		b = appendJSONMap(b, r.Received)
	}
	return append(b, '}')
}

func appendJSONMap(b []byte, m map[string]string) []byte {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, k)
		b = append(b, ':')
		b = appendJSONString(b, m[k])
	}
	return append(b, '}')
}

// appendJSONString quotes s as json.Marshal does. A string of printable
// ASCII that json leaves as it is (no quote, backslash, or the <, > and &
// it escapes for HTML) is copied; any other goes through json.Marshal,
// so its escapes are json's own.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string always encodes
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
