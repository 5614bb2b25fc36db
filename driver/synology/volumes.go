package synology

import (
	"context"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/driver/backend"
	"github.com/switchyard-csi/switchyard/driver/echo"
)

// CreateVolume makes (or finds) the LUN or share named after the request.
// Every step finds what an earlier, cut-short call made, so a retry
// completes it.
func (d *Driver) CreateVolume(ctx context.Context, req *csi.CreateVolumeRequest) (*csi.CreateVolumeResponse, error) {
	if req.GetName() == "" {
		return nil, status.Error(codes.InvalidArgument, "name is required")
	}
	if why := d.checkCaps(req.GetVolumeCapabilities()); why != "" {
		return nil, status.Error(codes.InvalidArgument, why)
	}
	size, err := backend.Capacity(req.GetCapacityRange(), sizeUnit)
	if err != nil {
		return nil, err
	}
	defer d.lock()()
	var vol *csi.Volume
	if d.block() {
		vol, err = d.createLUN(ctx, req, size)
	} else {
		vol, err = d.createShare(ctx, req, size)
	}
	if err != nil {
		return nil, err
	}
	vol.ContentSource = req.GetVolumeContentSource()
	return &csi.CreateVolumeResponse{Volume: vol}, nil
}

// DeleteVolume removes the volume; one that does not exist is gone.
func (d *Driver) DeleteVolume(ctx context.Context, req *csi.DeleteVolumeRequest) (*csi.DeleteVolumeResponse, error) {
	if req.GetVolumeId() == "" {
		return nil, status.Error(codes.InvalidArgument, "volume_id is required")
	}
	defer d.lock()()
	var err error
	if d.block() {
		err = d.deleteLUN(ctx, req.GetVolumeId())
	} else {
		err = d.deleteShare(ctx, req.GetVolumeId())
	}
	if err != nil {
		return nil, err
	}
	return &csi.DeleteVolumeResponse{}, nil
}

// ControllerExpandVolume grows the LUN (the node then grows its file
// system) or the share's quota.
func (d *Driver) ControllerExpandVolume(ctx context.Context, req *csi.ControllerExpandVolumeRequest) (*csi.ControllerExpandVolumeResponse, error) {
	if req.GetVolumeId() == "" {
		return nil, status.Error(codes.InvalidArgument, "volume_id is required")
	}
	if req.GetCapacityRange() == nil {
		return nil, status.Error(codes.InvalidArgument, "capacity_range is required")
	}
	size, err := backend.Capacity(req.GetCapacityRange(), sizeUnit)
	if err != nil {
		return nil, err
	}
	if c := req.GetVolumeCapability(); c != nil {
		if why := d.checkCaps([]*csi.VolumeCapability{c}); why != "" {
			return nil, status.Error(codes.InvalidArgument, why)
		}
	}
	defer d.lock()()
	if d.block() {
		return d.expandLUN(ctx, req.GetVolumeId(), size)
	}
	return d.expandShare(ctx, req.GetVolumeId(), size)
}

// ValidateVolumeCapabilities confirms the capabilities an existing volume
// can serve.
func (d *Driver) ValidateVolumeCapabilities(ctx context.Context, req *csi.ValidateVolumeCapabilitiesRequest) (*csi.ValidateVolumeCapabilitiesResponse, error) {
	if req.GetVolumeId() == "" {
		return nil, status.Error(codes.InvalidArgument, "volume_id is required")
	}
	if len(req.GetVolumeCapabilities()) == 0 {
		return nil, status.Error(codes.InvalidArgument, "volume_capabilities is required")
	}
	var err error
	if d.block() {
		_, err = d.lunOf(ctx, req.GetVolumeId())
	} else {
		_, err = d.shareOf(ctx, req.GetVolumeId())
	}
	if err != nil {
		return nil, err
	}
	if why := d.checkCaps(req.GetVolumeCapabilities()); why != "" {
		return &csi.ValidateVolumeCapabilitiesResponse{Message: why}, nil
	}
	return &csi.ValidateVolumeCapabilitiesResponse{Confirmed: &csi.ValidateVolumeCapabilitiesResponse_Confirmed{
		VolumeContext: req.GetVolumeContext(), VolumeCapabilities: req.GetVolumeCapabilities(), Parameters: req.GetParameters(),
	}}, nil
}

// GetCapacity is the free space of synology.volume (0 for capabilities
// this driver cannot serve).
func (d *Driver) GetCapacity(ctx context.Context, req *csi.GetCapacityRequest) (*csi.GetCapacityResponse, error) {
	if len(req.GetVolumeCapabilities()) > 0 && d.checkCaps(req.GetVolumeCapabilities()) != "" {
		return &csi.GetCapacityResponse{}, nil
	}
	free, err := d.c.FreeBytes(ctx, d.s.location)
	if err != nil {
		return nil, d.dsmErr(err, "reading the free space of synology.volume "+echo.Quote(d.s.location))
	}
	return &csi.GetCapacityResponse{AvailableCapacity: free}, nil
}

