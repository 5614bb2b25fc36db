package infinia

import (
	"context"

	"github.com/switchyard-csi/switchyard/driver/infinia/api"
)

// volumeRead is the answer to reading the volume a create names: the
// volume, or the error (NOT_FOUND: it is to be made).
type volumeRead struct {
	vol *api.Volume
	err error
}

// readForCreate reads the service a create (or FindVolume) names and the
// volume it would make. The volume lives in the service's dataset; once a
// service has been read its dataset is known (a service never moves), so
// both reads go at once and the caller waits one round trip for them. The
// service is still read every time: a deleted or retyped service must
// fail the create at once and clearly. Should the service answer another
// dataset than the remembered one, the volume is read again there. On a
// service error the volume's answer is dropped.
func (d *Driver) readForCreate(ctx context.Context, t target, p volParams) (*api.Service, volumeRead, error) {
	h := t.h
	ds, known := d.datasets.Load(p.acct.key + "\x00" + p.subtenant + "/" + p.service)
	var early chan volumeRead
	if known {
		early = make(chan volumeRead, 1)
		go func() {
			v, err := t.c.GetVolume(ctx, h.subtenant, ds.(string), h.volume)
			early <- volumeRead{v, err}
		}()
	}
	svc, err := d.service(ctx, t.c, p.acct, p.subtenant, p.service)
	var read volumeRead
	if early != nil {
		read = <-early // always waited for: no read outlives the create
	}
	if err != nil {
		return nil, volumeRead{}, err
	}
	if !known || svc.DatasetName() != ds.(string) {
		v, err := t.c.GetVolume(ctx, h.subtenant, svc.DatasetName(), h.volume)
		read = volumeRead{v, err}
	}
	return svc, read, nil
}
