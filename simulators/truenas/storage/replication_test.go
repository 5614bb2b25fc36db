package storage

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/switchyard-csi/switchyard/simulators/truenas/middleware"
)

// onetime is the payload democratic-csi sends for a detached copy.
func onetime(src, dst, regex string) map[string]any {
	return map[string]any{
		"direction": "PUSH", "transport": "LOCAL", "source_datasets": []any{src}, "target_dataset": dst,
		"name_regex": regex, "recursive": false, "retention_policy": "NONE", "readonly": "IGNORE",
		"properties": false, "only_from_scratch": true,
	}
}

func TestReplicationCopiesFilesystem(t *testing.T) {
	for _, v := range versions {
		t.Run(v, func(t *testing.T) {
			e := newEnv(t, v)
			ns := e.snapNS()
			e.mkfs("tank/vols/pvc-1", map[string]any{"create_ancestors": true})
			e.mkfs("tank/snaps", nil)
			src, _ := e.m.HostPath("/tank/vols/pvc-1")
			if err := os.WriteFile(filepath.Join(src, "data"), []byte("payload"), 0o600); err != nil {
				t.Fatal(err)
			}
			e.must(ns+".create", map[string]any{"dataset": "tank/vols/pvc-1", "name": "snapshot-x"})
			e.must(ns+".create", map[string]any{"dataset": "tank/vols/pvc-1", "name": "other"})
			e.progress = nil
			if res := e.must("replication.run_onetime", onetime("tank/vols/pvc-1", "tank/snaps/snap-1", "^snapshot-x$")); res != nil {
				t.Errorf("run_onetime returned %v", res)
			}
			dst, ok := e.m.HostPath("/tank/snaps/snap-1")
			if !ok {
				t.Fatal("target not mounted")
			}
			if b, err := os.ReadFile(filepath.Join(dst, "data")); err != nil || string(b) != "payload" {
				t.Errorf("copied data %q %v", b, err)
			}
			if !e.m.Exists("tank/snaps/snap-1@snapshot-x") || e.m.Exists("tank/snaps/snap-1@other") {
				t.Error("target snapshots: want only the matching one")
			}
			if got := at(t, e.must("pool.dataset.get_instance", "tank/snaps/snap-1"), "origin.value"); got != "" {
				t.Errorf("a detached copy has origin %v", got)
			}
			if len(e.progress) == 0 || e.progress[len(e.progress)-1] != 100 {
				t.Errorf("job progress %v", e.progress)
			}
			// again: the target exists and only_from_scratch refuses
			_, err := e.call("replication.run_onetime", onetime("tank/vols/pvc-1", "tank/snaps/snap-1", "^snapshot-x$"))
			wantCallError(t, err, middleware.EFAULT, "Target dataset 'tank/snaps/snap-1' already exists")
		})
	}
}

