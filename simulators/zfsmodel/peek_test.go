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

// PeekProps answers Peek, and GetProps Get, with Props cut to the named
// native properties (as Peek shows them: visible, applicable) and every
// user property. (Nothing writes to the datasets: measured and unmeasured
// figures agree.)
func TestPropsAreCut(t *testing.T) {
	m, _ := newModel(t, 10<<30)
	must(t, m, "zfs create -o acltype=posix -o org.test:label=x tank/parent")
	must(t, m, "zfs create -o org.test:own=y -o readonly=on tank/parent/a")
	must(t, m, "zfs create -V 1M tank/parent/vol")
	must(t, m, "zfs snapshot tank/parent@s1")
	must(t, m, "zfs clone tank/parent@s1 tank/clone")
	sets := [][]string{nil, {}, {"readonly", "acltype", "aclmode"}, {"origin", "clones", "mountpoint"},
		{"used", "avail", "available", "volsize", "volblocksize", "org.test:label", "nosuch", "readonly", "readonly"}}
	for _, name := range []string{"tank", "tank/parent", "tank/parent/a", "tank/parent/vol", "tank/parent@s1", "tank/clone"} {
		peek, err := m.Peek(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, set := range sets {
			got, err := m.PeekProps(name, set...)
			if err != nil {
				t.Fatal(err)
			}
			want := *peek
			want.Props = map[string]PropValue{}
			for k, pv := range peek.Props {
				if isUserProp(k) || contains(set, k) {
					want.Props[k] = pv
				}
			}
			if !reflect.DeepEqual(got, &want) {
				t.Errorf("PeekProps(%s, %q) = %+v\nwant %+v", name, set, got, &want)
			}
			full, err := m.Get(name)
			if err != nil {
				t.Fatal(err)
			}
			gotFull, err := m.GetProps(name, set...)
			if err != nil {
				t.Fatal(err)
			}
			wantFull := *full
			wantFull.Props = want.Props
			if !reflect.DeepEqual(gotFull, &wantFull) {
				t.Errorf("GetProps(%s, %q) = %+v\nwant %+v", name, set, gotFull, &wantFull)
			}
		}
	}
	if _, err := m.PeekProps("tank/missing", "used"); err == nil {
		t.Error("PeekProps of a missing dataset: no error")
	}
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}
