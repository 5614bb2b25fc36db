package node

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"golang.org/x/sys/unix"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// NodeGetVolumeStats implements csi.NodeServer: bytes and inodes of the
// filesystem at volume_path, or the size of a block device. The path need
// not be one this plugin recorded: kubelet asks for the paths it knows.
func (s *Service) NodeGetVolumeStats(_ context.Context, req *csi.NodeGetVolumeStatsRequest) (*csi.NodeGetVolumeStatsResponse, error) {
	id := req.GetVolumeId()
	if err := requireID(id); err != nil {
		return nil, err
	}
	p := req.GetVolumePath()
	if p == "" {
		return nil, status.Errorf(codes.InvalidArgument, "volume %s: volume_path is required", id)
	}
	fi, err := os.Stat(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, status.Errorf(codes.NotFound, "volume %s: volume_path %s does not exist on this node", id, p)
	case isStale(err):
		return nil, staleError(id, p, err)
	case err != nil:
		return nil, status.Errorf(codes.Internal, "volume %s: volume_path %s: %v", id, p, err)
	}

	resp := &csi.NodeGetVolumeStatsResponse{}
	if fi.Mode()&fs.ModeDevice != 0 && fi.Mode()&fs.ModeCharDevice == 0 {
		size, err := blockDeviceSize(p)
		if err != nil {
			return nil, status.Errorf(codes.Internal, "volume %s: size of block device %s: %v", id, p, err)
		}
		resp.Usage = []*csi.VolumeUsage{{Unit: csi.VolumeUsage_BYTES, Total: size}}
	} else {
		usage, err := fsUsage(p)
		if isStale(err) {
			return nil, staleError(id, p, err)
		}
		if err != nil {
			return nil, status.Errorf(codes.Internal, "volume %s: statfs %s: %v", id, p, err)
		}
		resp.Usage = usage
	}
	return resp, nil
}

// fsUsage reports bytes and inodes like df: used is total minus free,
// available is what an unprivileged writer can still use.
func fsUsage(p string) ([]*csi.VolumeUsage, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(p, &st); err != nil {
		return nil, err
	}
	bs := st.Frsize // the unit of the block counts; Bsize on old kernels
	if bs == 0 {
		bs = st.Bsize
	}
	b := uint64(bs)
	return []*csi.VolumeUsage{
		{
			Unit:      csi.VolumeUsage_BYTES,
			Total:     int64(st.Blocks * b),
			Available: int64(st.Bavail * b),
			Used:      int64((st.Blocks - st.Bfree) * b),
		},
		{
			Unit:      csi.VolumeUsage_INODES,
			Total:     int64(st.Files),
			Available: int64(st.Ffree),
			Used:      int64(st.Files - st.Ffree),
		},
	}, nil
}

// blockDeviceSize is the size of a block device: seeking to its end is
// portable across architectures, unlike the BLKGETSIZE64 ioctl's argument.
func blockDeviceSize(p string) (int64, error) {
	f, err := os.Open(p)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	return f.Seek(0, io.SeekEnd)
}

// staleError says plainly that the mount is stale (its server or
// connection is gone) instead of a bare errno; NodeGetVolumeHealth reports
// the same as INACCESSIBLE/StaleMount.
func staleError(id, p string, err error) error {
	return status.Errorf(codes.Internal, "volume %s: volume_path %s: the mount is stale (%s): its server or connection is gone", id, p, errnoName(err))
}
