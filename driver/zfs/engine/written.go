package engine

import (
	"unicode/utf8"

	"github.com/switchyard-csi/switchyard/driver/zfs"
)

// writtenContext is a share context a create encoded and wrote itself: raw
// is its JSON, vc the map it came from. When the create's read-back holds
// exactly raw, decoding it again would give vc back (a JSON object of
// strings, every one valid UTF-8, decodes to the map it was made from), so
// the decode is skipped: it was the create's largest own cost after the
// program itself (issue 16, docs/performance.md).
type writtenContext struct {
	raw string
	vc  map[string]string
}

// stored is storedContext(props), answered from w when the dataset holds
// what w wrote. A nil w, another value (an earlier call's, a corrected
// one) or a map json.Marshal would have altered (invalid UTF-8, replaced by
// U+FFFD) take the decode.
func (w *writtenContext) stored(props zfs.Properties) (map[string]string, bool) {
	if w == nil || props[propShareContext].Value != w.raw || !validUTF8(w.vc) {
		return storedContext(props)
	}
	return w.vc, true
}

func validUTF8(m map[string]string) bool {
	for k, v := range m {
		if !utf8.ValidString(k) || !utf8.ValidString(v) {
			return false
		}
	}
	return true
}
