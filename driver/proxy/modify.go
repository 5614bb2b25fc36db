package proxy

// VolumeAttributesClass through the proxy: ControllerModifyVolume is routed
// by the volume handle; a backend without mutable parameters answers
// INVALID_ARGUMENT naming the connection (backendErr), and CreateVolume's
// mutable_parameters for it are refused by the guard below.

import (
	"context"
	"slices"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// modifyVolume is ControllerModifyVolume (controller.go delegates here).
// MODIFY_VOLUME is advertised for every connection, so a request with no
// parameters to a backend without mutable parameters is answered OK
// (nothing to change) instead of INVALID_ARGUMENT.
func (p *Controller) modifyVolume(ctx context.Context, req *csipb.ControllerModifyVolumeRequest) (*csipb.ControllerModifyVolumeResponse, error) {
	return onVolume(ctx, p, "ControllerModifyVolume", req.GetVolumeId(), func(l *Lease, id string) (*csipb.ControllerModifyVolumeResponse, error) {
		if len(req.GetMutableParameters()) == 0 && !canModify(ctx, l) {
			return &csipb.ControllerModifyVolumeResponse{}, nil
		}
		fwd := proto.Clone(req).(*csipb.ControllerModifyVolumeRequest)
		fwd.VolumeId = id
		return l.Driver.ControllerModifyVolume(ctx, fwd)
	})
}

// canModify: the backend advertises MODIFY_VOLUME.
func canModify(ctx context.Context, l *Lease) bool {
	caps, err := l.Driver.ControllerGetCapabilities(ctx, &csipb.ControllerGetCapabilitiesRequest{})
	return err == nil && slices.ContainsFunc(caps.GetCapabilities(), func(c *csipb.ControllerServiceCapability) bool {
		return c.GetRpc().GetType() == csipb.ControllerServiceCapability_RPC_MODIFY_VOLUME
	})
}

// CheckMutableParameters is CreateVolume's guard: mutable_parameters (a
// VolumeAttributesClass) given to a connection whose backend cannot modify
// volumes are INVALID_ARGUMENT, not silently ignored. Backends that can
// check the keys themselves.
func CheckMutableParameters(ctx context.Context, l *Lease, req *csipb.CreateVolumeRequest) error {
	if len(req.GetMutableParameters()) == 0 {
		return nil
	}
	if canModify(ctx, l) {
		return nil
	}
	return status.Errorf(codes.InvalidArgument, "CreateVolume: connection %s (driver %s) has no mutable parameters: remove the VolumeAttributesClass (mutable_parameters) from this claim", l.Name, l.Type.Name)
}
