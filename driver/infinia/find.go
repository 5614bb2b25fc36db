package infinia

import (
	"context"

	"github.com/container-storage-interface/spec/lib/go/csi"

	"github.com/switchyard-csi/switchyard/driver/backend"
	"github.com/switchyard-csi/switchyard/driver/infinia/api"
)

var _ backend.VolumeFinder = (*Driver)(nil)

// FindVolume reports the volume a CreateVolume of req made on this
// system, for the proxy's connection sets: a retried create must find the
// volume on whichever member made it. An Infinia volume id is not the
// name (it carries the account, subtenant and service the parameters
// choose), so the proxy cannot derive it; this reads the volume the
// handle of req names. Parameters this driver would refuse, or a service
// the system does not have, hold no volume: (nil, nil), and the create
// itself then says what is wrong.
func (d *Driver) FindVolume(ctx context.Context, req *csi.CreateVolumeRequest) (*csi.Volume, error) {
	p, h, ok := d.handleFor(req)
	if !ok {
		return nil, nil
	}
	c, err := d.client(p.acct, req.GetSecrets())
	if err != nil {
		return nil, err
	}
	_, read, err := d.readForCreate(ctx, target{h: h, acct: p.acct, c: c}, p)
	if api.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, apiErr(err, p.acct, "reading service "+p.subtenant+"/"+p.service)
	}
	vol, err := read.vol, read.err
	if api.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, apiErr(err, p.acct, "reading volume "+h.String())
	}
	return &csi.Volume{VolumeId: h.String(), CapacityBytes: vol.Size(), AccessibleTopology: topology(p.acct)}, nil
}

// handleFor is the handle a CreateVolume of req would make; false when the
// driver would refuse req's parameters or name.
func (d *Driver) handleFor(req *csi.CreateVolumeRequest) (volParams, handle, bool) {
	p, err := d.parseParams(d.accounts.Load(), req.GetParameters())
	if err != nil {
		return volParams{}, handle{}, false
	}
	h, err := newHandle(p.acct.key, p.subtenant, p.service, req.GetName())
	return p, h, err == nil
}
