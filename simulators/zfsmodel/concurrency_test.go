package zfsmodel

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
)

func TestConcurrentCreates(t *testing.T) {
	m, _ := newModel(t, 1<<30)
	must(t, m, "zfs create tank/k8s")
	const workers, each = 32, 8
	var wg sync.WaitGroup
	errs := make(chan string, workers*each*2)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < each; i++ {
				name := fmt.Sprintf("tank/k8s/pvc-%02d-%d", w, i)
				var code int
				if i%2 == 0 {
					code = m.ZFS([]string{"create", "-p", "-o", "org:w=" + fmt.Sprint(w), name}, nil, io.Discard, io.Discard)
				} else if err := m.Create(name, Volume, nil, CreateOptions{Volsize: 1 << 20, Sparse: true}); err != nil {
					code = 1
				}
				if code != 0 {
					errs <- name
				}
				// Readers run alongside the writers.
				m.ZFS([]string{"list", "-Hp", "-r", "tank/k8s"}, nil, io.Discard, io.Discard)
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Errorf("create %s failed", e)
	}
	names := strings.Fields(must(t, m, "zfs list -H -o name -r tank/k8s"))
	if len(names) != workers*each+1 {
		t.Fatalf("%d datasets listed, want %d", len(names), workers*each+1)
	}
	seen := map[string]bool{}
	for _, n := range names {
		if seen[n] {
			t.Errorf("duplicate %s", n)
		}
		seen[n] = true
	}
}

func TestConcurrentSameName(t *testing.T) {
	m, _ := newModel(t, 1<<30)
	const racers = 32
	var wg sync.WaitGroup
	var mu sync.Mutex
	ok, exists := 0, 0
	for i := 0; i < racers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := m.Create("tank/same", Filesystem, nil, CreateOptions{})
			mu.Lock()
			defer mu.Unlock()
			switch KindOf(err) {
			case 0:
				ok++
			case KindExists:
				exists++
			default:
				t.Errorf("unexpected %v", err)
			}
		}()
	}
	wg.Wait()
	if ok != 1 || exists != racers-1 {
		t.Errorf("%d created, %d exists", ok, exists)
	}
}

// TestSnapshotWhileDestroying races snapshots, clones and destroys of the
// same datasets: every operation either succeeds or fails with a zfs error,
// and the model stays consistent.
func TestSnapshotWhileDestroying(t *testing.T) {
	m, _ := newModel(t, 1<<30)
	for i := 0; i < 8; i++ {
		must(t, m, fmt.Sprintf("zfs create tank/d%d", i))
		writeFile(t, m, fmt.Sprintf("/tank/d%d/f", i), strings.Repeat("x", 50000))
	}
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(3)
		go func(i int) {
			defer wg.Done()
			_ = m.Snapshot([]string{fmt.Sprintf("tank/d%d@s", i)}, nil, false)
		}(i)
		go func(i int) {
			defer wg.Done()
			_ = m.Clone(fmt.Sprintf("tank/d%d@s", i), fmt.Sprintf("tank/c%d", i), nil, false)
		}(i)
		go func(i int) {
			defer wg.Done()
			err := m.Destroy(fmt.Sprintf("tank/d%d", i), DestroyOptions{Recursive: true, Dependents: true})
			if err != nil && KindOf(err) == 0 {
				t.Errorf("destroy: untyped error %v", err)
			}
		}(i)
	}
	wg.Wait()
	// Whatever survived is listed and internally consistent.
	m.mu.RLock()
	defer m.mu.RUnlock()
	for name, d := range m.byName {
		if d.full != name || m.byGUID[d.guid] != d {
			t.Errorf("index broken for %s", name)
		}
		if d.origin != nil && !d.origin.clones[d] {
			t.Errorf("%s: origin does not list it", name)
		}
	}
	if len(m.pending) != 0 {
		t.Errorf("pending names left: %v", m.pending)
	}
}
