package middleware

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"reflect"
	"strings"
	"testing"
)

// genArg writes a random JSON value of the kinds arguments hold, with
// random white space, numbers of every form, repeated keys, and strings
// that now and then hold an escape, a control character or non-ASCII
// (which the scan leaves to the decoder).
func genArg(r *rand.Rand, b *strings.Builder, depth int) {
	ws := func() {
		for r.Intn(4) == 0 {
			b.WriteByte(" \t\n\r"[r.Intn(4)])
		}
	}
	ws()
	str := func() {
		parts := []string{"a", "name", "tank/k8s/pvc-1", "x:y", "", " ", "<&>", `\"`, `\n`, `\/`, `\\`, `\t`, `\x`, `\u00e9`, `\ud800`, "\xe2\x80\xa8", "é", "\x01", "\xff", "/", "0"}
		b.WriteByte('"')
		for n := r.Intn(3); n >= 0; n-- {
			b.WriteString(parts[r.Intn(len(parts))])
		}
		b.WriteByte('"')
	}
	k := r.Intn(10)
	if depth > 3 {
		k = 2 + r.Intn(8)
	}
	switch k {
	case 0:
		b.WriteByte('{')
		for i, n := 0, r.Intn(5); i < n; i++ {
			if i > 0 {
				b.WriteByte(',')
			}
			ws()
			if r.Intn(3) == 0 {
				b.WriteString(`"k"`) // repeated keys: the last wins
			} else {
				str()
			}
			ws()
			b.WriteByte(':')
			genArg(r, b, depth+1)
		}
		ws()
		b.WriteByte('}')
	case 1:
		b.WriteByte('[')
		for i, n := 0, r.Intn(5); i < n; i++ {
			if i > 0 {
				b.WriteByte(',')
			}
			genArg(r, b, depth+1)
		}
		ws()
		b.WriteByte(']')
	case 2, 3:
		str()
	case 4, 5:
		nums := []string{"0", "-0", "1", "-1", "12345678901234567890123", "1.5", "-0.25", "1e9", "1E+2", "2.5e-3", "1073741824", "0.0"}
		b.WriteString(nums[r.Intn(len(nums))])
	case 6:
		b.WriteString("true")
	case 7:
		b.WriteString("false")
	default:
		b.WriteString("null")
	}
	ws()
}

// DecodeNumbers gives the decoder's value, or its error, and ScanList
// and ScanObject json.Unmarshal's list and object (or leave it to
// Unmarshal), for 40,000 generated arguments and as many with a byte changed, cut or added
// (leading zeros, bad literals, trailing data, unclosed values).
func TestDecodeNumbersIsTheDecoder(t *testing.T) {
	r := rand.New(rand.NewSource(16))
	fast, lists, objects := 0, 0, 0
	check := func(raw []byte) {
		t.Helper()
		got, gerr := DecodeNumbers(raw)
		want, werr := decodeWithDecoder(raw)
		if fmt.Sprint(gerr) != fmt.Sprint(werr) || !reflect.DeepEqual(got, want) {
			t.Fatalf("%q:\ngot  %#v %v\nwant %#v %v", raw, got, gerr, want, werr)
		}
		// ScanList answers only where json.Unmarshal into a list
		// succeeds, with its list
		if l, ok := ScanList(raw); ok {
			var wl []any
			if err := json.Unmarshal(raw, &wl); err != nil || !reflect.DeepEqual(l, wl) {
				t.Fatalf("%q: ScanList %#v, Unmarshal %#v %v", raw, l, wl, err)
			}
			lists++
		}
		if o, ok := ScanObject(raw); ok {
			var wo map[string]any
			if err := json.Unmarshal(raw, &wo); err != nil || !reflect.DeepEqual(o, wo) {
				t.Fatalf("%q: ScanObject %#v, Unmarshal %#v %v", raw, o, wo, err)
			}
			objects++
		}
	}
	for i := 0; i < 40000; i++ {
		var b strings.Builder
		genArg(r, &b, 0)
		raw := []byte(b.String())
		check(raw)
		s := argScanner{b: raw}
		if _, ok := s.value(0); ok && s.end() {
			fast++
		}
		m := append([]byte(nil), raw...)
		switch pos := r.Intn(len(m) + 1); r.Intn(4) {
		case 0:
			if pos < len(m) {
				m[pos] = "{}[],:\"0-1.eE+tfnx \\"[r.Intn(20)]
			}
		case 1:
			m = m[:pos]
		case 2:
			m = append(m[:pos:pos], append([]byte{"{}[],:\"01.e-x"[r.Intn(13)]}, m[pos:]...)...)
		default:
			m = append(m, " x"[r.Intn(2)])
		}
		check(m)
	}
	for _, raw := range []string{"", " ", "01", "-", "1.", "1e", ".5", "+1", "tru", "nul", "[1,]", `{"a":1,}`, `{"a" 1}`, `{1:2}`,
		`[1 2]`, "{} {}", "[1e999]", "[-1e400, 2]", ` [1, 2.5, "a\"b"] `, `"a\`, strings.Repeat("[", 200) + strings.Repeat("]", 200), `"\u0000"`, "[1]x"} {
		check([]byte(raw))
	}
	if fast < 20000 || lists < 3000 || objects < 2000 {
		t.Fatalf("only %d of 40,000 generated arguments took the scan, %d lists, %d objects", fast, lists, objects)
	}
}

// BenchmarkDecodeNumbers decodes a pool.dataset.create argument as the
// driver sends it.
func BenchmarkDecodeNumbers(b *testing.B) {
	raw := []byte(`{"name":"tank/k8s/pvc-1","type":"FILESYSTEM","refquota":1073741824,"refreservation":0,"user_properties":[` +
		`{"key":"democratic-csi:csi_share_volume_context","value":"some value"},{"key":"democratic-csi:managed_resource","value":"true"}]}`)
	for _, fn := range []struct {
		name string
		f    func([]byte) (any, error)
	}{{"scan", DecodeNumbers}, {"decoder", decodeWithDecoder}} {
		b.Run(fn.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, err := fn.f(raw); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
