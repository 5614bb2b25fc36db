package infinia

import (
	"encoding/json"
	"strconv"
)

// appendLine appends e as json.Marshal encodes it, byte for byte, without
// its cost: json.Marshal scans and compacts every json.RawMessage again
// (the objects, already compact JSON from encodeObj), which was most of
// what a journal line cost. TestJournalLineIsMarshal holds the two equal.
func (e entry) appendLine(b []byte) []byte {
	b = append(b, `{"next":`...)
	b = strconv.AppendInt(b, int64(e.Next), 10)
	if len(e.Subsystems) > 0 {
		b = appendObjEntries(append(b, `,"subsystems":`...), e.Subsystems)
	}
	if len(e.Volumes) > 0 {
		b = appendObjEntries(append(b, `,"volumes":`...), e.Volumes)
	}
	return append(b, '}')
}

func appendObjEntries(b []byte, es []objEntry) []byte {
	b = append(b, '[')
	for i, o := range es {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(append(b, `{"c":`...), o.C)
		b = appendJSONString(append(b, `,"t":`...), o.T)
		b = appendJSONString(append(b, `,"s":`...), o.S)
		if o.D != "" {
			b = appendJSONString(append(b, `,"d":`...), o.D)
		}
		b = appendJSONString(append(b, `,"name":`...), o.Name)
		b = append(b, `,"obj":`...)
		if len(o.Obj) == 0 {
			b = append(b, "null"...)
		} else {
			b = append(b, o.Obj...)
		}
		b = append(b, '}')
	}
	return append(b, ']')
}

// appendJSONString quotes s as encoding/json does: plain printable ASCII
// as it is, anything else (quotes, backslashes, controls, the HTML
// characters it escapes, non-ASCII) through json.Marshal itself.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string always encodes
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
