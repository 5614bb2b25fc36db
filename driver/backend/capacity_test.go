package backend

import (
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func TestCapacity(t *testing.T) {
	const g = 1 << 30
	cases := []struct {
		name     string
		req, lim int64
		block    int64
		want     int64
		code     codes.Code
	}{
		{"default", 0, 0, 0, g, codes.OK},
		{"required", 5 * g, 0, 0, 5 * g, codes.OK},
		{"limit only", 0, 2 * g, 0, 2 * g, codes.OK},
		{"aligned up", 1000, 0, 16384, 16384, codes.OK},
		{"req > limit", 2 * g, g, 0, 0, codes.OutOfRange},
		{"alignment passes limit", 1000, 1000, 16384, 0, codes.OutOfRange},
		{"negative", -1, 0, 0, 0, codes.OutOfRange},
	}
	for _, c := range cases {
		got, err := Capacity(&csi.CapacityRange{RequiredBytes: c.req, LimitBytes: c.lim}, c.block)
		if status.Code(err) != c.code || (c.code == codes.OK && got != c.want) {
			t.Errorf("%s: capacity = %d, %v; want %d, %v", c.name, got, err, c.want, c.code)
		}
	}
}
