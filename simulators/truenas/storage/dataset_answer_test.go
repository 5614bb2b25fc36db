package storage

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/switchyard-csi/switchyard/simulators/truenas/middleware"
	"github.com/switchyard-csi/switchyard/simulators/zfsmodel"
)

// datasetEntryRows is datasetEntry as it was before datasetAnswer: the
// row datasetRows builds as maps for get_instance, the one whose id is
// name.
func (s *service) datasetEntryRows(name string) (middleware.Row, error) {
	rows, err := s.datasetRows([]any{[]any{"id", "=", name}}, parseDatasetExtra(nil))
	if err != nil {
		return nil, err
	}
	for _, r := range rows {
		if id, _ := r["id"].(string); id == name {
			return r, nil
		}
	}
	return nil, middleware.NotFound("PoolDataset", name)
}

// A datasetAnswer encodes (middleware.Encode, and json.Marshal) to the
// bytes of the map entry datasetRows builds, with the same error for a
// name that is no dataset's, over datasets that set every kind of entry
// property: filesystems and volumes, local, inherited and default sources,
// quotas and reservations (null at 0), none and legacy mountpoints, a
// clone's origin, internal and escaped user properties, read-only,
// children (an internal one left out), in every release.
func TestDatasetAnswerIsTheEntry(t *testing.T) {
	for _, version := range versions {
		e := newEnv(t, version)
		s := &service{r: e.r, m: e.m, v: e.v, log: slog.New(slog.NewTextHandler(io.Discard, nil)), acls: &sync.Map{}}
		e.mkfs("tank/a", map[string]any{"comments": "<a & b> \u2028 é", "compression": "GZIP", "atime": "OFF",
			"user_properties": []any{map[string]any{"key": "x:y", "value": "1"}, map[string]any{"key": "b.c:d-e_f", "value": "<&> \"q\" \u2029"}}})
		e.mkfs("tank/a/b", map[string]any{"refquota": 1 << 30, "quota": 3 << 29, "refreservation": 0,
			"user_properties": []any{map[string]any{"key": "org.freenas:quota_warning", "value": "80"}}})
		e.mkfs("tank/a/b/c", map[string]any{"readonly": "ON", "sync": "ALWAYS", "recordsize": "1M"})
		e.must("pool.dataset.create", map[string]any{"name": "tank/vol", "type": "VOLUME", "volsize": 1 << 24, "sparse": true})
		e.must("pool.dataset.create", map[string]any{"name": "tank/a/thick", "type": "VOLUME", "volsize": 3 << 20, "volblocksize": "16K"})
		for name, props := range map[string]map[string]string{
			"tank/none":       {"mountpoint": "none"},
			"tank/legacy":     {"mountpoint": "legacy"},
			"tank/elsewhere":  {"mountpoint": "/srv/x"},
			"tank/.system":    nil,
			"tank/a/.system":  nil,
			"tank/a/b/inside": {"org.truenas:managedby": "me", "org.freenas:description": "d"},
		} {
			if err := e.m.Create(name, zfsmodel.Filesystem, props, zfsmodel.CreateOptions{}); err != nil {
				t.Fatal(name, err)
			}
		}
		if err := e.m.Snapshot([]string{"tank/a@s1"}, nil, false); err != nil {
			t.Fatal(err)
		}
		if err := e.m.Clone("tank/a@s1", "tank/clone", nil, false); err != nil {
			t.Fatal(err)
		}
		if err := e.m.SetProperties("tank/a", map[string]string{"checksum": "sha256", "org.test:inherited": "yes"}); err != nil {
			t.Fatal(err)
		}
		names, err := e.m.List("", true, zfsmodel.Filesystem|zfsmodel.Volume)
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, "tank/missing", "tank/a@s1", "tank/.system", "nopool", "")
		for _, name := range names {
			got, gerr := s.datasetEntry(name)
			want, werr := s.datasetEntryRows(name)
			if fmt.Sprint(gerr) != fmt.Sprint(werr) {
				t.Fatalf("%s %s: error %v, want %v", version, name, gerr, werr)
			}
			if werr != nil {
				continue
			}
			gb, err := middleware.Encode(got)
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := got.(middleware.Appender); !ok {
				t.Fatalf("%s %s: the answer is a %T, not written directly", version, name, got)
			}
			wb, _ := middleware.Encode(want)
			mb, _ := json.Marshal(got)
			if string(gb) != string(wb) || string(mb) != string(wb) {
				t.Fatalf("%s %s:\nanswer %s\nmarshal %s\nrows   %s", version, name, gb, mb, wb)
			}
		}
		a, err := s.datasetEntry("tank/a")
		if err != nil {
			t.Fatal(err)
		}
		if b, _ := middleware.Encode(a); !strings.Contains(string(b), `"tank/a/b/c"`) ||
			strings.Contains(string(b), ".system") || !strings.Contains(string(b), `\u003ca \u0026 b\u003e`) {
			t.Fatalf("%s: tank/a's answer lacks its grandchild or escaping, or shows an internal child: %s", version, b)
		}
	}
}
