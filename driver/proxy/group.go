package proxy

// Volume group snapshots through the proxy. A group lives on one
// connection (one backend, so one atomic snapshot command): its handle is
// `g:<connection>/<backend group id>`, its members' handles are ordinary
// snapshot handles `s:<connection>/<backend snapshot id>`. Members on
// several connections are FAILED_PRECONDITION naming them per connection;
// a connection whose backend cannot take atomic group snapshots answers
// INVALID_ARGUMENT, never a group made of separate snapshots.

import (
	"context"
	"fmt"
	"sort"
	"strings"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/switchyard-csi/switchyard/driver/echo"
)

// GroupPrefix marks a group snapshot handle.
const GroupPrefix = "g:"

// groupProvider is a backend that may serve group snapshots (nil: it
// cannot take them atomically).
type groupProvider interface {
	GroupController() csipb.GroupControllerServer
}

// Group is the proxy's GroupController service.
type Group struct {
	csipb.UnimplementedGroupControllerServer
	p *Controller
}

// GroupController serves group snapshots for every connection whose
// backend can take them.
func (p *Controller) GroupController() csipb.GroupControllerServer { return &Group{p: p} }

func (*Group) GroupControllerGetCapabilities(context.Context, *csipb.GroupControllerGetCapabilitiesRequest) (*csipb.GroupControllerGetCapabilitiesResponse, error) {
	return &csipb.GroupControllerGetCapabilitiesResponse{Capabilities: []*csipb.GroupControllerServiceCapability{{
		Type: &csipb.GroupControllerServiceCapability_Rpc{Rpc: &csipb.GroupControllerServiceCapability_RPC{
			Type: csipb.GroupControllerServiceCapability_RPC_CREATE_DELETE_GET_VOLUME_GROUP_SNAPSHOT}}}}}, nil
}

// backendGroup is the connection's group service, or INVALID_ARGUMENT
// saying the connection has none.
func backendGroup(l *Lease, method string) (csipb.GroupControllerServer, error) {
	if gp, ok := l.Driver.(groupProvider); ok {
		if g := gp.GroupController(); g != nil {
			return g, nil
		}
	}
	return nil, status.Errorf(codes.InvalidArgument, "%s: connection %s (driver %s) does not support volume group snapshots: it cannot snapshot several volumes atomically", method, l.Name, l.Type.Name)
}

func (g *Group) CreateVolumeGroupSnapshot(ctx context.Context, req *csipb.CreateVolumeGroupSnapshotRequest) (*csipb.CreateVolumeGroupSnapshotResponse, error) {
	const method = "CreateVolumeGroupSnapshot"
	if req.GetName() == "" {
		return nil, status.Errorf(codes.InvalidArgument, "%s: name is required", method)
	}
	if len(req.GetSourceVolumeIds()) == 0 {
		return nil, status.Errorf(codes.InvalidArgument, "%s: source_volume_ids is required", method)
	}
	byConn := map[string][]string{}
	ids := make([]string, 0, len(req.GetSourceVolumeIds()))
	var conn string
	for _, h := range req.GetSourceVolumeIds() {
		c, id, ok := g.p.volume(h)
		if !ok {
			return nil, status.Errorf(codes.NotFound, "%s: volume %s does not exist (not a handle of this driver)", method, echo.Quote(h))
		}
		byConn[c] = append(byConn[c], h)
		ids = append(ids, id)
		conn = c
	}
	if len(byConn) > 1 {
		var parts []string
		for c, hs := range byConn {
			parts = append(parts, fmt.Sprintf("connection %s: %s", c, strings.Join(hs, ", ")))
		}
		sort.Strings(parts)
		return nil, status.Errorf(codes.FailedPrecondition, "%s: a group snapshot is taken on one connection, atomically; the volumes are on %d connections (%s)", method, len(byConn), strings.Join(parts, "; "))
	}
	l, err := g.p.conns.Acquire(ctx, conn, false)
	if err != nil {
		return nil, err
	}
	defer l.Release()
	bg, err := backendGroup(l, method)
	if err != nil {
		return nil, err
	}
	fwd := proto.Clone(req).(*csipb.CreateVolumeGroupSnapshotRequest)
	fwd.SourceVolumeIds = ids
	resp, err := bg.CreateVolumeGroupSnapshot(ctx, fwd)
	if err != nil {
		return nil, backendErr(l, method, err)
	}
	gs := resp.GetGroupSnapshot()
	realID := gs.GetGroupSnapshotId()
	if err := decorateGroup(conn, gs); err != nil {
		if _, derr := bg.DeleteVolumeGroupSnapshot(ctx, &csipb.DeleteVolumeGroupSnapshotRequest{GroupSnapshotId: realID}); derr != nil {
			return nil, status.Errorf(codes.InvalidArgument, "%s: %v; removing the backend group %s failed too: %v", method, err, realID, status.Convert(derr).Message())
		}
		return nil, status.Errorf(codes.InvalidArgument, "%s: %v", method, err)
	}
	return resp, nil
}

