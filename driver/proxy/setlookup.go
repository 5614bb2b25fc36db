package proxy

import (
	"context"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/driver/backend"
	"github.com/switchyard-csi/switchyard/driver/volumeid"
)

// holds reports whether a member already has the volume a CreateVolume
// of req's name made. CSI has no lookup by name, so: the backend's own
// FindVolume when it has one; else the id democratic-csi-style backends
// derive from the name, asked through ControllerGetVolume, or
// ValidateVolumeCapabilities for a backend without it. NOT_FOUND is
// absent; any other error is "cannot tell".
func (p *Controller) holds(ctx context.Context, l *Lease, req *csipb.CreateVolumeRequest) (bool, error) {
	if f, ok := l.Driver.(backend.VolumeFinder); ok {
		v, err := f.FindVolume(ctx, req)
		return v != nil, err
	}
	id, ok := derivedID(l, req.GetName())
	if !ok {
		return false, nil // the backend would refuse this name; it cannot hold it
	}
	_, err := l.Driver.ControllerGetVolume(ctx, &csipb.ControllerGetVolumeRequest{VolumeId: id})
	if status.Code(err) == codes.Unimplemented {
		caps := req.GetVolumeCapabilities()
		if len(caps) == 0 {
			caps = []*csipb.VolumeCapability{{AccessType: &csipb.VolumeCapability_Mount{Mount: &csipb.VolumeCapability_MountVolume{}},
				AccessMode: &csipb.VolumeCapability_AccessMode{Mode: csipb.VolumeCapability_AccessMode_SINGLE_NODE_WRITER}}}
		}
		_, err = l.Driver.ValidateVolumeCapabilities(ctx, &csipb.ValidateVolumeCapabilitiesRequest{VolumeId: id, VolumeCapabilities: caps, Parameters: req.GetParameters()})
	}
	switch status.Code(err) {
	case codes.OK:
		return true, nil
	case codes.NotFound:
		return false, nil
	}
	return false, err
}

// derivedID is the id a democratic-csi-style backend gives a volume name:
// the name, hashed when _private.csi.volume.idHash.strategy says so, and
// shortened to the type's longest id.
func derivedID(l *Lease, name string) (string, bool) {
	strategy := ""
	if l.in != nil && l.in.cfg != nil {
		s, _ := l.in.cfg.merged.String("_private.csi.volume.idHash.strategy")
		if st, err := volumeid.ParseStrategy(s); err == nil {
			strategy = st
		}
	}
	limit := l.Type.MaxVolumeIDLen
	if limit < 34 {
		limit = MaxHandleLen
	}
	id, err := volumeid.Volume(name, strategy, limit)
	return id, err == nil
}