// ListVolumes lists the volumes this config made (names with its prefix
// and suffix), sorted by id.
func (d *Driver) ListVolumes(ctx context.Context, req *csi.ListVolumesRequest) (*csi.ListVolumesResponse, error) {
	var all []*csi.ListVolumesResponse_Entry
	var err error
	if d.block() {
		all, err = d.listLUNs(ctx)
	} else {
		all, err = d.listShares(ctx)
	}
	if err != nil {
		return nil, err
	}
	sortVolumes(all)
	entries, next, err := page(all, req.GetStartingToken(), req.GetMaxEntries())
	if err != nil {
		return nil, err
	}
	return &csi.ListVolumesResponse{Entries: entries, NextToken: next}, nil
}

// CreateSnapshot snapshots a LUN or share; the name is the snapshot's
// description, which keeps the call idempotent.
func (d *Driver) CreateSnapshot(ctx context.Context, req *csi.CreateSnapshotRequest) (*csi.CreateSnapshotResponse, error) {
	if req.GetName() == "" {
		return nil, status.Error(codes.InvalidArgument, "name is required")
	}
	if req.GetSourceVolumeId() == "" {
		return nil, status.Error(codes.InvalidArgument, "source_volume_id is required")
	}
	if !snapNameRE.MatchString(req.GetName()) {
		return nil, status.Errorf(codes.InvalidArgument, "snapshot name %s may hold only letters, digits, '_', '-', ':', '.' and '+'", echo.Quote(req.GetName()))
	}
	defer d.lock()()
	var snap *csi.Snapshot
	var err error
	if d.block() {
		snap, err = d.snapshotLUN(ctx, req)
	} else {
		snap, err = d.snapshotShare(ctx, req)
	}
	if err != nil {
		return nil, err
	}
	return &csi.CreateSnapshotResponse{Snapshot: snap}, nil
}

// DeleteSnapshot deletes a snapshot; one that does not exist (or whose
// volume does not) is gone.
func (d *Driver) DeleteSnapshot(ctx context.Context, req *csi.DeleteSnapshotRequest) (*csi.DeleteSnapshotResponse, error) {
	if req.GetSnapshotId() == "" {
		return nil, status.Error(codes.InvalidArgument, "snapshot_id is required")
	}
	defer d.lock()()
	var err error
	if d.block() {
		err = d.deleteLUNSnapshot(ctx, req.GetSnapshotId())
	} else {
		err = d.deleteShareSnapshot(ctx, req.GetSnapshotId())
	}
	if err != nil {
		return nil, err
	}
	return &csi.DeleteSnapshotResponse{}, nil
}

// ListSnapshots lists the snapshots of this config's volumes, sorted by
// id, filtered by snapshot_id or source_volume_id.
func (d *Driver) ListSnapshots(ctx context.Context, req *csi.ListSnapshotsRequest) (*csi.ListSnapshotsResponse, error) {
	var all []*csi.ListSnapshotsResponse_Entry
	var err error
	if d.block() {
		all, err = d.listLUNSnapshots(ctx, req.GetSnapshotId(), req.GetSourceVolumeId())
	} else {
		all, err = d.listShareSnapshots(ctx, req.GetSnapshotId(), req.GetSourceVolumeId())
	}
	if err != nil {
		return nil, err
	}
	sortSnapshots(all)
	entries, next, err := page(all, req.GetStartingToken(), req.GetMaxEntries())
	if err != nil {
		return nil, err
	}
	return &csi.ListSnapshotsResponse{Entries: entries, NextToken: next}, nil
}

// GetSnapshot reads one snapshot (NOT_FOUND when it does not exist).
func (d *Driver) GetSnapshot(ctx context.Context, req *csi.GetSnapshotRequest) (*csi.GetSnapshotResponse, error) {
	if req.GetSnapshotId() == "" {
		return nil, status.Error(codes.InvalidArgument, "snapshot_id is required")
	}
	r, err := d.ListSnapshots(ctx, &csi.ListSnapshotsRequest{SnapshotId: req.GetSnapshotId()})
	if err != nil {
		return nil, err
	}
	if len(r.GetEntries()) == 0 {
		return nil, status.Errorf(codes.NotFound, "snapshot %s does not exist", echo.Quote(req.GetSnapshotId()))
	}
	return &csi.GetSnapshotResponse{Snapshot: r.GetEntries()[0].GetSnapshot()}, nil
}
