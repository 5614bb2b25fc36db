package engine

import (
	"encoding/json"
	"maps"
	"testing"

	"github.com/switchyard-csi/switchyard/driver/zfs"
)

// TestWrittenContextAnswersAsTheDecode checks that a create's own share
// context, read back unchanged, answers exactly what decoding it answers,
// and that anything else on the dataset is decoded.
func TestWrittenContextAnswersAsTheDecode(t *testing.T) {
	for _, vc := range []map[string]string{
		{"server": "10.0.0.1", "share": "/mnt/tank/v/pvc-1", "node_attach_driver": "nfs"},
		{"html": "<a&b>", "quote": `"\`, "uni": "ünï\u2028", "empty": ""},
		{"bad": "\xff\xfe"}, // json.Marshal replaces it: decode instead
		{},
		nil,
	} {
		raw, _ := json.Marshal(vc)
		w := &writtenContext{raw: string(raw), vc: vc}
		props := zfs.Properties{propShareContext: {Value: string(raw)}}
		want, wok := storedContext(props)
		got, gok := w.stored(props)
		if gok != wok || !maps.Equal(got, want) {
			t.Errorf("%q: stored = %q, %v; the decode: %q, %v", raw, got, gok, want, wok)
		}
	}
	w := &writtenContext{raw: `{"a":"1"}`, vc: map[string]string{"a": "1"}}
	for _, v := range []string{`{"a":"2","lun":3}`, "", "-", "not json"} {
		props := zfs.Properties{propShareContext: {Value: v}}
		want, wok := storedContext(props)
		got, gok := w.stored(props)
		if gok != wok || !maps.Equal(got, want) {
			t.Errorf("%q on the dataset: stored = %q, %v; the decode: %q, %v", v, got, gok, want, wok)
		}
	}
}
