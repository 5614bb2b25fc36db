package truenas

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"reflect"
	"testing"
)

// testEntry is a pool.dataset entry as the middleware writes one: native
// properties as {value, rawvalue, parsed, source, source_info}, user
// properties both at the top (25.10) and under user_properties, with the
// odd ones a reader must survive (null, a bare value, a number).
func testEntry(r *rand.Rand, n int) map[string]any {
	prop := func(v string) map[string]any {
		return map[string]any{"value": v, "rawvalue": v, "parsed": v, "source": []string{"LOCAL", "DEFAULT", "INHERITED", "NONE"}[r.Intn(4)], "source_info": nil}
	}
	e := map[string]any{
		"id": "tank/k8s/pvc-1", "name": "tank/k8s/pvc-1", "pool": "tank", "type": []string{"FILESYSTEM", "VOLUME"}[r.Intn(2)],
		"encrypted": false, "children": []any{}, "locked": false,
		"user_properties":      map[string]any{"org.switchyard:owner": prop("csi"), "org.switchyard:size": prop("1073741824")},
		"org.switchyard:owner": prop("csi"),
		// keys and strings a step-over must not trip on
		"comments": prop(`a "quoted" }] {[ \\ value`), "p\"1": prop("escaped key"), "mountpoint\u00e9": prop("é"),
		"nested": []any{map[string]any{"a": []any{"}", "]", 1.5e3, nil}}, "[{"},
	}
	switch r.Intn(3) {
	case 0:
		e["mountpoint"] = "/mnt/tank/k8s/pvc-1"
	case 1:
		e["mountpoint"] = prop("/mnt/tank/k8s/pvc-1")
	}
	for i := 0; i < n; i++ {
		switch r.Intn(10) {
		case 0:
			e[fmt.Sprintf("p%d", i)] = nil
		case 1:
			e[fmt.Sprintf("p%d", i)] = float64(r.Intn(1 << 20))
		default:
			e[fmt.Sprintf("p%d", i)] = prop(fmt.Sprint(r.Intn(1 << 30)))
		}
	}
	if r.Intn(2) == 0 {
		e["properties"] = map[string]any{"p0": prop("under properties"), "snapprop": prop("x")}
	}
	return e
}

// TestEntryOfIsTheWholeDecode: for random entries and lists of names (the
// entry's keys, user properties, names it lacks, the keys entryProp reads
// itself), entryProps over the partly decoded entry is entryProps over the
// entry decoded whole.
func TestEntryOfIsTheWholeDecode(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	pool := []string{"p\"1", "mountpointé", "comments", "nested", "name", "type", "mountpoint", "id", "properties", "user_properties", "snapprop", "absent",
		"org.switchyard:owner", "org.switchyard:size", "org.other:x", "p0", "p1", "p2", "p3", "p7", "p20", "p39"}
	for i := 0; i < 500; i++ {
		raw, err := json.Marshal(testEntry(r, 40))
		if err != nil {
			t.Fatal(err)
		}
		names := make([]string, r.Intn(5))
		for j := range names {
			names[j] = pool[r.Intn(len(pool))]
		}
		var whole map[string]any
		if err := json.Unmarshal(raw, &whole); err != nil {
			t.Fatal(err)
		}
		part, ok := entryFields(raw, names) // not the fallback: the step-over itself
		if !ok {
			t.Fatalf("entryFields refused a valid entry: %s", raw)
		}
		if got, want := entryProps(part, names), entryProps(whole, names); !reflect.DeepEqual(got, want) {
			t.Fatalf("names %q: %v; want %v (entry %s)", names, got, want, raw)
		}
	}
}

