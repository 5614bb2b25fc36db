package storage

import (
	"slices"
	"testing"
)

func TestNameOnlyPrefilter(t *testing.T) {
	under := []any{[]any{"OR", []any{[]any{"id", "=", "tank/k8s"}, []any{"id", "^", "tank/k8s/"}}}}
	if !nameOnly(under) {
		t.Fatal("the driver's listing filter compares names only")
	}
	for _, f := range [][]any{
		{[]any{"type", "=", "FILESYSTEM"}},
		{[]any{"id", "^", "tank/"}, []any{"used.parsed", ">", 0.0}},
		{[]any{"OR", []any{[]any{"id", "=", "a"}, []any{"pool", "=", "tank"}}}},
		{"id"},
	} {
		if nameOnly(f) {
			t.Errorf("%v reads more than the name", f)
		}
	}
	got := namesMatching([]string{"tank", "tank/k8s", "tank/k8s/a", "tank/k8sx", "tank/other"}, under)
	if !slices.Equal(got, []string{"tank/k8s", "tank/k8s/a"}) {
		t.Fatalf("kept %v", got)
	}
}
