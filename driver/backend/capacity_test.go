package backend

import (
	"math"
	"strings"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func TestCapacity(t *testing.T) {
	const gib = 1 << 30
	tests := []struct {
		name     string
		req, lim int64
		block    int64
		want     int64
		code     codes.Code
		msg      string
	}{
		{"default", 0, 0, 0, DefaultCapacity, codes.OK, ""},
		{"limit only", 0, 3 * gib, 0, 3 * gib, codes.OK, ""},
		{"rounded to blocks", gib + 1, 0, 4096, gib + 4096, codes.OK, ""},
		{"exact block", gib, gib, 4096, gib, codes.OK, ""},
		{"required only", 5 * gib, 0, 0, 5 * gib, codes.OK, ""},
		{"aligned up to one block", 1000, 0, 16384, 16384, codes.OK, ""},
		{"alignment passes limit", 1000, 1000, 16384, 0, codes.OutOfRange, "more than limit_bytes"},
		{"rounding passes limit", gib + 1, gib + 2, 4096, 0, codes.OutOfRange, "more than limit_bytes"},
		{"negative required", -1, 0, 0, 0, codes.OutOfRange, "must not be negative"},
		{"negative limit", 0, -1, 0, 0, codes.OutOfRange, "must not be negative"},
		{"required above limit", 2 * gib, gib, 0, 0, codes.OutOfRange, "greater than limit_bytes"},
		// Rounding near the int64 maximum once wrapped around to a
		// negative sum and answered a tiny size.
		{"max int64 with blocks", math.MaxInt64, 0, 16384, 0, codes.OutOfRange, "cannot be rounded up"},
		{"max int64 limit only", 0, math.MaxInt64, 512, 0, codes.OutOfRange, "cannot be rounded up"},
		{"max int64 no blocks", math.MaxInt64, 0, 0, math.MaxInt64, codes.OK, ""},
		{"largest whole block", math.MaxInt64 / 4096 * 4096, 0, 4096, math.MaxInt64 / 4096 * 4096, codes.OK, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Capacity(&csi.CapacityRange{RequiredBytes: tc.req, LimitBytes: tc.lim}, tc.block)
			if c := status.Code(err); c != tc.code {
				t.Fatalf("code = %v (%v); want %v", c, err, tc.code)
			}
			if err != nil {
				if !strings.Contains(err.Error(), tc.msg) {
					t.Fatalf("err = %v; want it to say %q", err, tc.msg)
				}
				return
			}
			if got != tc.want {
				t.Fatalf("size = %d; want %d", got, tc.want)
			}
			if got < tc.req {
				t.Fatalf("size %d is below required_bytes %d", got, tc.req)
			}
		})
	}
}

func TestFits(t *testing.T) {
	r := &csi.CapacityRange{RequiredBytes: 10, LimitBytes: 20}
	for size, want := range map[int64]bool{9: false, 10: true, 20: true, 21: false} {
		if got := Fits(size, r); got != want {
			t.Errorf("Fits(%d) = %v; want %v", size, got, want)
		}
	}
	if !Fits(5, nil) {
		t.Error("a nil range fits every size")
	}
}
