package storage

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/switchyard-csi/switchyard/simulators/truenas/middleware"
)

func TestSnapshotLifecycle(t *testing.T) {
	for _, v := range versions {
		t.Run(v, func(t *testing.T) {
			e := newEnv(t, v)
			ns := e.snapNS()
			e.mkfs("tank/a", nil)
			snap := obj(t, e.must(ns+".create", map[string]any{"dataset": "tank/a", "name": "s1",
				"properties": map[string]any{"democratic-csi:csi_snapshot_name": "snap-1"}}))
			for k, want := range map[string]any{
				"id": "tank/a@s1", "name": "tank/a@s1", "dataset": "tank/a", "snapshot_name": "s1", "pool": "tank",
				"type": "SNAPSHOT", "properties.democratic-csi:csi_snapshot_name.value": "snap-1",
				"properties.democratic-csi:csi_snapshot_name.source": "LOCAL",
			} {
				if got := at(t, snap, k); got != want {
					t.Errorf("%s = %v, want %v", k, got, want)
				}
			}
			if txg, ok := snap["createtxg"].(string); !ok || txg == "" || txg == "0" {
				t.Errorf("createtxg %v is not a string", snap["createtxg"])
			}
			if _, ok := snap["holds"]; ok {
				t.Error("create result has holds")
			}

			got := e.must(ns+".query", []any{[]any{"dataset", "=", "tank/a"}}, map[string]any{"extra": map[string]any{"holds": true}})
			if l := got.([]any); len(l) != 1 || obj(t, l[0])["holds"] == nil {
				t.Errorf("query by dataset with holds: %v", got)
			}
			_, err := e.call(ns+".get_instance", "tank/a@nope")
			wantNotFound(t, err, "Snapshot tank/a@nope does not exist")

			// update user properties: the shape changed in 25.10
			var upd map[string]any
			if e.v.AtLeast(25, 10, 0) {
				upd = map[string]any{"user_properties_update": []any{map[string]any{"key": "ns:k", "value": "v"}},
					"user_properties_remove": []any{"democratic-csi:csi_snapshot_name"}}
			} else {
				upd = map[string]any{"user_properties_update": []any{map[string]any{"key": "ns:k", "value": "v"},
					map[string]any{"key": "democratic-csi:csi_snapshot_name", "remove": true}}}
			}
			res := obj(t, e.must(ns+".update", "tank/a@s1", upd))
			props := obj(t, res["properties"])
			if _, ok := props["democratic-csi:csi_snapshot_name"]; ok || at(t, props, "ns:k.value") != "v" {
				t.Errorf("after update: %v %v", props["democratic-csi:csi_snapshot_name"], props["ns:k"])
			}

			// clone, then delete needs defer while the clone exists
			if res := e.must(ns+".clone", map[string]any{"snapshot": "tank/a@s1", "dataset_dst": "tank/c",
				"dataset_properties": map[string]any{"ns:from": "tank/a@s1"}}); res != true {
				t.Errorf("clone returned %v", res)
			}
			c := obj(t, e.must("pool.dataset.get_instance", "tank/c"))
			if at(t, c, "origin.value") != "tank/a@s1" || at(t, c, "user_properties.ns:from.value") != "tank/a@s1" || c["mountpoint"] != "/mnt/tank/c" {
				t.Errorf("clone entry: origin %v props %v mountpoint %v", c["origin"], c["user_properties"], c["mountpoint"])
			}
			_, err = e.call(ns+".delete", "tank/a@s1")
			wantValidation(t, err, "options.defer", "Please set this attribute as 'tank/a@s1' snapshot has dependent clones: tank/c")
			if res := e.must(ns+".delete", "tank/a@s1", map[string]any{"defer": true}); res != true {
				t.Errorf("deferred delete returned %v", res)
			}
			e.must("pool.dataset.delete", "tank/c")
			if e.m.Exists("tank/a@s1") {
				t.Error("deferred snapshot survived its last clone")
			}
			_, err = e.call(ns+".delete", "tank/a@s1")
			wantNotFound(t, err, "tank/a@s1")
		})
	}
}

