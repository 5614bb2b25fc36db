package storage

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"

	"github.com/switchyard-csi/switchyard/simulators/truenas/middleware"
)

// datasetEntry (what create and update answer with) is
// pool.dataset.get_instance of the name, byte for byte, for filesystems,
// volumes, a parent with children and snapshots, user properties, and a
// name that does not exist (the same error).
func TestDatasetEntryIsGetInstance(t *testing.T) {
	for _, version := range versions {
		e := newEnv(t, version)
		s := &service{r: e.r, m: e.m, v: e.v, log: slog.New(slog.NewTextHandler(io.Discard, nil)), acls: &sync.Map{}}
		e.mkfs("tank/a", map[string]any{"comments": "<a & b>", "user_properties": []any{map[string]any{"key": "x:y", "value": "1"}}})
		e.mkfs("tank/a/b", nil)
		e.must("pool.dataset.create", map[string]any{"name": "tank/vol", "type": "VOLUME", "volsize": 1 << 24, "sparse": true})
		if err := e.m.Snapshot([]string{"tank/a@s1"}, nil, false); err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"tank", "tank/a", "tank/a/b", "tank/vol", "tank/missing", "tank/a@s1"} {
			got, gerr := s.datasetEntry(name)
			id, _ := json.Marshal(name)
			want, werr := s.datasetGetInstance(nil, []json.RawMessage{id})
			gb, _ := json.Marshal(got)
			wb, _ := json.Marshal(want)
			if string(gb) != string(wb) || fmt.Sprint(gerr) != fmt.Sprint(werr) {
				t.Fatalf("%s %s:\nentry        %s %v\nget_instance %s %v", version, name, gb, gerr, wb, werr)
			}
			var nf *middleware.InstanceNotFound
			if werr != nil && !errors.As(gerr, &nf) {
				t.Fatalf("%s %s: error %v (%T), want InstanceNotFound", version, name, gerr, gerr)
			}
		}
	}
}
