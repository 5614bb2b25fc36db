package proxy

// VolumeAttributesClass through the proxy. ControllerModifyVolume is
// routed by the volume handle (controller.go); a backend without mutable
// parameters answers INVALID_ARGUMENT naming the connection (backendErr).
// CreateVolume's mutable_parameters need the guard below.

import (
	"context"
	"slices"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// CheckMutableParameters is CreateVolume's guard: mutable_parameters (a
// VolumeAttributesClass) given to a connection whose backend cannot modify
// volumes are INVALID_ARGUMENT, not silently ignored. Backends that can
// check the keys themselves.
func CheckMutableParameters(ctx context.Context, l *Lease, req *csipb.CreateVolumeRequest) error {
	if len(req.GetMutableParameters()) == 0 {
		return nil
	}
	caps, err := l.Driver.ControllerGetCapabilities(ctx, &csipb.ControllerGetCapabilitiesRequest{})
	if err == nil && slices.ContainsFunc(caps.GetCapabilities(), func(c *csipb.ControllerServiceCapability) bool {
		return c.GetRpc().GetType() == csipb.ControllerServiceCapability_RPC_MODIFY_VOLUME
	}) {
		return nil
	}
	return status.Errorf(codes.InvalidArgument, "CreateVolume: connection %s (driver %s) has no mutable parameters: remove the VolumeAttributesClass (mutable_parameters) from this claim", l.Name, l.Type.Name)
}
