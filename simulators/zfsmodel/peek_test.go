package zfsmodel

import (
	"reflect"
	"testing"
)

// Peek answers what Get answers, less the lists and the measuring.
func TestPeekIsGetUnmeasured(t *testing.T) {
	m, _ := newModel(t, 10<<30)
	must(t, m, "zfs create -o acltype=posix -o org.test:label=x tank/parent")
	must(t, m, "zfs create tank/parent/a")
	must(t, m, "zfs create -V 1M tank/parent/vol")
	must(t, m, "zfs snapshot tank/parent@s1")
	for _, name := range []string{"tank/parent", "tank/parent/vol", "tank/parent@s1"} {
		got, err := m.Get(name)
		if err != nil {
			t.Fatal(err)
		}
		peek, err := m.Peek(name)
		if err != nil {
			t.Fatal(err)
		}
		if peek.Children != nil || peek.Snapshots != nil || peek.Clones != nil {
			t.Errorf("Peek(%s) lists %v %v %v; want none", name, peek.Children, peek.Snapshots, peek.Clones)
		}
		got.Children, got.Snapshots, got.Clones = nil, nil, nil
		if !reflect.DeepEqual(got, peek) {
			t.Errorf("Peek(%s) = %+v\nGet = %+v", name, peek, got)
		}
	}
	if _, err := m.Peek("tank/missing"); err == nil {
		t.Error("Peek of a missing dataset: no error")
	}
}

// SnapshotNames answers Get's Snapshots, and Get's error for a name that
// is not there.
func TestSnapshotNamesIsGets(t *testing.T) {
	m, _ := newModel(t, 10<<30)
	must(t, m, "zfs create tank/a")
	must(t, m, "zfs create -V 1M tank/vol")
	must(t, m, "zfs snapshot tank/a@s1")
	must(t, m, "zfs snapshot tank/a@s0")
	must(t, m, "zfs snapshot tank/vol@v")
	for _, name := range []string{"tank", "tank/a", "tank/vol", "tank/a@s1", "tank/missing", "bad//name", "tank/a@missing"} {
		in, gerr := m.Get(name)
		names, err := m.SnapshotNames(name)
		if (gerr == nil) != (err == nil) || gerr != nil && gerr.Error() != err.Error() {
			t.Errorf("SnapshotNames(%s) error %v; Get: %v", name, err, gerr)
			continue
		}
		if gerr == nil && !reflect.DeepEqual(names, in.Snapshots) {
			t.Errorf("SnapshotNames(%s) = %q; Get: %q", name, names, in.Snapshots)
		}
	}
	if names, _ := m.SnapshotNames("tank/a"); !reflect.DeepEqual(names, []string{"tank/a@s1", "tank/a@s0"}) {
		t.Errorf("SnapshotNames(tank/a) = %q, want creation order", names)
	}
}
