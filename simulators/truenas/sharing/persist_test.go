package sharing

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"testing"

	"github.com/switchyard-csi/switchyard/simulators/truenas/middleware"
)

// clone's direct copy must give exactly what the JSON round trip gave
// (the only way before), and a copy that shares nothing with the row.
func TestCloneIsNormalize(t *testing.T) {
	rows := []middleware.Row{
		normalize(middleware.Row{"id": 3, "path": "/mnt/tank/a", "hosts": []string{"h1"}, "ro": false,
			"maproot_user": nil, "groups": []any{map[string]any{"portal": 1, "auth": nil}}, "n": 1.5}),
		{"id": 1, "listen_port": 3260, "basename": "iqn.2005-10.org.freenas.ctl"}, // built in Go: ints
		{"list": []string{"a"}, "nested": map[string]any{"x": []int{1}}},          // typed lists
		{},
	}
	for _, r := range rows {
		got, want := clone(r), normalize(r)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("clone(%v) = %#v, want %#v", r, got, want)
		}
	}
	r := rows[0]
	c := clone(r)
	c["groups"].([]any)[0].(map[string]any)["portal"] = 9.0
	c["hosts"].([]any)[0] = "changed"
	if r["groups"].([]any)[0].(map[string]any)["portal"] != 1.0 || r["hosts"].([]any)[0] != "h1" {
		t.Errorf("changing the clone changed the row: %v", r)
	}
}

// A table whose file cannot be written fails the change's call with the
// EFAULT the middleware gives, after the lock (the change stays in
// memory, as before), and the next change that can be written writes it.
func TestWriteFailureAnswersEFAULT(t *testing.T) {
	e := newEnv(t, "25.10")
	file := filepath.Join(e.state, nsNFS+".json")
	// a non-empty directory in the file's place: the rename onto it fails
	if err := os.MkdirAll(filepath.Join(file, "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	e.parallel = true // the write fails: the change stays unwritten until the next
	_, err := e.call("sharing.nfs.create", map[string]any{"path": "/mnt/tank/a"})
	wantCallError(t, err, middleware.EFAULT, "failed to save sharing.nfs state")
	if n := len(e.list("sharing.nfs.query")); n != 1 {
		t.Fatalf("%d shares in memory after the failed write, want 1", n)
	}
	if err := os.RemoveAll(file); err != nil {
		t.Fatal(err)
	}
	e.parallel = false
	e.must("sharing.nfs.create", map[string]any{"path": "/mnt/tank/b"})
	e.register()
	if n := len(e.list("sharing.nfs.query")); n != 2 {
		t.Errorf("%d shares after a restart, want both", n)
	}
}

// Changes from many callers, including the ones that rewrite other rows
// (a portal delete renumbers tags and drops the portal from targets'
// groups; an initiator delete clears it in groups), are written while
// others change the tables: run with -race, this is the check that no
// stored row is changed in place under a writer. After the calls the
// files hold exactly what memory holds.
func TestConcurrentChangesAreWritten(t *testing.T) {
	e := newEnv(t, "25.10")
	e.configureISCSI()
	p2 := e.must("iscsi.portal.create", map[string]any{"listen": []any{map[string]any{"ip": "127.0.0.1"}}})
	ig2 := e.must("iscsi.initiator.create", map[string]any{"initiators": []any{"iqn.1993-08.org.debian:01:x"}})
	for i := range 8 {
		g := []any{map[string]any{"portal": 1, "initiator": 1}, map[string]any{"portal": id(p2), "initiator": id(ig2)}}
		e.must("iscsi.target.create", map[string]any{"name": "t" + itoa(i), "groups": g})
	}
	e.parallel = true
	var wg sync.WaitGroup
	run := func(f func()) {
		wg.Add(1)
		go func() { defer wg.Done(); f() }()
	}
	for i := range 8 {
		run(func() {
			g := []any{map[string]any{"portal": 1, "initiator": 1}}
			if _, err := e.call("iscsi.target.create", map[string]any{"name": "n" + itoa(i), "groups": g}); err != nil {
				t.Error(err)
			}
		})
		run(func() {
			for _, p := range []string{"/mnt/tank/a", "/mnt/tank/b"} {
				s, err := e.call("sharing.nfs.create", map[string]any{"path": p, "comment": itoa(i)})
				if err != nil {
					continue // another caller exported the path to everybody first
				}
				if _, err := e.call("sharing.nfs.delete", id(s.(map[string]any))); err != nil {
					t.Error(err)
				}
			}
			if _, err := e.call("sharing.nfs.query", []any{}, map[string]any{}); err != nil {
				t.Error(err)
			}
		})
	}
	run(func() {
		if _, err := e.call("iscsi.portal.delete", id(p2)); err != nil {
			t.Error(err)
		}
	})
	run(func() {
		if _, err := e.call("iscsi.initiator.delete", id(ig2)); err != nil {
			t.Error(err)
		}
	})
	wg.Wait()
	e.parallel = false
	e.requireWritten("the concurrent calls")
	before := e.s.State()
	if len(before.ISCSITargets) != 16 {
		t.Fatalf("%d targets, want 16", len(before.ISCSITargets))
	}
	for _, tg := range before.ISCSITargets {
		if len(tg.Groups) != 1 || tg.Groups[0].Portal != 1 || tg.Groups[0].Initiator == nil || *tg.Groups[0].Initiator != 1 {
			t.Errorf("target %s: groups %+v, want only portal 1 with initiator group 1", tg.Name, tg.Groups)
		}
	}
	if len(before.ISCSIPortals) != 1 || before.ISCSIPortals[0].Tag != 1 {
		t.Errorf("portals %+v, want portal 1 with tag 1", before.ISCSIPortals)
	}
	e.register()
	if after := e.s.State(); !reflect.DeepEqual(after, before) {
		t.Errorf("state after a restart differs from memory before it:\n%+v\n%+v", after, before)
	}
}

// The incremental encoder must write what MarshalIndent of the whole
// table writes, byte for byte, whatever changed since its last file.
func TestRowEncoderIsMarshalIndent(t *testing.T) {
	var e rowEncoder
	row := func(id int, path string) middleware.Row {
		return normalize(middleware.Row{"id": id, "path": path, "hosts": []string{"a<b>&"}, "n": 1.5, "m": map[string]any{"z": nil, "a": true}})
	}
	rows := []middleware.Row{}
	steps := []func(){
		func() {},
		func() { rows = append(rows, row(1, "/mnt/tank/a")) },
		func() { rows = append(rows, row(2, "/mnt/tank/b"), row(3, "/mnt/tank/c")) },
		func() { rows[1] = row(2, "/mnt/tank/changed") }, // replaced: a new map with the same id
		func() { rows = append(rows[:0:0], rows[0], rows[2]) },
		func() { rows = append(rows, row(2, "/mnt/tank/again")) },
		func() { rows = nil },
	}
	for i, step := range steps {
		step()
		got, err := e.encode(rows)
		if err != nil {
			t.Fatal(err)
		}
		all := rows
		if all == nil {
			all = []middleware.Row{}
		}
		want, _ := json.MarshalIndent(all, "", " ")
		if !bytes.Equal(got, want) {
			t.Fatalf("step %d: encoded\n%s\nwant\n%s", i, got, want)
		}
	}
}