func TestSnapshotErrors(t *testing.T) {
	legacy := func(v string) bool { return v == "24.10" || v == "25.04" }
	for _, v := range versions {
		e := newEnv(t, v)
		ns := e.snapNS()
		e.mkfs("tank/a", nil)
		e.must(ns+".create", map[string]any{"dataset": "tank/a", "name": "s1"})
		_, err := e.call(ns+".create", map[string]any{"dataset": "tank/a", "name": "s1"})
		if v == "26.04" {
			wantValidation(t, err, "pool.snapshot.create", "s1 already exists.")
		} else {
			wantCallError(t, err, middleware.EEXIST, "Failed to snapshot tank/a@s1: dataset already exists")
		}
		_, err = e.call(ns+".create", map[string]any{"dataset": "tank/none", "name": "s1"})
		wantCallError(t, err, middleware.ENOENT, "not found")
		_, err = e.call(ns+".create", map[string]any{"dataset": "tank/a", "name": "bad/name"})
		wantValidation(t, err, "snapshot_create.name", "Invalid snapshot name")
		_, err = e.call(ns+".clone", map[string]any{"snapshot": "tank/a@s1", "dataset_dst": "tank/a"})
		wantCallError(t, err, middleware.EEXIST, "Failed to clone snapshot: dataset already exists")
		_, err = e.call(ns+".clone", map[string]any{"snapshot": "tank/a@nope", "dataset_dst": "tank/x"})
		wantCallError(t, err, middleware.ENOENT, "not found")
		if legacy(v) {
			_, err = e.call(ns+".create", map[string]any{"dataset": "tank/a", "name": "x", "naming_schema": "auto-%Y"})
			wantValidation(t, err, "snapshot_create.naming_schema", "You can't specify name and naming schema at the same time")
			_, err = e.call(ns+".create", map[string]any{"dataset": "tank/a"})
			wantValidation(t, err, "snapshot_create.naming_schema", "You must specify either name or naming schema")
			_, err = e.call(ns+".create", map[string]any{"dataset": "tank/a", "name": "x", "bogus": 1})
			wantValidation(t, err, "snapshot_create.bogus", "Field was not expected")
		} else {
			_, err = e.call(ns+".create", map[string]any{"dataset": "tank/a", "name": "x", "suspend_vms": true})
			if v == "25.10" { // gone from 25.10's model, back in 26's
				wantValidation(t, err, "pool_snapshot_create.suspend_vms", "Extra inputs are not permitted")
			} else if err != nil {
				t.Errorf("%s: suspend_vms: %v", v, err)
			}
			_, err = e.call(ns+".delete", "tank/a")
			wantValidation(t, err, "pool.snapshot.delete", "Invalid snapshot name: 'tank/a'")
			_, err = e.call(ns+".update", "tank/a@s1", map[string]any{"user_properties_update": []any{map[string]any{"key": "a:b", "remove": true}}})
			wantValidation(t, err, "pool_snapshot_update.user_properties_update.0.remove", "Extra inputs are not permitted")
		}
		named := obj(t, e.must(ns+".create", map[string]any{"dataset": "tank/a", "naming_schema": "auto-%Y-%m-%d_%H-%M"}))
		if n := named["snapshot_name"].(string); len(n) != len("auto-2006-01-02_15-04") {
			t.Errorf("%s: naming_schema gave %q", v, n)
		}
	}
}

func TestSnapshotRollback(t *testing.T) {
	for _, v := range []string{"25.04", "26.04"} {
		e := newEnv(t, v)
		ns := e.snapNS()
		e.mkfs("tank/a", nil)
		dir, ok := e.m.HostPath("/tank/a")
		if !ok {
			t.Fatal("no host path")
		}
		file := filepath.Join(dir, "f")
		if err := os.WriteFile(file, []byte("one"), 0o644); err != nil {
			t.Fatal(err)
		}
		e.must(ns+".create", map[string]any{"dataset": "tank/a", "name": "s1"})
		if err := os.WriteFile(file, []byte("two"), 0o644); err != nil {
			t.Fatal(err)
		}
		e.must(ns+".create", map[string]any{"dataset": "tank/a", "name": "s2"})
		_, err := e.call(ns+".rollback", "tank/a@s1")
		wantCallError(t, err, middleware.EEXIST, "more recent snapshots or bookmarks exist")
		e.must(ns+".rollback", "tank/a@s1", map[string]any{"recursive": true})
		if b, _ := os.ReadFile(file); string(b) != "one" {
			t.Errorf("%s: after rollback the file holds %q", v, b)
		}
		if e.m.Exists("tank/a@s2") {
			t.Errorf("%s: recursive rollback kept the later snapshot", v)
		}
	}
}
