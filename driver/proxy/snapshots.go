package proxy

import (
	"context"
	"fmt"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/switchyard-csi/switchyard/driver/echo"
)

func (p *Controller) CreateSnapshot(ctx context.Context, req *csipb.CreateSnapshotRequest) (*csipb.CreateSnapshotResponse, error) {
	if req.GetName() == "" {
		return nil, status.Error(codes.InvalidArgument, "CreateSnapshot: name is required")
	}
	if req.GetSourceVolumeId() == "" {
		return nil, status.Error(codes.InvalidArgument, "CreateSnapshot: source_volume_id is required")
	}
	return onVolume(ctx, p, "CreateSnapshot", req.GetSourceVolumeId(), func(l *Lease, id string) (*csipb.CreateSnapshotResponse, error) {
		fwd := proto.Clone(req).(*csipb.CreateSnapshotRequest)
		fwd.SourceVolumeId = id
		resp, err := l.Driver.CreateSnapshot(ctx, fwd)
		if err != nil {
			return nil, err
		}
		s := resp.GetSnapshot()
		handle := Decorate(SnapshotPrefix, l.Name, s.GetSnapshotId())
		if len(handle) > MaxHandleLen {
			msg := fmt.Sprintf("the snapshot handle %q would be %d bytes; CSI allows %d. Use a shorter connection name (the backend id alone is %d bytes)",
				handle, len(handle), MaxHandleLen, len(s.GetSnapshotId()))
			if _, derr := l.Driver.DeleteSnapshot(ctx, &csipb.DeleteSnapshotRequest{SnapshotId: s.GetSnapshotId()}); derr != nil {
				msg += fmt.Sprintf("; removing the backend snapshot failed too: %v", status.Convert(derr).Message())
			}
			return nil, status.Error(codes.InvalidArgument, msg)
		}
		s.SnapshotId = handle
		s.SourceVolumeId = req.GetSourceVolumeId()
		return resp, nil
	})
}

func (p *Controller) DeleteSnapshot(ctx context.Context, req *csipb.DeleteSnapshotRequest) (*csipb.DeleteSnapshotResponse, error) {
	if req.GetSnapshotId() == "" {
		return nil, status.Error(codes.InvalidArgument, "DeleteSnapshot: snapshot_id is required")
	}
	conn, id, ok := p.snapshot(req.GetSnapshotId())
	if !ok {
		return &csipb.DeleteSnapshotResponse{}, nil
	}
	l, err := p.conns.Acquire(ctx, conn, false)
	if err != nil {
		return nil, err
	}
	defer l.Release()
	fwd := proto.Clone(req).(*csipb.DeleteSnapshotRequest)
	fwd.SnapshotId = id
	resp, err := l.Driver.DeleteSnapshot(ctx, fwd)
	if err != nil {
		return nil, backendErr(l, "DeleteSnapshot", err)
	}
	return resp, nil
}

func (p *Controller) GetSnapshot(ctx context.Context, req *csipb.GetSnapshotRequest) (*csipb.GetSnapshotResponse, error) {
	if req.GetSnapshotId() == "" {
		return nil, status.Error(codes.InvalidArgument, "GetSnapshot: snapshot_id is required")
	}
	conn, id, ok := p.snapshot(req.GetSnapshotId())
	if !ok {
		return nil, status.Errorf(codes.NotFound, "GetSnapshot: snapshot %s does not exist (not a handle of this driver)", echo.Quote(req.GetSnapshotId()))
	}
	l, err := p.conns.Acquire(ctx, conn, false)
	if err != nil {
		return nil, err
	}
	defer l.Release()
	fwd := proto.Clone(req).(*csipb.GetSnapshotRequest)
	fwd.SnapshotId = id
	resp, err := l.Driver.GetSnapshot(ctx, fwd)
	if status.Code(err) == codes.Unimplemented {
		// GET_SNAPSHOT is advertised for every connection: a backend that
		// only lists snapshots answers through its list.
		resp, err = getByList(ctx, l, id)
	}
	if err != nil {
		return nil, backendErr(l, "GetSnapshot", err)
	}
	decorateSnapshot(l.Name, resp.GetSnapshot())
	return resp, nil
}

func decorateSnapshot(conn string, s *csipb.Snapshot) {
	if s == nil {
		return
	}
	s.SnapshotId = Decorate(SnapshotPrefix, conn, s.GetSnapshotId())
	if s.GetSourceVolumeId() != "" {
		s.SourceVolumeId = Decorate(VolumePrefix, conn, s.GetSourceVolumeId())
	}
}

func getByList(ctx context.Context, l *Lease, id string) (*csipb.GetSnapshotResponse, error) {
	list, err := l.Driver.ListSnapshots(ctx, &csipb.ListSnapshotsRequest{SnapshotId: id})
	if err != nil {
		return nil, err
	}
	if len(list.GetEntries()) == 0 {
		return nil, status.Errorf(codes.NotFound, "snapshot %s does not exist", id)
	}
	return &csipb.GetSnapshotResponse{Snapshot: list.GetEntries()[0].GetSnapshot()}, nil
}
