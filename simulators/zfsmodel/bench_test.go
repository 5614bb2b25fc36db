package zfsmodel

import (
	"fmt"
	"io"
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
