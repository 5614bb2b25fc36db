package storage

import (
	"testing"

	"github.com/switchyard-csi/switchyard/simulators/truenas/middleware"
	"github.com/switchyard-csi/switchyard/simulators/zfsmodel"
)

func TestMethodsPerVersion(t *testing.T) {
	cases := []struct {
		method string
		in     []string // versions that have it
		job    bool
	}{
		{"pool.query", versions, false},
		{"pool.get_instance", versions, false},
		{"pool.dataset.query", versions, false},
		{"pool.dataset.get_instance", versions, false},
		{"pool.dataset.create", versions, false},
		{"pool.dataset.update", versions, false},
		{"pool.dataset.delete", versions, false},
		{"pool.dataset.promote", versions, false},
		{"pool.dataset.destroy_snapshots", []string{"24.10", "25.04", "25.10"}, true},
		{"zfs.snapshot.create", []string{"24.10", "25.04"}, false},
		{"zfs.snapshot.query", []string{"24.10", "25.04"}, false},
		{"zfs.snapshot.clone", []string{"24.10", "25.04"}, false},
		{"pool.snapshot.create", []string{"25.10", "26.04"}, false},
		{"pool.snapshot.query", []string{"25.10", "26.04"}, false},
		{"pool.snapshot.clone", []string{"25.10", "26.04"}, false},
		{"pool.snapshot.rollback", []string{"25.10", "26.04"}, false},
		{"filesystem.setperm", versions, true},
		{"filesystem.chown", versions, true},
		{"filesystem.stat", versions, false},
		{"replication.run_onetime", versions, true},
		{"zfs.resource.query", []string{"25.10", "26.04"}, false},
		{"filesystem.getacl", versions, false},
		{"filesystem.setacl", versions, true},
	}
	for _, v := range versions {
		e := newEnv(t, v)
		for _, c := range cases {
			m, ok := e.r.Lookup(c.method)
			if want := contains(c.in, v); ok != want {
				t.Errorf("%s on %s: registered=%v, want %v", c.method, v, ok, want)
				continue
			}
			if ok && m.Job != c.job {
				t.Errorf("%s on %s: Job=%v, want %v", c.method, v, m.Job, c.job)
			}
		}
		for _, name := range e.r.Names() {
			m, _ := e.r.Lookup(name)
			if len(m.Params) == 0 {
				t.Errorf("%s on %s has no parameter names", name, v)
			}
		}
	}
}

func TestRegisterRejects(t *testing.T) {
	m, err := zfsmodel.Open(zfsmodel.Options{StateDir: t.TempDir(), Pools: []zfsmodel.PoolSpec{{Name: "tank", Size: 1 << 30}}})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if err := Register(middleware.NewRegistry(), m, middleware.Version{Year: 23, Month: 10}, Options{}); err == nil {
		t.Error("23.10 accepted")
	}
	if err := Register(nil, m, middleware.Supported[0], Options{}); err == nil {
		t.Error("nil registry accepted")
	}
	if err := Register(middleware.NewRegistry(), nil, middleware.Supported[0], Options{}); err == nil {
		t.Error("nil model accepted")
	}
}

func TestPoolQuery(t *testing.T) {
	e := newEnv(t, "25.04")
	p := obj(t, e.must("pool.get_instance", 1))
	for k, want := range map[string]any{
		"id": 1.0, "name": "tank", "status": "ONLINE", "healthy": true, "path": "/mnt/tank", "size": float64(10 << 30),
	} {
		if p[k] != want {
			t.Errorf("pool %s = %v, want %v", k, p[k], want)
		}
	}
	if _, ok := p["guid"].(string); !ok {
		t.Errorf("guid %v is not a string", p["guid"])
	}
	if free, alloc := p["free"].(float64), p["allocated"].(float64); free+alloc != p["size"].(float64) {
		t.Errorf("free %v + allocated %v != size %v", free, alloc, p["size"])
	}
	rows := e.must("pool.query", []any{[]any{"name", "=", "tank"}}, map[string]any{"select": []any{"id", "name"}})
	if l, _ := rows.([]any); len(l) != 1 || len(obj(t, l[0])) != 2 {
		t.Errorf("filtered/selected query: %v", rows)
	}
	_, err := e.call("pool.get_instance", 7)
	wantNotFound(t, err, "Pool 7 does not exist")
}
