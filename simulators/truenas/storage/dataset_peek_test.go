package storage

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// A query whose entries need no measured figure reads the datasets with
// Peek; its rows are, byte for byte, what the measured read gives. Before
// each query a file grows behind the model's back, so a space figure read
// unmeasured would show the old size and fail the comparison.
func TestUnmeasuredRowsAreMeasuredRows(t *testing.T) {
	props := [][]any{nil, {}, {"mountpoint"}, {"origin", "clones", "mountpoint"}, {"org.test:x", "mountpoint"},
		{"used"}, {"available", "mountpoint"}, {"usedbydataset"}, {"referenced"}, {"written", "creation"},
		{"quota", "refquota", "volsize", "readonly", "compression", "mountpoint"}}
	filters := [][]any{
		{[]any{"id", "=", "tank/a"}},
		{[]any{"OR", []any{[]any{"id", "=", "tank/a"}, []any{"id", "^", "tank/a/"}}}},
		{[]any{"OR", []any{[]any{"id", "=", "tank/clone"}, []any{"id", "^", "tank/clone/"}}}},
		{[]any{"id", "=", "tank/vol"}},
		{},
	}
	for _, version := range versions {
		e := newEnv(t, version)
		s := &service{r: e.r, m: e.m, v: e.v, log: slog.New(slog.NewTextHandler(io.Discard, nil)), acls: &sync.Map{}}
		e.mkfs("tank/a", map[string]any{"comments": "c", "user_properties": []any{map[string]any{"key": "org.test:x", "value": "1"}}})
		e.mkfs("tank/a/b", map[string]any{"quota": 1 << 30})
		e.must("pool.dataset.create", map[string]any{"name": "tank/vol", "type": "VOLUME", "volsize": 1 << 24, "sparse": true})
		if err := e.m.Snapshot([]string{"tank/a@s1"}, nil, false); err != nil {
			t.Fatal(err)
		}
		e.must(e.snapNS()+".clone", map[string]any{"snapshot": "tank/a@s1", "dataset_dst": "tank/clone"})
		dir, ok := e.m.HostPath("/tank/a")
		if !ok {
			t.Fatal("no host path for tank/a")
		}
		grow := 0
		unmeasured := 0
		for _, p := range props {
			for _, children := range []bool{false, true} {
				for _, f := range filters {
					extra := map[string]any{"flat": true, "retrieve_children": children, "user_properties": true}
					if p != nil {
						extra["properties"] = p
					}
					x := parseDatasetExtra(extra)
					if !x.measure {
						unmeasured++
					}
					grow++
					if err := os.WriteFile(filepath.Join(dir, "f"), make([]byte, grow*64<<10), 0o644); err != nil {
						t.Fatal(err)
					}
					got, gerr := s.datasetRows(f, x)
					x.measure = true
					want, werr := s.datasetRows(f, x)
					gb, _ := json.Marshal(got)
					wb, _ := json.Marshal(want)
					if string(gb) != string(wb) || fmt.Sprint(gerr) != fmt.Sprint(werr) {
						t.Fatalf("%s %v %v:\nunmeasured %s %v\nmeasured   %s %v", version, extra, f, gb, gerr, wb, werr)
					}
				}
			}
		}
		if unmeasured == 0 {
			t.Fatal("no query took the unmeasured path")
		}
	}
}

// Which extras need the measured read: space figures, children,
// snapshots, or every property.
func TestNeedsMeasure(t *testing.T) {
	for _, c := range []struct {
		extra map[string]any
		want  bool
	}{
		{nil, true},
		{map[string]any{"retrieve_children": false}, true},
		{map[string]any{"retrieve_children": false, "properties": []any{"mountpoint", "origin"}}, false},
		{map[string]any{"retrieve_children": false, "properties": []any{}}, false},
		{map[string]any{"properties": []any{"mountpoint"}}, true},
		{map[string]any{"retrieve_children": false, "properties": []any{"used"}}, true},
		{map[string]any{"retrieve_children": false, "properties": []any{"mountpoint", "available"}}, true},
		{map[string]any{"retrieve_children": false, "properties": []any{"mountpoint"}, "snapshots": true}, true},
		{map[string]any{"retrieve_children": false, "properties": []any{"mountpoint"}, "snapshots_count": true}, true},
	} {
		if got := parseDatasetExtra(c.extra).measure; got != c.want {
			t.Errorf("extra %v: measure %v, want %v", c.extra, got, c.want)
		}
	}
}
