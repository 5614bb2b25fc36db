package sharing

import (
	"sync"
	"testing"
)

// Concurrent creates (the transports run calls in parallel) must each get
// their own id and all be stored.
func TestConcurrentCreates(t *testing.T) {
	e := newEnv(t, "25.10")
	e.parallel = true
	const n = 20
	ids := make([]int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := e.call("iscsi.target.create", map[string]any{"name": "t" + itoa(i)})
			if err != nil {
				t.Error(err)
				return
			}
			ids[i] = id(res.(map[string]any))
		}()
	}
	wg.Wait()
	seen := map[int]bool{}
	for _, id := range ids {
		if id < 1 || id > n || seen[id] {
			t.Fatalf("ids %v are not 1..%d, each once", ids, n)
		}
		seen[id] = true
	}
	e.register()
	if got := len(e.s.State().ISCSITargets); got != n {
		t.Errorf("%d targets stored, want %d", got, n)
	}
}
