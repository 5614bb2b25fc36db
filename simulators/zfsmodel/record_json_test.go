package zfsmodel

import (
	"bytes"
	"encoding/json"
	"math/rand"
	"testing"
)

// The record's hand-written encoding is json.Marshal's, byte for byte, on
// random records: zero and non-zero fields (omitempty), empty and nil
// maps, and strings json escapes (quotes, backslashes, <, > and &, control
// characters, non-ASCII, invalid UTF-8, U+2028).
func TestRecordJSONIsMarshal(t *testing.T) {
	rng := rand.New(rand.NewSource(16))
	pieces := []string{"a", "tank", "k8s/pvc-1", "democratic-csi:x", "=", " ", `"`, `\`, "<", ">", "&", "\n", "\t", "\x00", "\x1f", "\x7f",
		"é", "日本", "\xff", "\xe2\x80\xa8", "\u2029", "{\"k\":1}", ""}
	str := func() string {
		var b []byte
		for range rng.Intn(5) {
			b = append(b, pieces[rng.Intn(len(pieces))]...)
		}
		return string(b)
	}
	num := func() uint64 {
		switch rng.Intn(3) {
		case 0:
			return 0
		case 1:
			return uint64(rng.Intn(1000))
		}
		return rng.Uint64()
	}
	props := func() map[string]string {
		switch rng.Intn(3) {
		case 0:
			return nil
		case 1:
			return map[string]string{}
		}
		m := map[string]string{}
		for range 1 + rng.Intn(6) {
			m[str()] = str()
		}
		return m
	}
	for i := 0; i < 20000; i++ {
		r := record{
			GUID: num(), Parent: num(), Pool: str(), Leaf: str(), Type: str(),
			Creation: int64(num()), TXG: num(), Objset: num(), Origin: num(), Refer: int64(num()),
			Deferred: rng.Intn(2) == 0, Props: props(), Received: props(),
		}
		want, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendRecordJSON(nil, &r); !bytes.Equal(got, want) {
			t.Fatalf("record %+v:\n got %s\nwant %s", r, got, want)
		}
	}
}
