package node

import (
	"context"
	"testing"
)

func TestEnsureFabricsModule(t *testing.T) {
	tests := []struct {
		name   string
		loaded bool
		want   int // modprobe calls
	}{
		{"module loaded: nothing to do", true, 0},
		{"module missing: modprobe nvme-tcp", false, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newAttachFixture(t)
			if !tt.loaded {
				f.tree.remove("sys/module/nvme_tcp")
			}
			f.sim.reply("modprobe nvme-tcp", "", nil)
			ensureFabricsModule(context.Background(), f.svc.host, "tcp")
			if got := len(f.sim.lines("modprobe")); got != tt.want {
				t.Fatalf("modprobe ran %d times (%v); want %d", got, f.sim.lines("modprobe"), tt.want)
			}
		})
	}
}
