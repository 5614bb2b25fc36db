package zfsmodel

import (
	"math/rand"
	"reflect"
	"sort"
	"testing"
)

// userPropNamesSet is userPropNames as it was (a set, then resolve and
// sort): the reference for TestUserPropNamesIsTheSet.
func userPropNamesSet(d *dataset) []string {
	seen := map[string]bool{}
	for x := d; x != nil; x = x.parent {
		for _, mp := range []map[string]string{x.local, x.recvd} {
			for k := range mp {
				if lookupProp(k) == nil && isUserProp(k) {
					seen[k] = true
				}
			}
		}
	}
	out := make([]string, 0, len(seen))
	for k := range seen {
		if _, _, _, ok := resolve(d, k, true); ok {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// Chains of datasets with local and received properties (user and
// native names, inherit markers masking received values) list the same
// user properties as the set did.
func TestUserPropNamesIsTheSet(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	names := []string{"a:b", "org.test:x", "org.test:y", "com.example:z", "quota", "compression", "atime", "Bad:Name", "nocolon"}
	values := []string{"1", "", "on", inheritMarker}
	for i := 0; i < 3000; i++ {
		var d *dataset
		for depth := rng.Intn(4); depth >= 0; depth-- {
			x := &dataset{parent: d, local: map[string]string{}, recvd: map[string]string{}}
			for n := rng.Intn(5); n > 0; n-- {
				x.local[names[rng.Intn(len(names))]] = values[rng.Intn(len(values))]
			}
			for n := rng.Intn(3); n > 0; n-- {
				x.recvd[names[rng.Intn(len(names))]] = values[rng.Intn(3)]
			}
			d = x
		}
		got, want := userPropNames(d), userPropNamesSet(d)
		if len(got) == 0 && len(want) == 0 {
			continue
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("chain %d: %q, want %q", i, got, want)
		}
	}
}
