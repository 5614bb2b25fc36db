package api

import (
	"encoding/json"
	"math/rand"
	"reflect"
	"testing"
)

// TestPlainParamsIsTheRoundTrip: for random parameters of the types the
// driver passes, plainParams gives what the JSON round trip gives; for
// the others it declines (and the round trip runs).
func TestPlainParamsIsTheRoundTrip(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	strs := []string{"", "tank/k8s/pvc-1", "a <b> & \"c\"", "é\u2028", "\x00ctl", "FILESYSTEM"}
	var gen func(depth int) any
	gen = func(depth int) any {
		k := r.Intn(14)
		if depth > 3 {
			k = r.Intn(7)
		}
		switch k {
		case 0:
			return nil
		case 1:
			return r.Intn(2) == 0
		case 2:
			return strs[r.Intn(len(strs))]
		case 3:
			return r.Intn(1<<20) - 1<<19
		case 4:
			return r.Int63()
		case 5:
			return r.Uint64()
		case 6:
			return json.Number("12")
		case 7:
			m := map[string]any{}
			for range r.Intn(4) {
				m[strs[r.Intn(len(strs))]] = gen(depth + 1)
			}
			return m
		case 8:
			return map[string]string{"key": "org.switchyard:x", "value": strs[r.Intn(len(strs))]}
		case 9:
			s := make([]any, r.Intn(4))
			for i := range s {
				s[i] = gen(depth + 1)
			}
			return s
		case 10:
			return []string{"id", "=", strs[r.Intn(len(strs))]}
		case 11:
			return []map[string]any{{"key": "org.switchyard:x", "value": gen(depth + 1)}}
		case 12:
			return []any(nil)
		default:
			return map[string]any(nil)
		}
	}
	for i := 0; i < 3000; i++ {
		params := make([]any, 1+r.Intn(3))
		for j := range params {
			params[j] = gen(0)
		}
		got, ok := plainParams(params)
		if !ok {
			t.Fatalf("plainParams declined %#v", params)
		}
		want, err := roundTripParams(params)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("params %#v:\nplain      %#v\nround trip %#v", params, got, want)
		}
	}
	for _, p := range []any{1.5, float64(3), struct{ A int }{1}, "\xff", map[string]any{"\xfe": 1}, []string{"ok", "\xff"}, int8(1), (*int)(nil)} {
		if out, ok := plainParams([]any{p}); ok {
			t.Errorf("plainParams(%#v) = %#v; want it declined", p, out)
		}
	}
}
