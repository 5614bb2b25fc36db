package infinia

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/driver/backend"
	"github.com/switchyard-csi/switchyard/driver/infinia/api"
)

const (
	// blockSize is the block size of every volume the driver makes.
	blockSize = 4096
)

// CreateVolume makes (or finds) the volume named after the request: its
// own subsystem, the volume as a namespace of it, one listener per
// instance. Every step is idempotent, so a retry completes a call that was
// cut short.
func (d *Driver) CreateVolume(ctx context.Context, req *csi.CreateVolumeRequest) (*csi.CreateVolumeResponse, error) {
	name := req.GetName()
	if name == "" {
		return nil, status.Error(codes.InvalidArgument, "name is required")
	}
	if why := checkCapabilities(req.GetVolumeCapabilities()); why != "" {
		return nil, status.Error(codes.InvalidArgument, why)
	}
	if req.GetVolumeContentSource() != nil {
		return nil, status.Errorf(codes.InvalidArgument, "%s: snapshots and clones are not offered (as in DDN's driver): create the volume without a data source", DriverName)
	}
	p, err := d.parseParams(d.accounts.Load(), req.GetParameters())
	if err != nil {
		return nil, err
	}
	if err := checkRequisite(p.acct, req.GetAccessibilityRequirements()); err != nil {
		return nil, err
	}
	size, err := backend.Capacity(req.GetCapacityRange(), blockSize)
	if err != nil {
		return nil, err
	}
	h, err := newHandle(p.acct.key, p.subtenant, p.service, name)
	if err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "%s: %v", DriverName, err)
	}
	c, err := d.client(p.acct, req.GetSecrets())
	if err != nil {
		return nil, err
	}
	t := target{h: h, acct: p.acct, c: c}

	svc, read, err := d.readForCreate(ctx, t, p)
	if api.IsNotFound(err) {
		return nil, invalidParam(paramService, "%s/%s does not exist for account %s (%v)", p.subtenant, p.service, p.acct.key, err)
	}
	if err != nil {
		return nil, apiErr(err, p.acct, "reading service "+p.subtenant+"/"+p.service)
	}
	if svc.Type != "" && svc.Type != "block" {
		return nil, invalidParam(paramService, "%s/%s is a %s service; %s needs a block service", p.subtenant, p.service, svc.Type, DriverName)
	}
	instances := p.instances
	if len(instances) == 0 {
		instances = svc.Instances
	}
	if len(instances) == 0 {
		return nil, status.Errorf(codes.FailedPrecondition, "%s: no instance to expose volume %s on: set the instances parameter or accounts.%s.default_instance_ids (service %s/%s lists none)",
			DriverName, name, p.acct.key, p.subtenant, p.service)
	}
	ds := svc.DatasetName()

	vol, created, err := d.findOrMake(ctx, t, ds, size, p, instances, req, read)
	if err != nil {
		return nil, err
	}
	sub, inst, err := exposeAll(ctx, t, ds, vol, instances)
	if err == nil && sub == nil && len(instances) > 1 {
		// No answer showed the subsystem complete: read it, and expose
		// again, one at a time, on any instance it does not list (see
		// exposeMissing). sub stays nil, so the context reads it anew.
		var s *api.Subsystem
		if s, err = d.subsystemOf(ctx, t, vol); err != nil {
			return nil, err
		}
		var again bool
		if again, inst, err = exposeMissing(ctx, t, ds, s, instances); err == nil && !again {
			sub = s
		}
	}
	if err != nil {
		if code := api.StatusCode(err); code == http.StatusBadRequest || code == http.StatusNotFound {
			if created {
				d.rollback(t, ds)
			}
			return nil, invalidParam(paramInstances, "cannot expose volume %s on instance %d: %v", name, inst, err)
		}
		return nil, apiErr(err, p.acct, fmt.Sprintf("exposing volume %s on instance %d", h, inst))
	}
	var vc map[string]string
	if sub != nil {
		vc, err = contextFrom(vol, sub, ownershipOf(p.acct, vol), p.dataPort)
	} else {
		vc, err = d.contextOf(ctx, t, vol, ownershipOf(p.acct, vol), p.dataPort)
	}
	if err != nil {
		return nil, err
	}
	return &csi.CreateVolumeResponse{Volume: &csi.Volume{
		VolumeId:           h.String(),
		CapacityBytes:      vol.Size(),
		VolumeContext:      vc,
		AccessibleTopology: topology(p.acct),
	}}, nil
}

