package storage

import (
	"errors"
	"sort"
	"strings"
	"testing"

	"github.com/switchyard-csi/switchyard/simulators/truenas/middleware"
)

func TestDatasetDelete(t *testing.T) {
	for _, v := range versions {
		t.Run(v, func(t *testing.T) {
			e := newEnv(t, v)
			e.mkfs("tank/a", nil)
			e.mkfs("tank/a/b", nil)
			e.must("pool.dataset.create", map[string]any{"name": "tank/a/vol", "type": "VOLUME", "volsize": 1 << 20})

			_, err := e.call("pool.dataset.delete", "tank/a")
			wantCallError(t, err, middleware.ENOTEMPTY, "Failed to delete dataset: cannot destroy 'tank/a': filesystem has children")
			if len(e.deleted) != 0 {
				t.Fatalf("hooks ran for a refused delete: %v", e.deleted)
			}

			// a clone of a child's snapshot blocks the delete; nothing is detached
			e.must(e.snapNS()+".create", map[string]any{"dataset": "tank/a/b", "name": "s1"})
			e.must(e.snapNS()+".clone", map[string]any{"snapshot": "tank/a/b@s1", "dataset_dst": "tank/clone"})
			_, err = e.call("pool.dataset.delete", "tank/a", map[string]any{"recursive": true})
			wantCallError(t, err, middleware.EFAULT, "tank/clone")
			if len(e.deleted) != 0 || !e.m.Exists("tank/a/b") {
				t.Fatalf("refused delete detached %v or destroyed data", e.deleted)
			}
			e.must("pool.dataset.delete", "tank/clone")
			if res := e.must("pool.dataset.delete", "tank/a", map[string]any{"recursive": true, "force": true}); res != true {
				t.Errorf("delete returned %v", res)
			}
			sort.Strings(e.deleted)
			if got := strings.Join(e.deleted, ","); got != "tank/a,tank/a/b,tank/a/vol,tank/clone" {
				t.Errorf("delete hooks saw %s", got)
			}
			for _, n := range []string{"tank/a", "tank/a/b", "tank/a/vol"} {
				if e.m.Exists(n) {
					t.Errorf("%s survived", n)
				}
			}
			_, err = e.call("pool.dataset.delete", "tank/a")
			wantNotFound(t, err, "PoolDataset tank/a does not exist")
			_, err = e.call("pool.dataset.delete", "tank/x", map[string]any{"bogus": true})
			var ve middleware.ValidationErrors
			if !errors.As(err, &ve) || ve[0].Attribute != "options.bogus" {
				t.Errorf("unknown delete option: %v", err)
			}
		})
	}
}

func TestDeleteHookErrorStopsDelete(t *testing.T) {
	e := newEnv(t, "25.10")
	e.mkfs("tank/a", nil)
	e.r.OnDatasetDelete(func(_ *middleware.Call, ds string) error {
		return middleware.Errorf(middleware.EBUSY, "%s is in use", ds)
	})
	_, err := e.call("pool.dataset.delete", "tank/a")
	wantCallError(t, err, middleware.EBUSY, "tank/a is in use")
	if !e.m.Exists("tank/a") {
		t.Error("dataset destroyed although a hook refused")
	}
}

func TestPromote(t *testing.T) {
	e := newEnv(t, "24.10")
	e.mkfs("tank/src", nil)
	e.must("zfs.snapshot.create", map[string]any{"dataset": "tank/src", "name": "s"})
	e.must("zfs.snapshot.clone", map[string]any{"snapshot": "tank/src@s", "dataset_dst": "tank/dst"})
	if got := at(t, e.must("pool.dataset.get_instance", "tank/dst"), "origin.value"); got != "tank/src@s" {
		t.Fatalf("clone origin %v", got)
	}
	if res := e.must("pool.dataset.promote", "tank/dst"); res != nil {
		t.Errorf("promote returned %v", res)
	}
	if got := at(t, e.must("pool.dataset.get_instance", "tank/src"), "origin.value"); got != "tank/dst@s" {
		t.Errorf("after promote, source origin %v", got)
	}
	_, err := e.call("pool.dataset.promote", "tank/src@s")
	var ce *middleware.CallError
	if !errors.As(err, &ce) {
		t.Errorf("promote of a snapshot: %v", err)
	}
}

func TestDestroySnapshots(t *testing.T) {
	for _, v := range []string{"24.10", "25.04", "25.10"} {
		e := newEnv(t, v)
		e.mkfs("tank/a", nil)
		e.mkfs("tank/a/b", nil)
		for _, s := range []string{"s1", "s2", "s3"} {
			e.must(e.snapNS()+".create", map[string]any{"dataset": "tank/a", "name": s, "recursive": true})
		}
		spec := map[string]any{"recursive": true, "snapshots": []any{"s1", map[string]any{"start": "s2", "end": "s2"}}}
		var res any
		if v == "24.10" {
			spec["all"] = false // 24.10's default is true
			res = e.must("pool.dataset.destroy_snapshots", "tank/a", spec)
		} else {
			res = e.must("pool.dataset.destroy_snapshots", "tank/a", spec)
			_, err := e.call("pool.dataset.destroy_snapshots", "tank/a")
			wantValidation(t, err, "snapshots", "Field required")
		}
		got := []string{}
		for _, x := range res.([]any) {
			got = append(got, x.(string))
		}
		sort.Strings(got)
		if strings.Join(got, ",") != "tank/a/b@s1,tank/a/b@s2,tank/a@s1,tank/a@s2" {
			t.Errorf("%s: destroyed %v", v, got)
		}
		if !e.m.Exists("tank/a@s3") || e.m.Exists("tank/a@s1") {
			t.Errorf("%s: wrong snapshots left", v)
		}
		all := map[string]any{"all": true}
		e.must("pool.dataset.destroy_snapshots", "tank/a", all)
		if e.m.Exists("tank/a@s3") || !e.m.Exists("tank/a/b@s3") {
			t.Errorf("%s: all (not recursive) destroyed the wrong set", v)
		}
	}
}
