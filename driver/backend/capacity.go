package backend

import (
	"math"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// DefaultCapacity is what a volume gets when the request names no size
// (democratic-csi's default).
const DefaultCapacity = 1 << 30

// Capacity picks the size to make from a capacity range: required_bytes,
// else limit_bytes, else DefaultCapacity, rounded up to whole blocks
// (block <= 0: no rounding) and still within the limit. Bad ranges are
// OUT_OF_RANGE.
func Capacity(r *csi.CapacityRange, block int64) (int64, error) {
	if err := CheckRange(r); err != nil {
		return 0, err
	}
	req, lim := r.GetRequiredBytes(), r.GetLimitBytes()
	size := req
	if size == 0 {
		size = lim
	}
	if size == 0 {
		size = DefaultCapacity
	}
	if block > 0 {
		// Rounding up must not wrap around: near MaxInt64 the sum would turn
		// negative and "round" to a tiny size (a 1 GiB answer to an 8 EiB
		// request).
		if size > math.MaxInt64-(block-1) {
			return 0, status.Errorf(codes.OutOfRange, "capacity_range: %d bytes cannot be rounded up to whole %d-byte blocks (the largest size is %d bytes)", size, block, math.MaxInt64/block*block)
		}
		size = (size + block - 1) / block * block
	}
	if lim > 0 && size > lim {
		return 0, status.Errorf(codes.OutOfRange, "capacity_range: %d bytes rounded up to whole %d-byte blocks is %d, more than limit_bytes (%d)", req, block, size, lim)
	}
	return size, nil
}

// CheckRange reports a capacity range no backend can serve: a negative
// bound or required_bytes above limit_bytes. Every backend answers these
// with OUT_OF_RANGE, so one mistake gets one code whichever backend serves
// the StorageClass.
func CheckRange(r *csi.CapacityRange) error {
	req, lim := r.GetRequiredBytes(), r.GetLimitBytes()
	if req < 0 || lim < 0 {
		return status.Errorf(codes.OutOfRange, "capacity_range: required_bytes (%d) and limit_bytes (%d) must not be negative", req, lim)
	}
	if req > 0 && lim > 0 && req > lim {
		return status.Errorf(codes.OutOfRange, "capacity_range: required_bytes (%d) is greater than limit_bytes (%d)", req, lim)
	}
	return nil
}

// Fits reports whether an existing size satisfies a capacity range.
func Fits(size int64, r *csi.CapacityRange) bool {
	if req := r.GetRequiredBytes(); req > 0 && size < req {
		return false
	}
	if lim := r.GetLimitBytes(); lim > 0 && size > lim {
		return false
	}
	return true
}
