package truenas

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
)

// parseRPCRequest answers what decoding the message answers (the request,
// or the error code and message), on requests with members in every
// order, whitespace, duplicate members, escapes, invalid UTF-8, unknown
// members and every type of each member, and on 40,000 mutations of them;
// and the scan does take the usual requests.
func TestScannedRequestIsTheDecode(t *testing.T) {
	members := [][]string{
		{`"jsonrpc":"2.0"`, `"jsonrpc":"2.1"`, `"jsonrpc":2`, `"jsonrpc" : "2.0"`, `"json\u0072pc":"2.0"`, `"jsonrpc":"2\u002e0"`},
		{`"method":"pool.dataset.create"`, `"method":"core.ping"`, `"method":1`, `"method":null`, `"method":"a\"b"`, "\"method\":\"\xff\"", `"method":"é"`},
		{`"params":[]`, `"params":[{"name":"tank/a","type":"VOLUME"}, 1 ,"x",[1,[2]],{"a":"]}"}]`, `"params":null`, `"params":{}`, `"params":"x"`,
			`"params":[ ]`, "\"params\":[\n1\t,\r\"\\\"]\" ]", `"params":[true,false,null,-1.5e3]`},
		{`"id":1`, `"id":"x"`, `"id":null`, `"id":-3`, `"id":[1]`, `"id":{}`, `"id":true`, `"id" : 7 `},
		{`"extra":1`, `"jsonrpc":"2.0"`, `"params":[1]`},
	}
	rng := rand.New(rand.NewPCG(5, 6))
	var corpus []string
	for range 4000 {
		var parts []string
		for k, choices := range members {
			if rng.IntN(6) == 0 || k == 4 && rng.IntN(3) > 0 {
				continue
			}
			c := choices[rng.IntN(len(choices))]
			if k < 4 && rng.IntN(3) > 0 {
				c = choices[rng.IntN(2)] // mostly valid: the scan's cases
			}
			parts = append(parts, c)
		}
		rng.Shuffle(len(parts), func(i, j int) { parts[i], parts[j] = parts[j], parts[i] })
		msg := "{"
		for i, p := range parts {
			if i > 0 {
				msg += []string{",", " , ", ",\n"}[rng.IntN(3)]
			}
			msg += p
		}
		msg += []string{"}", " }", "}\n"}[rng.IntN(3)]
		corpus = append(corpus, []string{"", " ", "\t"}[rng.IntN(3)]+msg)
	}
	alphabet := []byte(`{}[]":,0123456789.eE-+ tnulrfas\` + "\x00\xff\n")
	for range 40000 {
		b := []byte(corpus[rng.IntN(4000)])
		for range 1 + rng.IntN(2) {
			i := rng.IntN(len(b))
			switch rng.IntN(3) {
			case 0:
				b = append(b[:i:i], append([]byte{alphabet[rng.IntN(len(alphabet))]}, b[i:]...)...)
			case 1:
				b = append(b[:i:i], b[i+1:]...)
			default:
				b[i] = alphabet[rng.IntN(len(alphabet))]
			}
		}
		corpus = append(corpus, string(b))
	}
	scanned := 0
	for _, s := range corpus {
		data := []byte(s)
		req, code, msg := parseRPCRequest(data)
		var want rpcRequest
		wcode, wmsg := notOneObject(data)
		if wcode == 0 {
			want, wcode, wmsg = decodeRPCRequest(data)
		}
		if code != wcode || msg != wmsg || fmt.Sprintf("%s %q %q", req.id, req.method, req.params) != fmt.Sprintf("%s %q %q", want.id, want.method, want.params) ||
			(req.id == nil) != (want.id == nil) || !reflect.DeepEqual(len(req.params), len(want.params)) || code == 0 && req.params == nil {
			t.Fatalf("%q:\nparse  %s %q %q %d %s\ndecode %s %q %q %d %s", s, req.id, req.method, req.params, code, msg, want.id, want.method, want.params, wcode, wmsg)
		}
		if !surelyOneObject(data) {
			continue // scanRPCRequest reads only what json.Valid accepted
		}
		if _, ok := scanRPCRequest(data); ok {
			scanned++
		}
	}
	if scanned < 2000 {
		t.Fatalf("only %d of %d messages were scanned: the test exercises little", scanned, len(corpus))
	}
	t.Logf("%d of %d messages scanned", scanned, len(corpus))
}
