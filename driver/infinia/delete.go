package infinia

import (
	"context"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/driver/infinia/api"
)

// DeleteVolume removes the volume (with its namespace) and then its own
// subsystem. A handle that cannot name a volume is success, as CSI asks;
// one naming an account that is not configured is not: success would make
// the CO forget a volume that still exists.
func (d *Driver) DeleteVolume(ctx context.Context, req *csi.DeleteVolumeRequest) (*csi.DeleteVolumeResponse, error) {
	id := req.GetVolumeId()
	if id == "" {
		return nil, status.Error(codes.InvalidArgument, "volume_id is required")
	}
	h, ok := parseHandle(id)
	if !ok {
		d.log.Info("DeleteVolume: not an Infinia volume handle; nothing to delete", "volume_id", id)
		return &csi.DeleteVolumeResponse{}, nil
	}
	t, err := d.resolve(h, req.GetSecrets())
	if err != nil {
		return nil, err
	}
	ds, err := d.dataset(ctx, t)
	switch {
	case api.IsNotFound(err):
		// No service, no volume; a subsystem of a half-made volume may remain.
	case err != nil:
		return nil, apiErr(err, t.acct, "reading service "+h.subtenant+"/"+h.service)
	default:
		if err := t.c.DeleteVolume(ctx, h.subtenant, ds, h.volume, true); err != nil && !api.IsNotFound(err) {
			return nil, apiErr(err, t.acct, "deleting volume "+h.String())
		}
	}
	// Only the subsystem named after the volume is the driver's: a static
	// volume's may be shared. Without force it goes only once empty.
	err = t.c.DeleteSubsystem(ctx, h.subtenant, h.volume, false)
	switch {
	case err == nil, api.IsNotFound(err):
	case api.IsConflict(err):
		d.log.Warn("kept subsystem: other namespaces still use it", "subsystem", h.subtenant+"/"+h.volume, "error", err)
	default:
		return nil, apiErr(err, t.acct, "deleting NVMe-oF subsystem "+h.subtenant+"/"+h.volume)
	}
	return &csi.DeleteVolumeResponse{}, nil
}
