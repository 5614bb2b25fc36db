package proxy

// Volume health through the proxy: ControllerGetVolumeHealth is routed by
// the volume handle; the answer's volume id is the handle again. A backend
// without health answers INVALID_ARGUMENT naming the connection
// (backendErr). ControllerListVolumeHealth is not offered by the proxy yet
// (it would page across connections like ListVolumes); the
// external-health-monitor polls per volume with GET_VOLUME_HEALTH.

import (
	"context"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/protobuf/proto"
)

func (p *Controller) ControllerGetVolumeHealth(ctx context.Context, req *csipb.ControllerGetVolumeHealthRequest) (*csipb.ControllerGetVolumeHealthResponse, error) {
	return onVolume(ctx, p, "ControllerGetVolumeHealth", req.GetVolumeId(), func(l *Lease, id string) (*csipb.ControllerGetVolumeHealthResponse, error) {
		fwd := proto.Clone(req).(*csipb.ControllerGetVolumeHealthRequest)
		fwd.VolumeId = id
		resp, err := l.Driver.ControllerGetVolumeHealth(ctx, fwd)
		if err != nil {
			return nil, err
		}
		if h := resp.GetVolumeHealth(); h != nil {
			h.VolumeId = req.GetVolumeId()
		}
		return resp, nil
	})
}
