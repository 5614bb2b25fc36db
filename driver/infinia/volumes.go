package infinia

import (
	"context"
	"net/http"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/driver/backend"
	"github.com/switchyard-csi/switchyard/driver/echo"
	"github.com/switchyard-csi/switchyard/driver/infinia/api"
)

// target parses a volume id for calls that need the volume: a handle that
// cannot name one is NOT_FOUND.
func (d *Driver) targetOf(id string, secrets map[string]string) (target, error) {
	if id == "" {
		return target{}, status.Error(codes.InvalidArgument, "volume_id is required")
	}
	h, ok := parseHandle(id)
	if !ok {
		return target{}, status.Errorf(codes.NotFound, "volume %s does not exist: it is not an Infinia volume handle (<cluster>/<tenant>/<account>:<subtenant>/<service>/<volume>)", echo.Quote(id))
	}
	return d.resolve(h, secrets)
}

// ControllerExpandVolume grows the volume to whole blocks. A filesystem
// on it is grown by the node; a raw block volume needs nothing more.
func (d *Driver) ControllerExpandVolume(ctx context.Context, req *csi.ControllerExpandVolumeRequest) (*csi.ControllerExpandVolumeResponse, error) {
	if req.GetVolumeId() != "" && req.GetCapacityRange() == nil {
		return nil, status.Error(codes.InvalidArgument, "capacity_range is required")
	}
	t, err := d.targetOf(req.GetVolumeId(), req.GetSecrets())
	if err != nil {
		return nil, err
	}
	vol, ds, err := d.volume(ctx, t)
	if err != nil {
		return nil, err
	}
	bs := vol.BlockSize
	if bs <= 0 {
		bs = blockSize
	}
	size, err := backend.Capacity(req.GetCapacityRange(), bs)
	if err != nil {
		return nil, err
	}
	nodeExpand := req.GetVolumeCapability().GetBlock() == nil
	if have := vol.Size(); have >= size {
		return &csi.ControllerExpandVolumeResponse{CapacityBytes: have, NodeExpansionRequired: nodeExpand}, nil
	}
	grown, err := t.c.ResizeVolume(ctx, t.h.subtenant, ds, t.h.volume, size/bs)
	switch code := api.StatusCode(err); {
	case err == nil:
	case api.IsNotFound(err):
		return nil, status.Errorf(codes.NotFound, "volume %s does not exist", t.h)
	case code == http.StatusInsufficientStorage:
		return nil, status.Errorf(codes.OutOfRange, "%s account %s: cannot grow volume %s to %d bytes: %v", DriverName, t.acct.key, t.h, size, err)
	default:
		return nil, apiErr(err, t.acct, "growing volume "+t.h.String())
	}
	capBytes := grown.Size()
	if capBytes < size {
		capBytes = size // an answer without sizes: the resize was accepted
	}
	return &csi.ControllerExpandVolumeResponse{CapacityBytes: capBytes, NodeExpansionRequired: nodeExpand}, nil
}

// ValidateVolumeCapabilities confirms the capabilities an existing volume
// can serve.
func (d *Driver) ValidateVolumeCapabilities(ctx context.Context, req *csi.ValidateVolumeCapabilitiesRequest) (*csi.ValidateVolumeCapabilitiesResponse, error) {
	if req.GetVolumeId() != "" && len(req.GetVolumeCapabilities()) == 0 {
		return nil, status.Error(codes.InvalidArgument, "volume_capabilities is required")
	}
	t, err := d.targetOf(req.GetVolumeId(), req.GetSecrets())
	if err != nil {
		return nil, err
	}
	if _, _, err := d.volume(ctx, t); err != nil {
		return nil, err
	}
	if why := checkCapabilities(req.GetVolumeCapabilities()); why != "" {
		return &csi.ValidateVolumeCapabilitiesResponse{Message: why}, nil
	}
	return &csi.ValidateVolumeCapabilitiesResponse{Confirmed: &csi.ValidateVolumeCapabilitiesResponse_Confirmed{
		VolumeContext: req.GetVolumeContext(), VolumeCapabilities: req.GetVolumeCapabilities(), Parameters: req.GetParameters(),
	}}, nil
}

// ControllerGetVolume returns one volume with its volume_context.
func (d *Driver) ControllerGetVolume(ctx context.Context, req *csi.ControllerGetVolumeRequest) (*csi.ControllerGetVolumeResponse, error) {
	t, err := d.targetOf(req.GetVolumeId(), nil)
	if err != nil {
		return nil, err
	}
	vol, _, err := d.volume(ctx, t)
	if err != nil {
		return nil, err
	}
	v := &csi.Volume{VolumeId: t.h.String(), CapacityBytes: vol.Size(), AccessibleTopology: topology(t.acct)}
	if vol.Subsystem != "" {
		vc, err := d.contextOf(ctx, t, vol, ownershipOf(t.acct, vol), t.acct.dataPort)
		if err != nil && status.Code(err) != codes.FailedPrecondition {
			return nil, err
		}
		v.VolumeContext = vc
	}
	return &csi.ControllerGetVolumeResponse{Volume: v, Status: &csi.ControllerGetVolumeResponse_VolumeStatus{}}, nil
}
