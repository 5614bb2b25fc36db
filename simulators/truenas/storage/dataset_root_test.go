package storage

import (
	"slices"
	"testing"

	"github.com/switchyard-csi/switchyard/simulators/zfsmodel"
)

// Listing only the subtree a name filter bounds finds exactly the names
// listing every dataset and matching them finds, in the same order.
func TestNameRootListsTheSameNames(t *testing.T) {
	e := newEnv(t, "25.10")
	for _, n := range []string{"tank/k8s", "tank/k8s/v", "tank/k8s/v/pvc-1", "tank/k8s/v/pvc-1/x", "tank/k8s/v/pvc-10",
		"tank/k8s/v/pvc-2", "tank/k8s/v-snap", "tank/k8sx", "tank/other"} {
		if err := e.m.Create(n, zfsmodel.Filesystem, nil, zfsmodel.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.m.Create("tank/k8s/v/vol", zfsmodel.Volume, nil, zfsmodel.CreateOptions{Volsize: 1 << 20}); err != nil {
		t.Fatal(err)
	}
	s := &service{m: e.m, v: e.v}
	term := func(f, op, v string) []any { return []any{f, op, v} }
	or := func(alts ...any) []any { return []any{"OR", alts} }
	cases := [][]any{
		{or(term("id", "=", "tank/k8s/v/pvc-1"), term("id", "^", "tank/k8s/v/pvc-1/"))}, // the driver's listing
		{or(term("id", "=", "tank/k8s/v"), term("id", "^", "tank/k8s/v/"))},
		{or(term("id", "=", "tank/k8s/v/gone"), term("id", "^", "tank/k8s/v/gone/"))},
		{term("name", "^", "tank/k8s/v/pvc-1")},
		{term("id", "^", "tank/k8s")},
		{term("id", "^", "tank")},
		{term("id", "=", "tank/k8s/v/vol")},
		{term("id", "=", "tank/k8s/v/pvc-1@snap")},
		{term("id", "=", "nopool/a")},
		{term("id", "=", "tank//k8s")},
		{or(term("id", "=", "tank/k8s/v/pvc-1"), term("id", "=", "tank/other"))},
		{or(term("id", "=", "tank/k8s/v/pvc-1"), []any{term("id", "^", "tank/k8s/"), term("name", "^", "tank/k8s/v/pvc-2")})},
		{term("id", "^", "tank/k8s/"), term("id", "=", "tank/k8s/v/pvc-2")},
		{term("id", "!=", "tank/k8s")},
	}
	all, err := e.m.List("", true, zfsmodel.Filesystem|zfsmodel.Volume)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range cases {
		if !nameOnly(f) {
			t.Fatalf("%v: not name-only", f)
		}
		want := namesMatching(all, f)
		root := s.existingRoot(f)
		sub, err := e.m.List(root, true, zfsmodel.Filesystem|zfsmodel.Volume)
		if err != nil {
			t.Fatalf("%v: root %q: %v", f, root, err)
		}
		if got := namesMatching(sub, f); !slices.Equal(got, want) {
			t.Errorf("%v: root %q finds %v; the whole pool %v", f, root, got, want)
		}
	}
	if r := s.existingRoot(cases[0]); r != "tank/k8s/v/pvc-1" {
		t.Errorf("the driver's listing is bounded by %q; want the volume itself", r)
	}
}
