package engine

import (
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// A group whose members sit in two pools is FAILED_PRECONDITION naming
// each pool's members: one zfs snapshot is atomic only within a pool.
func TestCheckPoolsRefusesTwoPools(t *testing.T) {
	where := map[string]string{"a": "tank/k8s/a", "b": "tank/k8s/b", "c": "fast/k8s/c"}
	dataset := func(id string) string { return where[id] }
	if err := checkPools([]string{"a", "b"}, dataset); err != nil {
		t.Fatalf("one pool: %v", err)
	}
	err := checkPools([]string{"a", "c", "b"}, dataset)
	if status.Code(err) != codes.FailedPrecondition {
		t.Fatalf("two pools: %v, want FAILED_PRECONDITION", err)
	}
	for _, want := range []string{"2 pools", "pool fast: c", "pool tank: a, b"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%v lacks %q", err, want)
		}
	}
}