// findOrMake returns the existing volume when it fits the request, or
// makes the subsystem and the volume. created reports the latter.
func (d *Driver) findOrMake(ctx context.Context, t target, ds string, size int64, p volParams, instances []int, req *csi.CreateVolumeRequest, read volumeRead) (*api.Volume, bool, error) {
	c, h := t.c, t.h
	vol, err := read.vol, read.err
	switch {
	case err == nil:
		return vol, false, d.checkExisting(vol, h, req)
	case !api.IsNotFound(err):
		return nil, false, apiErr(err, p.acct, "reading volume "+h.String())
	}
	_, err = c.CreateSubsystem(ctx, h.subtenant, h.volume, api.NewSubsystem{Transport: "TCP", ReqInstances: instances, Port: p.dataPort})
	if code := api.StatusCode(err); code == http.StatusBadRequest || code == http.StatusNotFound {
		// The subtenant exists (its service was just read): what Infinia
		// refuses is the instances or the port the user chose.
		return nil, false, invalidParam(paramInstances, "Infinia refused a subsystem on instances %v, port %d (the instances and dataport parameters, or accounts.%s.default_instance_ids and default_data_port): %v",
			instances, p.dataPort, p.acct.key, err)
	}
	if err != nil && !api.IsConflict(err) {
		return nil, false, apiErr(err, p.acct, "creating NVMe-oF subsystem "+h.subtenant+"/"+h.volume)
	}
	xattrs := map[string]string{xattrName: req.GetName(), xattrProvisioner: "switchyard " + DriverName}
	if p.owner != "" {
		xattrs[xattrOwner], xattrs[xattrGroup] = p.owner, p.group
	}
	if p.perms != "" {
		xattrs[xattrPerms] = p.perms
	}
	vol, err = c.CreateVolume(ctx, h.subtenant, ds, api.NewVolume{
		VolumeName: h.volume, NBlocks: size / blockSize, BlockSize: blockSize,
		NvmfTarget: h.volume, NvmfProp: api.NvmfProp{Transport: "TCP"}, XAttrs: xattrs,
	})
	switch {
	case err == nil:
		if vol.Subsystem == "" {
			vol.Subsystem = h.volume // asked for as nvmfTarget
		}
		return vol, true, nil
	case api.IsConflict(err):
		// Made by a concurrent or earlier call between our read and now.
		vol, err = c.GetVolume(ctx, h.subtenant, ds, h.volume)
		if err != nil {
			return nil, false, apiErr(err, p.acct, "reading volume "+h.String())
		}
		return vol, false, d.checkExisting(vol, h, req)
	}
	d.rollback(t, ds)
	if api.StatusCode(err) == http.StatusInsufficientStorage {
		return nil, false, status.Errorf(codes.ResourceExhausted, "%s account %s: no room for %d bytes in service %s/%s: %v", DriverName, p.acct.key, size, h.subtenant, h.service, err)
	}
	return nil, false, apiErr(err, p.acct, "creating volume "+h.String())
}

// checkExisting decides whether an existing volume answers this request
// (CSI idempotency) or conflicts with it.
func (d *Driver) checkExisting(v *api.Volume, h handle, req *csi.CreateVolumeRequest) error {
	if !backend.Fits(v.Size(), req.GetCapacityRange()) {
		return status.Errorf(codes.AlreadyExists, "volume %s already exists with %d bytes, which does not fit required_bytes %d / limit_bytes %d",
			h, v.Size(), req.GetCapacityRange().GetRequiredBytes(), req.GetCapacityRange().GetLimitBytes())
	}
	if n, ok := v.XAttrs[xattrName].(string); ok && n != "" && n != req.GetName() {
		return status.Errorf(codes.AlreadyExists, "volume %s already exists for request name %q, not %q", h, n, req.GetName())
	}
	return nil
}

// contextOf reads the volume's subsystem and builds its volume_context.
func (d *Driver) contextOf(ctx context.Context, t target, v *api.Volume, o ownership, dataPort int) (map[string]string, error) {
	s, err := d.subsystemOf(ctx, t, v)
	if err != nil {
		return nil, err
	}
	return contextFrom(v, s, o, dataPort)
}

// subsystemOf reads the subsystem that exports v; its errors are gRPC
// statuses.
func (d *Driver) subsystemOf(ctx context.Context, t target, v *api.Volume) (*api.Subsystem, error) {
	sub := v.Subsystem
	if sub == "" {
		return nil, status.Errorf(codes.FailedPrecondition, "%s: volume %s is not exported by any NVMe-oF subsystem: export it on Infinia first", DriverName, t.h)
	}
	s, err := t.c.GetSubsystem(ctx, t.h.subtenant, sub)
	if api.IsNotFound(err) {
		return nil, status.Errorf(codes.FailedPrecondition, "%s: subsystem %s/%s of volume %s does not exist", DriverName, t.h.subtenant, sub, t.h)
	}
	if err != nil {
		return nil, apiErr(err, t.acct, "reading subsystem "+t.h.subtenant+"/"+sub)
	}
	return s, nil
}

// contextFrom builds the volume_context from the volume's subsystem.
func contextFrom(v *api.Volume, s *api.Subsystem, o ownership, dataPort int) (map[string]string, error) {
	vc, err := volumeContext(v, s, o, dataPort)
	if err != nil {
		return nil, status.Errorf(codes.FailedPrecondition, "%s: %v", DriverName, err)
	}
	return vc, nil
}

// rollback removes what a failed creation made, with its own deadline: the
// request's context may be what failed.
func (d *Driver) rollback(t target, ds string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := t.c.DeleteVolume(ctx, t.h.subtenant, ds, t.h.volume, true); err != nil && !api.IsNotFound(err) {
		d.log.Warn("could not remove a half-made volume", "volume", t.h.String(), "error", err)
	}
	if err := t.c.DeleteSubsystem(ctx, t.h.subtenant, t.h.volume, false); err != nil && !api.IsNotFound(err) {
		d.log.Warn("could not remove the subsystem of a half-made volume", "subsystem", t.h.subtenant+"/"+t.h.volume, "error", err)
	}
}
