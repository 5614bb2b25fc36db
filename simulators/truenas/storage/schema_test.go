package storage

import (
	"encoding/json"
	"sync"
	"testing"

	"github.com/switchyard-csi/switchyard/simulators/truenas/middleware"
)

func TestSchemaMessages(t *testing.T) {
	item := &schema{name: "item", fields: []field{{name: "key", typ: tStr, required: true}}}
	fields := []field{
		{name: "s", typ: tStr, enum: []string{"A", "B"}},
		{name: "i", typ: tInt, check: rangeCheck(false, 0, 100)},
		{name: "b", typ: tBool},
		{name: "inh", typ: tInt, inherit: true},
		{name: "req", typ: tStr, required: true},
		{name: "n", typ: tInt, null: true},
		{name: "l", typ: tList, items: item},
		{name: "d", typ: tStr, def: "dflt"},
	}
	cases := []struct {
		body     string
		pydantic bool
		attr     string
		msg      string
	}{
		{`{"req":"x","zz":1}`, false, "x.zz", "Field was not expected"},
		{`{"req":"x","zz":1}`, true, "x.zz", "Extra inputs are not permitted"},
		{`{}`, false, "x.req", "attribute required"},
		{`{}`, true, "x.req", "Field required"},
		{`{"req":"x","s":"C"}`, false, "x.s", "Invalid choice: C"},
		{`{"req":"x","s":"C"}`, true, "x.s", "Input should be 'A' or 'B'"},
		{`{"req":"x","i":"y"}`, false, "x.i", "Not an integer"},
		{`{"req":"x","i":1.5}`, true, "x.i", "Input should be a valid integer"},
		{`{"req":"x","i":101}`, false, "x.i", "Should be between 0 and 100"},
		{`{"req":"x","b":1}`, false, "x.b", "Not a boolean"},
		{`{"req":"x","req2":1,"s":null}`, false, "x.s", "null not allowed"},
		{`{"req":"x","l":[{"key":"k"},{}]}`, false, "x.l.1.key", "attribute required"},
		{`[]`, false, "x", "A dict was expected"},
	}
	for _, c := range cases {
		sc := schema{name: "x", fields: fields, pydantic: c.pydantic}
		_, err := sc.parse(json.RawMessage(c.body))
		wantValidation(t, err, c.attr, c.msg)
	}
	a, err := schema{name: "x", fields: fields}.parse(json.RawMessage(`{"req":"x","inh":"INHERIT","n":null,"i":"7"}`))
	if err != nil {
		t.Fatal(err)
	}
	if a["inh"] != "INHERIT" || a["n"] != nil || !a.has("n") || a["i"] != int64(7) || a["d"] != "dflt" {
		t.Errorf("parsed %v", a)
	}
	if _, err := (schema{name: "x", fields: fields}).parse(nil); err == nil {
		t.Error("missing parameter: required field not reported")
	}
}

func TestHumanValues(t *testing.T) {
	cases := []struct{ prop, raw, want string }{
		{"used", "98304", "96K"},
		{"used", "0", "0B"},
		{"available", "10737221632", "10.0G"},
		{"volsize", "1073741824", "1G"},
		{"volsize", "1610612736", "1.50G"},
		{"volblocksize", "16384", "16K"},
		{"refquota", "0", "none"},
		{"refquota", "512", "512B"},
		{"compressratio", "1.00", "1.00x"},
		{"copies", "1", "1"},
		{"sync", "standard", "standard"},
	}
	for _, c := range cases {
		if got := human(c.prop, c.raw); got != c.want {
			t.Errorf("human(%s, %s) = %q, want %q", c.prop, c.raw, got, c.want)
		}
	}
	if parsed("refquota", "0") != nil || parsed("used", "5") != int64(5) || parsed("atime", "on") != true || parsed("compression", "on") != "on" {
		t.Error("parsed values")
	}
}

func TestConcurrentCreates(t *testing.T) {
	e := newEnv(t, "25.10")
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for i := 0; i < 20; i++ {
		wg.Add(2)
		name := "tank/par/ds" + string(rune('a'+i))
		go func() {
			defer wg.Done()
			_, err := e.call("pool.dataset.create", map[string]any{"name": name, "create_ancestors": true})
			errs <- err
		}()
		go func() {
			defer wg.Done()
			_, err := e.call("pool.dataset.create", map[string]any{"name": name, "create_ancestors": true})
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	ok, dup := 0, 0
	for err := range errs {
		switch err.(type) {
		case nil:
			ok++
		case middleware.ValidationErrors, *middleware.CallError:
			dup++ // the loser of each pair sees "already exists"
		default:
			t.Errorf("unexpected error %T %v", err, err)
		}
	}
	if ok != 20 || dup != 20 {
		t.Errorf("%d creates succeeded and %d refused, want 20 and 20", ok, dup)
	}
	if n := e.must("pool.dataset.query", []any{[]any{"id", "^", "tank/par/"}}, map[string]any{"count": true}); n != 20.0 {
		t.Errorf("%v datasets", n)
	}
}