// TestEntryOfDuplicateKeys: a key given twice is the last, as in
// encoding/json, also when the second is written escaped.
func TestEntryOfDuplicateKeys(t *testing.T) {
	raw := json.RawMessage(`{"id": "a", "mountpoint": "/mnt/one", "x": 1, "mount\u0070oint": "/mnt/two", "id": "b"}`)
	e, err := entryOf(raw, []string{"mountpoint"})
	if err != nil {
		t.Fatal(err)
	}
	if e["mountpoint"] != "/mnt/two" || e["id"] != "b" {
		t.Errorf("entryOf = %v; want mountpoint /mnt/two and id b", e)
	}
}

// TestEntryOfCut: every prefix of an entry (an answer cut short, which the
// transports would have refused) is an error or an entry, never a panic
// or a hang; the whole entry is the whole decode's.
func TestEntryOfCut(t *testing.T) {
	raw, err := json.Marshal(testEntry(rand.New(rand.NewSource(2)), 10))
	if err != nil {
		t.Fatal(err)
	}
	for n := range raw {
		if _, err := entryOf(raw[:n], []string{"mountpoint", "org.switchyard:owner"}); err == nil && n < len(raw)-1 {
			t.Errorf("entryOf(%d of %d bytes): no error", n, len(raw))
		}
	}
}

// TestEntryOfNotAnObject: an answer that is not an object is an error, as
// decoding it into a map was; null is an empty entry.
func TestEntryOfNotAnObject(t *testing.T) {
	for _, raw := range []string{`true`, `[1]`, `"tank/x"`, `{"id": }`, `{"id": "a", "mountpoint": [}`} {
		if e, err := entryOf(json.RawMessage(raw), []string{"mountpoint"}); err == nil {
			t.Errorf("entryOf(%s) = %v; want an error", raw, e)
		}
	}
	if e, err := entryOf(json.RawMessage(`null`), []string{"mountpoint"}); err != nil || e != nil {
		t.Errorf("entryOf(null) = %v, %v; want nil, nil", e, err)
	}
}

// BenchmarkEntryOf: a 40-property entry read for its mountpoint, whole
// (the driver before) and partly.
func BenchmarkEntryOf(b *testing.B) {
	raw, err := json.Marshal(testEntry(rand.New(rand.NewSource(1)), 40))
	if err != nil {
		b.Fatal(err)
	}
	names := []string{"mountpoint"}
	b.Run("whole", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			var e map[string]any
			if err := json.Unmarshal(raw, &e); err != nil {
				b.Fatal(err)
			}
			entryProps(e, names)
		}
	})
	b.Run("partly", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			e, err := entryOf(raw, names)
			if err != nil {
				b.Fatal(err)
			}
			entryProps(e, names)
		}
	})
}

// FuzzEntryOf: for any answer that is valid JSON (what api.Call returns:
// both transports check), entryOf is an error where decoding it into a
// map is, and otherwise gives the same properties; for any other input it
// returns (an entry or an error, never a panic).
func FuzzEntryOf(f *testing.F) {
	r := rand.New(rand.NewSource(3))
	for range 4 {
		raw, err := json.Marshal(testEntry(r, 5))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(raw))
	}
	f.Add(`{"mount\u0070oint": "/mnt/x", "id": "a", "id": 1}`)
	f.Add(`{"mountpoint": {"value": null}, "properties": {"mountpoint": "x"}}`)
	names := []string{"mountpoint", "name", "type", "org.switchyard:owner", "p1", "absent"}
	f.Fuzz(func(t *testing.T, raw string) {
		if !json.Valid([]byte(raw)) {
			_, _ = entryOf(json.RawMessage(raw), names)
			return
		}
		var whole map[string]any
		wantErr := json.Unmarshal([]byte(raw), &whole)
		part, err := entryOf(json.RawMessage(raw), names)
		if (err == nil) != (wantErr == nil) {
			t.Fatalf("%q: error %v; want %v", raw, err, wantErr)
		}
		if err == nil && !reflect.DeepEqual(entryProps(part, names), entryProps(whole, names)) {
			t.Fatalf("%q: %v; want %v", raw, entryProps(part, names), entryProps(whole, names))
		}
	})
}
