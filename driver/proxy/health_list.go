package proxy

// ControllerListVolumeHealth through the proxy pages across connections as
// ListVolumes does (the token names the connection and that backend's own
// token), with each entry's volume id made a proxy handle. A connection
// whose backend has no health list (Infinia, local-hostpath, the TrueNAS
// API drivers without ControllerListVolumeHealth) is passed over: it can
// name no adverse condition. A connection that cannot be reached fails the
// call naming it, so the health monitor does not take silence for health.

import (
	"context"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func (p *Controller) ControllerListVolumeHealth(ctx context.Context, req *csipb.ControllerListVolumeHealthRequest) (*csipb.ControllerListVolumeHealthResponse, error) {
	const method = "ControllerListVolumeHealth"
	if req.GetMaxEntries() < 0 {
		return nil, status.Error(codes.InvalidArgument, method+": max_entries must not be negative")
	}
	entries, next, err := listAcross(ctx, p, method, req.GetStartingToken(), req.GetMaxEntries(),
		func(l *Lease, token string, maxEntries int32) (page[*csipb.VolumeHealth], error) {
			// The CO's secrets are for the proxy's own StorageClass, not
			// a backend's: each connection carries its credentials.
			resp, err := l.Driver.ControllerListVolumeHealth(ctx, &csipb.ControllerListVolumeHealthRequest{MaxEntries: maxEntries, StartingToken: token})
			if err != nil {
				return page[*csipb.VolumeHealth]{}, err
			}
			entries := make([]*csipb.VolumeHealth, 0, len(resp.GetEntries()))
			for _, e := range resp.GetEntries() {
				e.VolumeId = Decorate(VolumePrefix, l.Name, e.GetVolumeId())
				if p.fits(method, e.GetVolumeId()) {
					entries = append(entries, e)
				}
			}
			return page[*csipb.VolumeHealth]{entries, resp.GetNextToken()}, nil
		})
	if err != nil {
		return nil, err
	}
	return &csipb.ControllerListVolumeHealthResponse{Entries: entries, NextToken: next}, nil
}
