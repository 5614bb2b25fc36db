package middleware

import (
	"encoding/json"
	"testing"
)

// FuzzQuery: any query parameters are accepted or refused with an error,
// never a panic; an accepted query over rows returns no more rows than
// it was given (or a count, or one row).
func FuzzQuery(f *testing.F) {
	for _, s := range [][2]string{
		{`[["id","=","tank/a"]]`, `{"limit":1}`}, {`[["OR",[["id","^","tank"],["used.parsed",">",5]]]]`, `{"order_by":["-id"],"select":["id"]}`},
		{`[["name","~","(a+)+$"]]`, `{"count":true}`}, {`[["id","in",["a","b"]]]`, `{"get":true}`}, {`7`, `[]`}, {`[["a"]]`, `{"offset":-1}`},
		{`[["id","rin","x"],["id","nin",null]]`, `{"extra":{"flat":false}}`}, {`null`, `{"order_by":["nulls_first:used.parsed"]}`},
	} {
		f.Add([]byte(s[0]), []byte(s[1]))
	}
	rows := []Row{
		{"id": "tank/a", "name": "a", "used": map[string]any{"parsed": 10.0}},
		{"id": "tank/b", "name": "aaab", "used": map[string]any{"parsed": 1.0}},
		{"id": "x", "name": nil},
	}
	f.Fuzz(func(t *testing.T, filters, options []byte) {
		if !json.Valid(filters) || !json.Valid(options) {
			return
		}
		fs, opts, err := ParseQuery([]json.RawMessage{filters, options}, "q")
		if err != nil {
			return
		}
		res, err := Query(rows, fs, opts)
		if err != nil {
			return
		}
		if list, ok := res.([]Row); ok && len(list) > len(rows) {
			t.Fatalf("query gave %d rows of %d", len(list), len(rows))
		}
	})
}
