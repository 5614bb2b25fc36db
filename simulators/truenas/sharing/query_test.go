package sharing

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/switchyard-csi/switchyard/simulators/truenas/middleware"
)

// A query with an id term answers exactly what the query over every row
// answered (rows built the old way: each stored row copied and viewed),
// results and errors, over id values of every JSON kind, other terms
// beside it, OR, and the options that shape the answer.
func TestIDTermQueryIsTheFullQuery(t *testing.T) {
	for _, version := range []string{"24.10", "25.10", "26.04"} {
		e := newEnv(t, version)
		for i := range 12 {
			e.must("sharing.nfs.create", map[string]any{"path": "/mnt/tank/a", "hosts": []any{fmt.Sprintf("host%d", i)}, "comment": fmt.Sprint(i % 3)})
		}
		for _, gone := range []int{2, 5, 12} {
			if _, err := e.call("sharing.nfs.delete", gone); err != nil {
				t.Fatal(err)
			}
		}
		m, _ := e.r.Lookup("sharing.nfs.query")
		c := crud{ns: nsNFS, view: func(row middleware.Row, _ middleware.QueryOptions) middleware.Row { return e.s.nfsView(row) }}
		full := func(params []json.RawMessage) (any, error) {
			filters, opts, err := middleware.ParseQuery(params, "sharing_nfs_query")
			if err != nil {
				return nil, err
			}
			e.s.mu.Lock()
			var all []middleware.Row
			for _, r := range e.s.t[nsNFS].rows {
				all = append(all, c.view(clone(r), opts))
			}
			e.s.mu.Unlock()
			return middleware.Query(all, filters, opts)
		}
		ids := []string{"1", "3", "3.0", "2", "2.5", "-1", "0", "12", "11", "99", `"3"`, "1e300", "null", "true", "[3]", "9007199254740993"}
		others := []string{"", `,["comment","=","1"]`, `,["comment","=","0"]`, `,["OR",[["id","=",4],["id","=",6]]]`}
		options := []string{"{}", `{"get":true}`, `{"count":true}`, `{"limit":1,"offset":0}`, `{"select":["id","path"]}`, `{"order_by":["-id"]}`}
		n := 0
		for _, id := range ids {
			for _, other := range others {
				for _, op := range []string{"=", "!="} {
					for _, o := range options {
						params := []json.RawMessage{json.RawMessage(`[["id","` + op + `",` + id + `]` + other + `]`), json.RawMessage(o)}
						got, gerr := m.Handler(&middleware.Call{Version: e.v, User: "root"}, params)
						want, werr := full(params)
						gb, _ := json.Marshal(got)
						wb, _ := json.Marshal(want)
						if fmt.Sprint(gerr) != fmt.Sprint(werr) || string(gb) != string(wb) {
							t.Fatalf("%s %s %s: got %s %v, want %s %v", version, params[0], o, gb, gerr, wb, werr)
						}
						n++
					}
				}
			}
		}
		if got, _ := e.call("sharing.nfs.query", `[["id","=",3]]`, `{"get":true}`); got.(map[string]any)["id"] != 3.0 {
			t.Fatalf("%s: get of id 3: %v", version, got)
		}
		t.Logf("%s: %d queries", version, n)
	}
}

// idTerm takes only integral numbers of a top-level "=" term on id.
func TestIDTerm(t *testing.T) {
	for _, tc := range []struct {
		filters string
		id      int
		ok      bool
	}{
		{`[["id","=",3]]`, 3, true},
		{`[["path","=","x"],["id","=",7]]`, 7, true},
		{`[["id","=",3.5]]`, 0, false},
		{`[["id","!=",3]]`, 0, false},
		{`[["id","=","3"]]`, 0, false},
		{`[["OR",[["id","=",3],["id","=",4]]]]`, 0, false},
		{`[["id","=",1e300]]`, 0, false},
		{`[]`, 0, false},
	} {
		var f []any
		if err := json.Unmarshal([]byte(tc.filters), &f); err != nil {
			t.Fatal(err)
		}
		if id, ok := idTerm(f); id != tc.id || ok != tc.ok {
			t.Errorf("idTerm(%s) = %d, %v; want %d, %v", tc.filters, id, ok, tc.id, tc.ok)
		}
	}
}
