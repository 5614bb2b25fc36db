package zfsgeneric

import (
	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/driver/zfs"
)

// defaultCapacity is what democratic-csi makes when no capacity is asked.
const defaultCapacity = 1 << 30

// capacity picks the size to make from a capacity range: required_bytes,
// else limit_bytes, else 1 GiB; zvols are rounded up to their block size
// and must still fit the limit.
func capacity(r *csi.CapacityRange, block int64) (int64, error) {
	req, lim := r.GetRequiredBytes(), r.GetLimitBytes()
	if req < 0 || lim < 0 {
		return 0, status.Error(codes.OutOfRange, "capacity_range: required_bytes and limit_bytes must not be negative")
	}
	if req > 0 && lim > 0 && req > lim {
		return 0, status.Errorf(codes.OutOfRange, "capacity_range: required_bytes (%d) is greater than limit_bytes (%d)", req, lim)
	}
	size := req
	if size == 0 {
		size = lim
	}
	if size == 0 {
		size = defaultCapacity
	}
	if block > 0 {
		size = zfs.AlignUp(size, block)
	}
	if lim > 0 && size > lim {
		return 0, status.Errorf(codes.OutOfRange, "capacity_range: %d bytes rounded up to the zvol block size (%d) is %d, more than limit_bytes (%d)", req, block, size, lim)
	}
	return size, nil
}

// fits reports whether an existing size satisfies a capacity range.
func fits(size int64, r *csi.CapacityRange) bool {
	if req := r.GetRequiredBytes(); req > 0 && size < req {
		return false
	}
	if lim := r.GetLimitBytes(); lim > 0 && size > lim {
		return false
	}
	return true
}
