package node

import (
	"context"
	"errors"
	"io/fs"
	"os"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// NodeExpandVolume implements csi.NodeServer. The record says which
// attacher staged the volume (the request carries no volume_context); an
// attacher that is an Expander grows it, any other has nothing to grow and
// the requested size is reported.
func (s *Service) NodeExpandVolume(ctx context.Context, req *csi.NodeExpandVolumeRequest) (*csi.NodeExpandVolumeResponse, error) {
	id := req.GetVolumeId()
	if err := requireID(id); err != nil {
		return nil, err
	}
	p := req.GetVolumePath()
	if p == "" {
		return nil, status.Errorf(codes.InvalidArgument, "volume %s: volume_path is required", id)
	}
	required := req.GetCapacityRange().GetRequiredBytes()
	limit := req.GetCapacityRange().GetLimitBytes()
	if required < 0 || limit < 0 {
		return nil, status.Errorf(codes.InvalidArgument, "volume %s: capacity_range must not be negative", id)
	}
	if limit > 0 && required > limit {
		return nil, status.Errorf(codes.InvalidArgument,
			"volume %s: capacity_range.required_bytes %d exceeds limit_bytes %d", id, required, limit)
	}
	if _, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) {
		return nil, status.Errorf(codes.NotFound, "volume %s: volume_path %s does not exist on this node", id, p)
	} else if err != nil {
		return nil, status.Errorf(codes.Internal, "volume %s: volume_path %s: %v", id, p, err)
	}
	if c := req.GetVolumeCapability(); c != nil {
		if err := checkCapability(id, c); err != nil {
			return nil, err
		}
	}

	rec, err := s.loadRecord(id)
	if err != nil {
		return nil, err
	}
	if rec == nil || !rec.Staged {
		return nil, status.Errorf(codes.NotFound, "volume %s is not staged on this node", id)
	}
	a, err := s.recordedAttacher(rec)
	if err != nil {
		return nil, err
	}
	e, ok := a.(Expander)
	if !ok {
		return &csi.NodeExpandVolumeResponse{CapacityBytes: required}, nil
	}
	v := rec.volume()
	v.Secrets = req.GetSecrets()
	if c := req.GetVolumeCapability(); c != nil {
		v.Capability = c
	}
	capacity, err := e.Expand(ctx, s.host, v, p, required)
	if err != nil {
		return nil, asStatus(err, id, a.Name()+" expand")
	}
	s.log.Info("volume expanded", "volume", v, "path", p, "bytes", capacity)
	return &csi.NodeExpandVolumeResponse{CapacityBytes: capacity}, nil
}