func TestReplicationIncrementalAndVolume(t *testing.T) {
	e := newEnv(t, "25.10")
	e.must("pool.dataset.create", map[string]any{"name": "tank/vol", "type": "VOLUME", "volsize": 4 << 20, "sparse": true})
	zv, ok := e.m.ZvolPath("tank/vol")
	if !ok {
		t.Fatal("no zvol file")
	}
	write := func(s string) {
		f, err := os.OpenFile(zv, os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteAt([]byte(s), 1<<20); err != nil {
			t.Fatal(err)
		}
	}
	write("first")
	e.must("pool.snapshot.create", map[string]any{"dataset": "tank/vol", "name": "auto-2024-01-01_00-00"})
	body := map[string]any{"direction": "PUSH", "transport": "LOCAL", "source_datasets": []any{"tank/vol"},
		"target_dataset": "tank/backup/vol", "also_include_naming_schema": []any{"auto-%Y-%m-%d_%H-%M"},
		"recursive": false, "retention_policy": "SOURCE", "readonly": "SET"}
	e.must("replication.run_onetime", body)
	write("second")
	e.must("pool.snapshot.create", map[string]any{"dataset": "tank/vol", "name": "auto-2024-01-02_00-00"})
	e.must("replication.run_onetime", body) // incremental from 01-01
	e.must("pool.snapshot.delete", "tank/vol@auto-2024-01-01_00-00")
	e.must("replication.run_onetime", body) // up to date; retention prunes 01-01 on the target
	dst, ok := e.m.ZvolPath("tank/backup/vol")
	if !ok {
		t.Fatal("target volume missing")
	}
	b, _ := os.ReadFile(dst)
	if len(b) < 1<<20+6 || !bytes.Equal(b[1<<20:1<<20+6], []byte("second")) {
		t.Errorf("target volume data at 1M: %q", b[1<<20:1<<20+6])
	}
	if !e.m.Exists("tank/backup/vol@auto-2024-01-02_00-00") || e.m.Exists("tank/backup/vol@auto-2024-01-01_00-00") {
		t.Error("incremental + retention SOURCE: wrong target snapshots")
	}
	if got := at(t, e.must("pool.dataset.get_instance", "tank/backup/vol"), "readonly.value"); got != "ON" {
		t.Errorf("readonly SET left readonly=%v", got)
	}
}

func TestReplicationValidation(t *testing.T) {
	for _, v := range []string{"24.10", "26.04"} {
		e := newEnv(t, v)
		e.mkfs("tank/a", nil)
		cases := []struct {
			change    map[string]any
			attr, msg string
		}{
			{map[string]any{"name_regex": nil}, "replication_run_onetime.periodic_snapshot_tasks", `provide "Also Include Naming Schema" or "Name Regex"`},
			{map[string]any{"transport": "SSH"}, "replication_run_onetime.ssh_credentials", "SSH Credentials are required for non-local replication"},
			{map[string]any{"retention_policy": "CUSTOM"}, "replication_run_onetime.retention_policy", "Only `Same as Source` and `None` retention policies can be used with Naming regex"},
			{map[string]any{"name_regex": "("}, "replication_run_onetime.name_regex", "Invalid regex"},
			{map[string]any{"exclude": []any{"tank/a/x"}}, "replication_run_onetime.exclude", "Excluding child datasets is only supported for recursive replication"},
			{map[string]any{"source_datasets": []any{}}, "replication_run_onetime.source_datasets", ""},
			{map[string]any{"direction": "SIDEWAYS"}, "replication_run_onetime.direction", ""},
			{map[string]any{"bogus": true}, "replication_run_onetime.bogus", ""},
		}
		for _, c := range cases {
			body := onetime("tank/a", "tank/b", "^s$")
			for k, val := range c.change {
				if val == nil {
					delete(body, k)
				} else {
					body[k] = val
				}
			}
			_, err := e.call("replication.run_onetime", body)
			wantValidation(t, err, c.attr, c.msg)
		}
		_, err := e.call("replication.run_onetime", onetime("tank/a", "tank/b", "^s$"))
		wantCallError(t, err, middleware.EFAULT, "does not have any snapshots matching")
		if e.m.Exists("tank/b") {
			t.Error("failed replication created the target")
		}
	}
}

func TestReplicationIntoExistingTarget(t *testing.T) {
	e := newEnv(t, "24.10")
	e.mkfs("tank/a", nil)
	e.mkfs("tank/b", nil)
	e.must("zfs.snapshot.create", map[string]any{"dataset": "tank/a", "name": "s"})
	body := onetime("tank/a", "tank/b", "s")
	body["only_from_scratch"] = false
	_, err := e.call("replication.run_onetime", body)
	wantCallError(t, err, middleware.EFAULT, "No incremental base on dataset 'tank/a' and replication from scratch is not allowed")
	body["allow_from_scratch"] = true
	e.must("replication.run_onetime", body)
	if !e.m.Exists("tank/b@s") {
		t.Error("replication from scratch did not replace the target")
	}
	e.must("replication.run_onetime", body) // up to date: nothing to do
}
