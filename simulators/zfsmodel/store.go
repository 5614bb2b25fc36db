package zfsmodel

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Persistence: one small JSON file per dataset (<StateDir>/meta/<guid>.json)
// and per pool (<StateDir>/pools/<name>.json), each written atomically with
// a rename, so a mutation costs O(changed datasets) however many exist.
// Records name their parent by GUID: a rename rewrites one file. A change
// reaches those files through the journal (journal.go): marshalled under
// the model's lock, appended to <StateDir>/journal once the lock is
// released, applied to the files when the journal is compacted.

type record struct {
	GUID     uint64            `json:"guid"`
	Parent   uint64            `json:"parent,omitempty"`
	Pool     string            `json:"pool"`
	Leaf     string            `json:"leaf"`
	Type     string            `json:"type"`
	Creation int64             `json:"creation"`
	TXG      uint64            `json:"createtxg"`
	Objset   uint64            `json:"objsetid"`
	Origin   uint64            `json:"origin,omitempty"`
	Refer    int64             `json:"refer,omitempty"`
	Deferred bool              `json:"defer_destroy,omitempty"`
	Props    map[string]string `json:"props,omitempty"`
	Received map[string]string `json:"received,omitempty"`
}

type poolRecord struct {
	Name     string            `json:"name"`
	Size     int64             `json:"size"`
	GUID     uint64            `json:"guid"`
	Creation int64             `json:"creation"`
	Props    map[string]string `json:"props,omitempty"`
}

func (m *Model) recordPath(guid uint64) string {
	return filepath.Join(m.dir, "meta", fmt.Sprintf("%016x.json", guid))
}

func (m *Model) writeRecord(d *dataset) error {
	r := record{
		GUID: d.guid, Pool: d.pool.name, Leaf: d.leaf, Type: d.typ.String(),
		Creation: d.creation, TXG: d.txg, Objset: d.objset, Refer: d.refer,
		Props: d.local, Received: d.recvd, Deferred: d.deferred,
	}
	if d.parent != nil {
		r.Parent = d.parent.guid
	}
	if d.origin != nil {
		r.Origin = d.origin.guid
	}
	m.enqueue(recordRel(d.guid), appendRecordJSON(nil, &r))
	return nil
}

func recordRel(guid uint64) string { return fmt.Sprintf("meta/%016x.json", guid) }

func (m *Model) removeRecord(d *dataset) { m.enqueue(recordRel(d.guid), nil) }

func (m *Model) writePool(p *pool) error {
	r := poolRecord{Name: p.name, Size: p.size, GUID: p.guid, Creation: p.creation, Props: p.props}
	b, err := json.Marshal(r)
	if err != nil {
		return errIO("cannot save pool '"+p.name+"'", err)
	}
	m.enqueue("pools/"+p.name+".json", b)
	return nil
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// load reads the pools and dataset records and rebuilds the tree.
func (m *Model) load() error {
	pdir := filepath.Join(m.dir, "pools")
	ents, err := os.ReadDir(pdir)
	if err != nil {
		return fmt.Errorf("zfsmodel: %w", err)
	}
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		var r poolRecord
		if err := readJSON(filepath.Join(pdir, e.Name()), &r); err != nil {
			return fmt.Errorf("zfsmodel: %w", err)
		}
		m.pools[r.Name] = &pool{name: r.Name, size: r.Size, guid: r.GUID, creation: r.Creation, props: r.Props}
	}
	mdir := filepath.Join(m.dir, "meta")
	ents, err = os.ReadDir(mdir)
	if err != nil {
		return fmt.Errorf("zfsmodel: %w", err)
	}
	recs := map[uint64]*record{}
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		r := &record{}
		if err := readJSON(filepath.Join(mdir, e.Name()), r); err != nil {
			return fmt.Errorf("zfsmodel: %w", err)
		}
		typ, ok := parseType(r.Type)
		if !ok {
			return fmt.Errorf("zfsmodel: %s: bad type %q", e.Name(), r.Type)
		}
		p := m.pools[r.Pool]
		if p == nil {
			return fmt.Errorf("zfsmodel: %s: unknown pool %q", e.Name(), r.Pool)
		}
		d := &dataset{
			guid: r.GUID, leaf: r.Leaf, typ: typ, pool: p,
			children: map[string]*dataset{}, clones: map[*dataset]bool{},
			creation: r.Creation, txg: r.TXG, objset: r.Objset, refer: r.Refer, deferred: r.Deferred,
			local: r.Props, recvd: r.Received,
		}
		if d.local == nil {
			d.local = map[string]string{}
		}
		if d.recvd == nil {
			d.recvd = map[string]string{}
		}
		recs[d.guid] = r
		m.byGUID[d.guid] = d
		if d.txg > m.txg {
			m.txg = d.txg
		}
		if d.objset > m.objset {
			m.objset = d.objset
		}
	}
	// Link parents, then name the trees from their roots.
	for guid, r := range recs {
		d := m.byGUID[guid]
		if r.Parent == 0 {
			if d.pool.root != nil {
				return fmt.Errorf("zfsmodel: pool %s has two root datasets", d.pool.name)
			}
			d.pool.root = d
			continue
		}
		p := m.byGUID[r.Parent]
		if p == nil {
			return fmt.Errorf("zfsmodel: %s (%s): parent %016x missing", m.recordPath(guid), r.Leaf, r.Parent)
		}
		d.parent = p
		if d.isSnap() {
			p.snaps = append(p.snaps, d)
		} else {
			p.children[d.leaf] = d
		}
	}
	for guid, r := range recs {
		if r.Origin == 0 {
			continue
		}
		d, o := m.byGUID[guid], m.byGUID[r.Origin]
		if o == nil {
			return fmt.Errorf("zfsmodel: %s: origin %016x missing", m.recordPath(guid), r.Origin)
		}
		d.origin = o
		o.clones[d] = true
	}
	for _, p := range m.pools {
		if p.root == nil {
			return fmt.Errorf("zfsmodel: pool %s has no root dataset", p.name)
		}
		var name func(d *dataset)
		name = func(d *dataset) {
			d.full = d.computeName()
			m.byName[d.full] = d
			sort.SliceStable(d.snaps, func(i, j int) bool { return d.snaps[i].txg < d.snaps[j].txg })
			for _, s := range d.snaps {
				name(s)
			}
			for _, c := range d.children {
				name(c)
			}
		}
		name(p.root)
	}
	if len(m.byName) != len(m.byGUID) {
		return fmt.Errorf("zfsmodel: %d dataset records are not reachable from a pool", len(m.byGUID)-len(m.byName))
	}
	return nil
}
