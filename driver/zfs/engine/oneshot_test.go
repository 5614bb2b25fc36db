package engine

import (
	"slices"
	"testing"
)

// clonesIn reads the clone names zfs lists after refusing a destroy.
func TestClonesIn(t *testing.T) {
	msg := "cannot destroy 'tank/v/a': filesystem has dependent clones\nuse '-R' to destroy the following datasets:\ntank/v/c1\ntank/v/c2"
	if got := clonesIn(msg); !slices.Equal(got, []string{"tank/v/c1", "tank/v/c2"}) {
		t.Fatalf("got %v", got)
	}
	if got := clonesIn("cannot destroy 'tank/v/a': dataset is busy"); len(got) != 0 {
		t.Fatalf("got %v from a message without a list", got)
	}
}
