package middleware

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"
)

// pieces of strings: every byte class appendString treats apart.
var stringPieces = []string{"a", "tank/pvc-0001", " ", "\"", "\\", "/", "<", ">", "&", "\x00", "\x01", "\x1f", "\b", "\f", "\n", "\r", "\t",
	"\x7f", "é", "日本", "\u2028", "\u2029", "\u2027", "\U0001F600", "\xff", "\xc3", "\xe2\x80", "\xed\xa0\x80", "\ufffd", "'", "%", "ü"}

func randString(rng *rand.Rand) string {
	var b bytes.Buffer
	for range rng.IntN(6) {
		b.WriteString(stringPieces[rng.IntN(len(stringPieces))])
	}
	return b.String()
}

var floats = []float64{0, math.Copysign(0, -1), 1, -1, 0.5, 1.0 / 3, 1e-6, 9.99e-7, 1e-7, 1.5e-10, 1e20, 1e21, 9.99e20, 1.23e21, -1e21,
	1e300, -1e-300, 5e-324, math.MaxFloat64, 1 << 53, 1<<53 + 2, 10737418240, 2.5, 100, 1.000001, 123456789.125}

type plainStruct struct {
	A int    `json:"a"`
	B string `json:"b,omitempty"`
}

type marshaler struct{}

func (marshaler) MarshalJSON() ([]byte, error) { return []byte(` { "x" : [1, 2] } `), nil }

type namedMap map[string]any

// randValue builds a tree of what answers hold, and now and then a value
// Encode hands to json.Marshal.
func randValue(rng *rand.Rand, depth int) any {
	n := 14
	if depth > 3 {
		n = 8 // leaves only
	}
	switch rng.IntN(n) {
	case 0:
		return nil
	case 1:
		return rng.IntN(2) == 0
	case 2:
		return randString(rng)
	case 3:
		return floats[rng.IntN(len(floats))] * float64(1-2*rng.IntN(2))
	case 4:
		return rng.Float64() * math.Pow(10, float64(rng.IntN(50)-25))
	case 5:
		return []int64{0, -1, math.MaxInt64, math.MinInt64, 42}[rng.IntN(5)]
	case 6:
		return []any{rng.IntN(1000) - 500, int32(-7), uint64(math.MaxUint64), json.Number("12.50"), float32(0.1), plainStruct{A: 1, B: "<x>"},
			marshaler{}, json.RawMessage(` {"b":1, "a" : "<"} `), []byte("hi"), []int{1, 2}}[rng.IntN(10)]
	case 7:
		return []any{[]string(nil), map[string]any(nil), []any(nil), []map[string]any(nil), []string{}, []string{"a", "<b>"}}[rng.IntN(6)]
	case 8, 9, 10:
		m := map[string]any{}
		for range rng.IntN(8) {
			m[randString(rng)] = randValue(rng, depth+1)
		}
		if rng.IntN(10) == 0 {
			return namedMap(m)
		}
		return m
	case 11, 12:
		l := make([]any, rng.IntN(5))
		for i := range l {
			l[i] = randValue(rng, depth+1)
		}
		return l
	default:
		l := make([]map[string]any, rng.IntN(3))
		for i := range l {
			l[i] = map[string]any{"id": i, "parsed": randValue(rng, depth+1), "value": randString(rng), "source": "NONE", "source_info": nil}
		}
		return l
	}
}

// Encode is json.Marshal, byte for byte, on 50,000 generated trees (keys
// and strings of every escaping class, floats at the format's cutoffs,
// nil maps and lists, values json.Marshal encodes for it), and fails as
// json.Marshal does on NaN and the infinities.
func TestEncodeIsMarshal(t *testing.T) {
	rng := rand.New(rand.NewPCG(16, 6))
	for i := range 50000 {
		v := randValue(rng, 0)
		want, werr := json.Marshal(v)
		got, gerr := Encode(v)
		if werr != nil || gerr != nil {
			t.Fatalf("tree %d: Marshal error %v, Encode error %v", i, werr, gerr)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("tree %d: Encode\n%s\nMarshal\n%s", i, got, want)
		}
		if got, _ := AppendEncoded([]byte("prefix"), v); !bytes.Equal(got, append([]byte("prefix"), want...)) {
			t.Fatalf("tree %d: AppendEncoded lost its prefix: %s", i, got)
		}
	}
	for _, bad := range []any{math.NaN(), math.Inf(1), map[string]any{"x": []any{math.Inf(-1)}}} {
		_, werr := json.Marshal(bad)
		if _, gerr := Encode(bad); gerr == nil || gerr.Error() != werr.Error() {
			t.Errorf("Encode(%v): error %v, want %v", bad, gerr, werr)
		}
	}
}

// Every string of up to two bytes, and each piece above, quotes as
// json.Marshal quotes it.
func TestEncodeStringIsMarshal(t *testing.T) {
	check := func(s string) {
		want, _ := json.Marshal(s)
		if got := appendString(nil, s); !bytes.Equal(got, want) {
			t.Fatalf("%q: %s, want %s", s, got, want)
		}
	}
	for a := range 256 {
		check(string([]byte{byte(a)}))
		for b := range 256 {
			check(string([]byte{byte(a), byte(b)}))
		}
	}
	for _, p := range stringPieces {
		for _, q := range stringPieces {
			check(p + q + "x")
		}
	}
}

func BenchmarkEncodeEntry(b *testing.B) {
	entry := map[string]any{"id": "tank/k8s/pvc-0001", "name": "tank/k8s/pvc-0001", "pool": "tank", "type": "FILESYSTEM",
		"encrypted": false, "encryption_root": nil, "children": []any{}, "user_properties": map[string]any{}}
	for i := range 40 {
		entry["prop"+string(rune('a'+i%26))+string(rune('a'+i/26))] = map[string]any{"parsed": float64(i) * 1024, "rawvalue": "1024",
			"value": "1K", "source": "DEFAULT", "source_info": nil}
	}
	b.Run("Encode", func(b *testing.B) {
		for b.Loop() {
			if _, err := Encode(entry); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Marshal", func(b *testing.B) {
		for b.Loop() {
			if _, err := json.Marshal(entry); err != nil {
				b.Fatal(err)
			}
		}
	})
}
