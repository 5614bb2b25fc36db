package api

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
)

// TestDecodeWireIsUnmarshal: decodeWire gives what json.Unmarshal into a
// wireMessage gives, message and error, for answers, errors,
// notifications and the odd ones (keys in another case or escaped, fields
// repeated or of the wrong type, not an object, not JSON).
func TestDecodeWireIsUnmarshal(t *testing.T) {
	for _, msg := range wireSamples {
		checkDecodeWire(t, msg)
	}
}

// FuzzDecodeWire: any message decodes as json.Unmarshal decodes it.
func FuzzDecodeWire(f *testing.F) {
	for _, msg := range wireSamples {
		f.Add(msg)
	}
	f.Fuzz(checkDecodeWire)
}

func checkDecodeWire(t *testing.T, msg string) {
	var want wireMessage
	wantErr := json.Unmarshal([]byte(msg), &want)
	got, err := decodeWire([]byte(msg))
	if (err == nil) != (wantErr == nil) || (err != nil && err.Error() != wantErr.Error()) {
		t.Fatalf("%q: error %v; want %v", msg, err, wantErr)
	}
	if !reflect.DeepEqual(norm(got), norm(want)) {
		t.Fatalf("%q: %+v; want %+v", msg, got, want)
	}
}

var wireSamples = []string{
	`{"jsonrpc":"2.0","id":7,"result":{"id":"tank/a","mountpoint":{"value":"/mnt/tank/a"},"s":"}]\"{"}}`,
	`{"jsonrpc": "2.0", "id": "8", "result": null}`,
	`{"id":9,"result":[1,2,{"a":[]}]}`,
	`{"jsonrpc":"2.0","id":3,"error":{"code":-32001,"message":"Method call error","data":{"error":2,"errname":"ENOENT","reason":"[ENOENT] not found","extra":null}}}`,
	`{"jsonrpc":"2.0","method":"collection_update","params":{"msg":"changed","collection":"core.get_jobs"}}`,
	`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`,
	`{"ID":5,"Result":true}`,
	`{"i\u0064":6,"result":1}`,
	`{"id":1,"result":1,"result":2}`,
	`{"id":1,"error":{"code":1,"message":"a"},"error":{"message":"b"}}`,
	`{"id":1,"error":{"code":1},"error":null}`,
	`{"id":1,"method":5}`,
	`{"id":1,"error":"text"}`,
	`{"id":1,"error":{"code":"x"}}`,
	`{}`, `[]`, `null`, `"x"`, `{"id":1,`, `not json`, ``,
	`{"ſd":1}`, `{"id":1,"result":1} `, ` {"id":1}`,
}

// norm makes nil and empty raw values alike (json.Unmarshal leaves an
// absent RawMessage nil, a copied one non-nil), and the error comparable.
func norm(m wireMessage) wireMessage {
	if len(m.ID) == 0 {
		m.ID = nil
	}
	if len(m.Result) == 0 {
		m.Result = nil
	}
	return m
}

// BenchmarkDecodeWire: an answer carrying a ~5 KB dataset entry (40
// properties of five fields), through json.Unmarshal into a wireMessage
// (before) and decodeWire.
func BenchmarkDecodeWire(b *testing.B) {
	entry := map[string]any{"id": "tank/k8s/pvc-1", "type": "FILESYSTEM"}
	for i := range 40 {
		v := fmt.Sprint(i << 20)
		entry[fmt.Sprintf("property%d", i)] = map[string]any{"value": v, "rawvalue": v, "parsed": v, "source": "DEFAULT", "source_info": nil}
	}
	msg, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 42, "result": entry})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("unmarshal", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(msg)))
		for range b.N {
			var m wireMessage
			if err := json.Unmarshal(msg, &m); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("decodeWire", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(msg)))
		for range b.N {
			if _, err := decodeWire(msg); err != nil {
				b.Fatal(err)
			}
		}
	})
}
