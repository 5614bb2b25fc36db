package proxy

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// BenchmarkSetCreate measures CreateVolume through sets of 1, 3 and 20
// fake members against a single connection: the difference is the cost of
// the choice (lease every member, look the name up on each, ask each for
// capacity, sort). The fake's own create (about 1ms for a new name) is in
// every case.
func BenchmarkSetCreate(b *testing.B) {
	for _, n := range []int{0, 1, 3, 20} {
		name := fmt.Sprintf("set-%d", n)
		if n == 0 {
			name = "single"
		}
		b.Run(name, func(b *testing.B) {
			r := newRig(b)
			var members []string
			for i := range max(n, 1) {
				m := fmt.Sprintf("m%d", i)
				r.member(m, 1<<40, "")
				members = append(members, m)
			}
			params := map[string]string{ConnectionsParameter: strings.Join(members, ",")}
			if n == 0 {
				params = map[string]string{ConnectionParameter: "m0"}
			}
			ctx := context.Background()
			// The fakes outlive a run (-count): a prefix of its own keeps
			// every name new, so each call makes a volume.
			run := time.Now().UnixNano()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := r.ctl.CreateVolume(ctx, setReq(fmt.Sprintf("pvc-%d-%d", run, i), params, nil)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