// decorateGroup turns backend ids into proxy handles; a handle too long
// for CSI is an error (the caller removes the group).
func decorateGroup(conn string, gs *csipb.VolumeGroupSnapshot) error {
	if gs == nil {
		return nil
	}
	h := Decorate(GroupPrefix, conn, gs.GetGroupSnapshotId())
	if len(h) > MaxHandleLen {
		return fmt.Errorf("connection %s: the group snapshot handle %q would be %d bytes; CSI allows %d. Use a shorter connection name", conn, h, len(h), MaxHandleLen)
	}
	gs.GroupSnapshotId = h
	for _, s := range gs.GetSnapshots() {
		decorateSnapshot(conn, s)
		if len(s.GetSnapshotId()) > MaxHandleLen {
			return fmt.Errorf("connection %s: the snapshot handle %q would be %d bytes; CSI allows %d. Use a shorter connection name", conn, s.GetSnapshotId(), len(s.GetSnapshotId()), MaxHandleLen)
		}
		s.GroupSnapshotId = h
	}
	return nil
}

// realSnapshotIDs swaps the members' handles for backend ids; a member on
// another connection (or no handle of this driver) is a mismatch.
func (g *Group) realSnapshotIDs(method, conn string, handles []string) ([]string, error) {
	out := make([]string, 0, len(handles))
	for _, h := range handles {
		c, id, ok := g.p.snapshot(h)
		if !ok || c != conn {
			return nil, status.Errorf(codes.InvalidArgument, "%s: snapshot %s is not a member of a group on connection %s", method, echo.Quote(h), conn)
		}
		out = append(out, id)
	}
	return out, nil
}

func (g *Group) GetVolumeGroupSnapshot(ctx context.Context, req *csipb.GetVolumeGroupSnapshotRequest) (*csipb.GetVolumeGroupSnapshotResponse, error) {
	const method = "GetVolumeGroupSnapshot"
	if req.GetGroupSnapshotId() == "" {
		return nil, status.Errorf(codes.InvalidArgument, "%s: group_snapshot_id is required", method)
	}
	conn, id, ok := Parse(GroupPrefix, req.GetGroupSnapshotId())
	if !ok {
		return nil, status.Errorf(codes.NotFound, "%s: group snapshot %s does not exist (not a handle of this driver)", method, echo.Quote(req.GetGroupSnapshotId()))
	}
	resp, err := onGroupBackend(ctx, g, method, conn, req.GetSnapshotIds(), func(bg csipb.GroupControllerServer, ids []string) (*csipb.GetVolumeGroupSnapshotResponse, error) {
		fwd := proto.Clone(req).(*csipb.GetVolumeGroupSnapshotRequest)
		fwd.GroupSnapshotId, fwd.SnapshotIds = id, ids
		return bg.GetVolumeGroupSnapshot(ctx, fwd)
	})
	if err != nil {
		return nil, err
	}
	if err := decorateGroup(conn, resp.GetGroupSnapshot()); err != nil {
		return nil, status.Errorf(codes.Internal, "%s: %v", method, err)
	}
	return resp, nil
}

func (g *Group) DeleteVolumeGroupSnapshot(ctx context.Context, req *csipb.DeleteVolumeGroupSnapshotRequest) (*csipb.DeleteVolumeGroupSnapshotResponse, error) {
	const method = "DeleteVolumeGroupSnapshot"
	if req.GetGroupSnapshotId() == "" {
		return nil, status.Errorf(codes.InvalidArgument, "%s: group_snapshot_id is required", method)
	}
	conn, id, ok := Parse(GroupPrefix, req.GetGroupSnapshotId())
	if !ok {
		g.p.log.Info("group snapshot handle is not a proxy handle; probably a group of another driver", "group_snapshot_id", req.GetGroupSnapshotId())
		return &csipb.DeleteVolumeGroupSnapshotResponse{}, nil
	}
	return onGroupBackend(ctx, g, method, conn, req.GetSnapshotIds(), func(bg csipb.GroupControllerServer, ids []string) (*csipb.DeleteVolumeGroupSnapshotResponse, error) {
		fwd := proto.Clone(req).(*csipb.DeleteVolumeGroupSnapshotRequest)
		fwd.GroupSnapshotId, fwd.SnapshotIds = id, ids
		return bg.DeleteVolumeGroupSnapshot(ctx, fwd)
	})
}

// onGroupBackend is the common path of Get and Delete: the members'
// handles made backend ids, the connection leased, its group controller
// called by fn with them; a backend error names the connection.
func onGroupBackend[R any](ctx context.Context, g *Group, method, conn string, handles []string, fn func(csipb.GroupControllerServer, []string) (R, error)) (R, error) {
	var zero R
	ids, err := g.realSnapshotIDs(method, conn, handles)
	if err != nil {
		return zero, err
	}
	l, err := g.p.conns.Acquire(ctx, conn, false)
	if err != nil {
		return zero, err
	}
	defer l.Release()
	bg, err := backendGroup(l, method)
	if err != nil {
		return zero, err
	}
	resp, err := fn(bg, ids)
	if err != nil {
		return zero, backendErr(l, method, err)
	}
	return resp, nil
}
