package engine

import (
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func TestAtLeastMinQuota(t *testing.T) {
	const gib = int64(1) << 30
	tests := []struct {
		name   string
		kind   kind
		quotas bool
		min    int64
		size   int64
		limit  int64
		want   int64
		code   codes.Code
	}{
		{"no minimum", filesystem, true, 0, 64 << 20, 0, 64 << 20, codes.OK},
		{"raised to the minimum", filesystem, true, gib, 64 << 20, 0, gib, codes.OK},
		{"already large enough", filesystem, true, gib, 2 * gib, 0, 2 * gib, codes.OK},
		{"limit below the minimum", filesystem, true, gib, 64 << 20, 128 << 20, 0, codes.OutOfRange},
		{"limit allows the minimum", filesystem, true, gib, 64 << 20, 2 * gib, gib, codes.OK},
		{"quotas off: no quota to refuse", filesystem, false, gib, 64 << 20, 0, 64 << 20, codes.OK},
		{"zvols have no refquota", volume, true, gib, 64 << 20, 0, 64 << 20, codes.OK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := &Engine{cfg: settings{driver: "freenas-api-nfs", kind: tt.kind, quotas: tt.quotas}, plat: &fakePlatform{minQuota: tt.min}}
			got, err := d.atLeastMinQuota(tt.size, &csi.CapacityRange{RequiredBytes: tt.size, LimitBytes: tt.limit})
			if status.Code(err) != tt.code || got != tt.want {
				t.Fatalf("atLeastMinQuota = %d, %v; want %d, %v", got, err, tt.want, tt.code)
			}
		})
	}
}
