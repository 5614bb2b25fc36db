package truenas

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"testing"
)

// jsonPieces build parameters: valid values, whitespace, the bytes
// Marshal escapes, and pieces that make the text invalid.
var jsonPieces = []string{`{"name":"tank/a"}`, `1`, `-2.5e3`, `"x"`, `null`, `true`, `[1,2]`, `{"a":[{"b":null}]}`, ` `, "\n", "\t",
	`"<b>"`, `"a&b"`, "\"\u2028\"", `"é"`, `"\u00e2"`, `{`, `]`, `,`, `"unterminated`, `"\\"`, `{"k" : 1}`, ``}

// The record's parameters are json.Marshal's bytes whichever way they are
// made: 30,000 generated parameter lists (valid, invalid, with spaces and
// escaped characters) against Marshal (or "[]" where it fails).
func TestRedactedParamsAreMarshal(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 16))
	fast := 0
	for i := range 30000 {
		params := make([]json.RawMessage, rng.IntN(4))
		for j := range params {
			var b bytes.Buffer
			for range 1 + rng.IntN(2) {
				b.WriteString(jsonPieces[rng.IntN(len(jsonPieces))])
			}
			params[j] = b.Bytes()
		}
		if rng.IntN(20) == 0 {
			params = nil
		}
		p := params
		if p == nil {
			p = []json.RawMessage{}
		}
		want, err := json.Marshal(p)
		if err != nil {
			want = []byte("[]")
		}
		if got := redactParams("pool.dataset.create", params); !bytes.Equal(got, want) {
			t.Fatalf("case %d %q: %s, want %s", i, params, got, want)
		}
		if _, ok := joinPlain(p); ok {
			fast++
		}
	}
	if fast < 3000 {
		t.Fatalf("only %d of 30,000 lists took the join: the test does not exercise it", fast)
	}
}
