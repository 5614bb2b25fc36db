package truenas

import (
	"math/rand/v2"
	"testing"
)

// parseRPCRequest skips the full decode for a message json.Valid accepts
// that starts with "{": every such message must be one the decode takes
// as one object, else an error would go unreported. (The converse need
// not hold: what the shortcut leaves goes through the decode as before,
// e.g. "{}]x", which the decoder's More accepts.)
func TestOneObjectShortcutIsTheDecode(t *testing.T) {
	corpus := []string{
		`{}`, ` {} `, "{}\n", `{} {}`, `{}x`, `[]`, `1`, `"s"`, `null`, `{`, ``, " ", `{"a":1e400}`,
		"{\"a\":\"\xff\"}", "\ufeff{}", "{\"a\":1}\x00", `{"jsonrpc":"2.0","method":"core.ping","id":1}`,
		`{"jsonrpc":"2.0","method":"pool.dataset.create","params":[{"name":"tank/a","type":"VOLUME","volsize":1073741824}],"id":"x"}`,
		`{"a":[1,2,{"b":null}],"c":true}`, `{"a":01}`, `{"a":-}`, `{"a":"\u00zz"}`, `{"a" 1}`, `{,}`, "\t{}\r\n",
	}
	seeds := append([]string(nil), corpus...)
	rng := rand.New(rand.NewPCG(3, 4))
	alphabet := []byte(`{}[]":,0123456789.eE-+ tnulrfas\` + "\x00\xff\n")
	for range 20000 {
		b := []byte(seeds[rng.IntN(len(seeds))])
		for range rng.IntN(3) { // none in a third: valid messages too
			switch i := rng.IntN(len(b) + 1); rng.IntN(3) {
			case 0: // insert
				b = append(b[:i:i], append([]byte{alphabet[rng.IntN(len(alphabet))]}, b[i:]...)...)
			case 1: // delete
				if i < len(b) {
					b = append(b[:i:i], b[i+1:]...)
				}
			default: // replace
				if i < len(b) {
					b[i] = alphabet[rng.IntN(len(alphabet))]
				}
			}
		}
		corpus = append(corpus, string(b))
	}
	taken := 0
	for _, s := range corpus {
		data := []byte(s)
		shortcut := surelyOneObject(data)
		code, msg := notOneObject(data)
		if shortcut && code != 0 {
			t.Fatalf("%q: the shortcut takes it, the decode says %d %s", s, code, msg)
		}
		if shortcut {
			taken++
		}
	}
	if taken < 3000 {
		t.Fatalf("only %d of %d messages took the shortcut: the corpus tests little", taken, len(corpus))
	}
}
