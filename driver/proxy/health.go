package proxy

// Volume health through the proxy: ControllerGetVolumeHealth is routed by
// the volume handle; the answer's volume id is the handle again. The proxy
// advertises GET_VOLUME_HEALTH for all its connections, so for a backend
// without health checks it answers what it can know: NOT_FOUND when the
// backend no longer has the volume, otherwise an empty list ("no adverse
// condition known", as CSI defines it). ControllerListVolumeHealth pages
// across connections like ListVolumes (health_list.go).

import (
	"context"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

func (p *Controller) ControllerGetVolumeHealth(ctx context.Context, req *csipb.ControllerGetVolumeHealthRequest) (*csipb.ControllerGetVolumeHealthResponse, error) {
	return onVolume(ctx, p, "ControllerGetVolumeHealth", req.GetVolumeId(), func(l *Lease, id string) (*csipb.ControllerGetVolumeHealthResponse, error) {
		fwd := proto.Clone(req).(*csipb.ControllerGetVolumeHealthRequest)
		fwd.VolumeId = id
		resp, err := l.Driver.ControllerGetVolumeHealth(ctx, fwd)
		if status.Code(err) == codes.Unimplemented {
			resp, err = existenceHealth(ctx, l, id)
		}
		if err != nil {
			return nil, err
		}
		if h := resp.GetVolumeHealth(); h != nil {
			h.VolumeId = req.GetVolumeId()
		}
		return resp, nil
	})
}

// existenceHealth is the health of a volume on a backend that has no
// health checks: the volume's existence, by ControllerGetVolume where the
// backend serves it (an error other than NOT_FOUND is returned as is).
func existenceHealth(ctx context.Context, l *Lease, id string) (*csipb.ControllerGetVolumeHealthResponse, error) {
	_, err := l.Driver.ControllerGetVolume(ctx, &csipb.ControllerGetVolumeRequest{VolumeId: id})
	if err != nil && status.Code(err) != codes.Unimplemented {
		return nil, err
	}
	return &csipb.ControllerGetVolumeHealthResponse{VolumeHealth: &csipb.VolumeHealth{VolumeId: id}}, nil
}
