package api

import (
	"encoding/json"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// FuzzRESTBody: any REST error body gives a message and fields without a
// panic; a plain-text message is at most 300 bytes; fields come sorted by
// attribute.
func FuzzRESTBody(f *testing.F) {
	for _, b := range []string{
		`{"message":"[ENOENT] no such dataset","errno":2}`, `{"pool_dataset_create.name":[{"message":"exists","errno":17}],"null":[{"message":"x"}]}`,
		`"plain json string"`, "<html>502</html>", strings.Repeat("x", 400), `{"message":7}`, `[]`, "",
	} {
		f.Add([]byte(b))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		msg, obj := restMessage(body)
		if obj == nil && !json.Valid(body) && len(msg) > 300 {
			t.Fatalf("plain-text body quoted at %d bytes", len(msg))
		}
		if obj == nil {
			return
		}
		fs := restFields(obj)
		if !sort.SliceIsSorted(fs, func(i, j int) bool { return fs[i].Attribute < fs[j].Attribute }) {
			t.Fatalf("fields not sorted: %#v", fs)
		}
		_ = (&Error{Method: "m", HTTPStatus: 422, Message: msg, Fields: fs}).Error()
	})
}

// FuzzRPCAnswer: any JSON-RPC message decodes to an id and an *Error (or
// a result) without a panic; an error always has text; an integer id
// reads back as itself, quoted or not.
func FuzzRPCAnswer(f *testing.F) {
	for _, m := range []string{
		`{"jsonrpc":"2.0","id":3,"result":{"id":"tank/v"}}`,
		`{"jsonrpc":"2.0","id":"4","error":{"code":-32001,"message":"Method call error","data":{"error":2,"errname":"ENOENT","reason":"[ENOENT] gone"}}}`,
		`{"id":5,"error":{"code":-32602,"message":"Invalid params","data":{"extra":[["pool.name","required",22],[null,"whole"],[1]]}}}`,
		`{"id":null,"method":"collection_update"}`, `{"id":1e3}`, `{"error":{"data":{"reason":"[ no"}}}`,
	} {
		f.Add([]byte(m), int64(7))
	}
	f.Fuzz(func(t *testing.T, data []byte, n int64) {
		for _, raw := range []string{strconv.FormatInt(n, 10), strconv.Quote(strconv.FormatInt(n, 10))} {
			if id, ok := parseWireID(json.RawMessage(raw)); !ok || id != n {
				t.Fatalf("parseWireID(%s) = %d, %v", raw, id, ok)
			}
		}
		var m wireMessage
		if json.Unmarshal(data, &m) != nil {
			return
		}
		_, _ = parseWireID(m.ID)
		if m.Error != nil {
			e := rpcError("pool.dataset.query", m.Error)
			if e.Error() == "" || !strings.Contains(e.Error(), "pool.dataset.query") {
				t.Fatalf("error %#v reads %q", e, e.Error())
			}
		}
	})
}

// FuzzJob: any core.get_jobs answer decodes to a job whose failure is an
// *Error with text, and a job id answer reads back as itself.
func FuzzJob(f *testing.F) {
	for _, j := range []string{
		`[{"id":9,"state":"FAILED","error":"[EINVAL] bad","exc_info":{"type":"VALIDATION","errno":22,"extra":[["a","b",22]]}}]`,
		`[{"id":9,"state":"ABORTED"}]`, `[{"id":1,"state":"SUCCESS","result":true}]`, `[]`, `[{"exc_info":{"extra":{}}}]`,
	} {
		f.Add([]byte(j), int64(9))
	}
	f.Fuzz(func(t *testing.T, data []byte, n int64) {
		if id, ok := jobID(json.RawMessage(" " + strconv.FormatInt(n, 10) + "\n")); !ok || id != n {
			t.Fatalf("jobID(%d) = %d, %v", n, id, ok)
		}
		var jobs []jobEntry
		if json.Unmarshal(data, &jobs) != nil {
			return
		}
		for _, j := range jobs {
			e := jobError("m", j)
			if e.Error() == "" || (e.Message == "" && len(e.Fields) == 0 && j.State != "FAILED") {
				t.Fatalf("job %#v gives error %#v", j, e)
			}
		}
	})
}

// FuzzParseVersion: a version read from any text writes back as text that
// reads as the same version.
func FuzzParseVersion(f *testing.F) {
	for _, s := range []string{"TrueNAS-SCALE-24.10.2", "TrueNAS-25.04.2", "TrueNAS-13.0-U6.1", `"FreeNAS-11.3-U5"`, "x", "1.2", "a1-2.3", "99999999999999999999.1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseVersion(s)
		if err != nil {
			return
		}
		back, err := ParseVersion(v.String())
		if err != nil || back != v {
			t.Fatalf("ParseVersion(%q) = %+v; its String %q reads back as %+v, %v", s, v, v.String(), back, err)
		}
	})
}
