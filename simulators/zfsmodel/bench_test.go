package zfsmodel

import (
	"fmt"
	"io"
	"sync/atomic"
	"testing"
)

// BenchmarkCreate shows that a create costs the same with 100 or 10,000
// datasets in the pool: persistence, lookups and space checks are
// O(changed datasets), not O(all datasets).
func BenchmarkCreate(b *testing.B) {
	for _, existing := range []int{100, 10000} {
		for _, kind := range []string{"filesystem", "volume"} {
			b.Run(fmt.Sprintf("existing=%d/%s", existing, kind), func(b *testing.B) {
				m, err := Open(Options{StateDir: b.TempDir(), Pools: []PoolSpec{{Name: "tank", Size: 1 << 50}}})
				if err != nil {
					b.Fatal(err)
				}
				defer m.Close()
				if err := m.Create("tank/k8s", Filesystem, nil, CreateOptions{}); err != nil {
					b.Fatal(err)
				}
				for i := 0; i < existing; i++ {
					if err := m.Create(fmt.Sprintf("tank/k8s/seed-%05d", i), Filesystem, nil, CreateOptions{}); err != nil {
						b.Fatal(err)
					}
				}
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					args := []string{"create", "-p", "-o", "democratic-csi:managed_resource=true", fmt.Sprintf("tank/k8s/pvc-%d", i)}
					if kind == "volume" {
						args = []string{"create", "-p", "-V", "1G", fmt.Sprintf("tank/k8s/pvc-%d", i)}
					}
					if code := m.ZFS(args, nil, io.Discard, io.Discard); code != 0 {
						b.Fatalf("create failed: %d", code)
					}
				}
			})
		}
	}
}

// BenchmarkCreateDestroyParallel is the simulator's side of the
// zfs-generic-nfs benchmark at 16 callers: create -p with a property, get
// of the new dataset's space and properties, destroy.
func BenchmarkCreateDestroyParallel(b *testing.B) {
	m, err := Open(Options{StateDir: b.TempDir(), Pools: []PoolSpec{{Name: "tank", Size: 1 << 50}}})
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	if err := m.Create("tank/k8s", Filesystem, nil, CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	var n atomic.Int64
	b.SetParallelism(8) // 16 callers on the 2 cores
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			name := fmt.Sprintf("tank/k8s/pvc-%d", n.Add(1))
			if code := m.ZFS([]string{"create", "-p", "-o", "democratic-csi:managed_resource=true", name}, nil, io.Discard, io.Discard); code != 0 {
				b.Errorf("create %s: %d", name, code)
				return
			}
			if code := m.ZFS([]string{"get", "-Hp", "-o", "property,value", "used,available,referenced,mountpoint", name}, nil, io.Discard, io.Discard); code != 0 {
				b.Errorf("get %s: %d", name, code)
				return
			}
			if code := m.ZFS([]string{"destroy", name}, nil, io.Discard, io.Discard); code != 0 {
				b.Errorf("destroy %s: %d", name, code)
				return
			}
		}
	})
}
