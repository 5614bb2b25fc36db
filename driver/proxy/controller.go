package proxy

import (
	"context"
	"fmt"
	"log/slog"
	"math"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/switchyard-csi/switchyard/driver/echo"
	"github.com/switchyard-csi/switchyard/driver/keylock"
)

// ConnectionParameter is the StorageClass parameter naming the connection.
const ConnectionParameter = "connection"

// Controller is the proxy's controller service: it resolves the connection
// of every call, swaps the proxy handle for the backend's own id, calls the
// backend and decorates what comes back.
type Controller struct {
	csipb.UnimplementedControllerServer
	conns *Connections
	set   *Settings
	caps  []*csipb.ControllerServiceCapability
	log   *slog.Logger
	// setLocks serialise creates of one name across a connection set (see
	// createInSet): the lookup on every member and the create are one step.
	setLocks keylock.Set
	// copies are the cross-connection copies running or uncollected.
	copies copyJobs
}

// NewController serves calls through conns. caps are the advertised
// controller capabilities (one set for every connection).
func NewController(conns *Connections, s *Settings, caps []*csipb.ControllerServiceCapability, log *slog.Logger) *Controller {
	if log == nil {
		log = slog.Default()
	}
	return &Controller{conns: conns, set: s, caps: caps, log: log}
}

// backendErr passes a backend's status on with the connection named, and
// turns "not implemented" into INVALID_ARGUMENT: UNIMPLEMENTED would make
// the CO believe no connection supports the call.
func backendErr(l *Lease, method string, err error) error {
	st := status.Convert(err)
	if st.Code() == codes.Unimplemented {
		return status.Errorf(codes.InvalidArgument, "connection %s (driver %s) does not support %s", l.Name, l.Type.Name, method)
	}
	return status.Errorf(st.Code(), "connection %s: %s", l.Name, st.Message())
}

// volume resolves a volume handle; ok is false when it names no volume.
func (p *Controller) volume(handle string) (conn, id string, ok bool) {
	conn, id, ok = Resolve(VolumePrefix, handle, p.set.DefaultConnection)
	if !ok && handle != "" {
		p.log.Info("volume handle is not a proxy handle; probably a volume of another driver", "volume_id", handle)
	}
	return conn, id, ok
}

func (p *Controller) snapshot(handle string) (conn, id string, ok bool) {
	conn, id, ok = Resolve(SnapshotPrefix, handle, p.set.DefaultConnection)
	if !ok && handle != "" {
		p.log.Info("snapshot handle is not a proxy handle; probably a snapshot of another driver", "snapshot_id", handle)
	}
	return conn, id, ok
}

func (p *Controller) CreateVolume(ctx context.Context, req *csipb.CreateVolumeRequest) (*csipb.CreateVolumeResponse, error) {
	if req.GetName() == "" {
		return nil, status.Error(codes.InvalidArgument, "CreateVolume: name is required")
	}
	spec, isSet, err := parseSetSpec(req.GetParameters())
	if err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "CreateVolume: %v", err)
	}
	if isSet {
		return p.createInSet(ctx, req, spec)
	}
	conn := req.GetParameters()[ConnectionParameter]
	if conn == "" {
		conn = p.set.DefaultConnection
	}
	if conn == "" {
		return nil, status.Errorf(codes.InvalidArgument, "CreateVolume: the StorageClass parameter %q (or %q for a set) is required: it names the connection file <connection>.yaml in %s", ConnectionParameter, ConnectionsParameter, p.set.ConfigFolder)
	}
	if err := CheckConnectionName(conn); err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "CreateVolume: parameter %s: %v", ConnectionParameter, err)
	}
	if src := req.GetVolumeContentSource(); src != nil {
		// Checked before the connection is built: a bad source costs nothing.
		if _, err := p.realSource(proto.Clone(src).(*csipb.VolumeContentSource)); err != nil {
			return nil, err
		}
	}
	l, err := p.conns.Acquire(ctx, conn, true)
	if err != nil {
		return nil, err
	}
	defer l.Release()
	return p.createOn(ctx, l, req)
}

// undoTooLong removes a volume whose decorated handle CSI cannot carry, so
// a failed create leaves nothing behind on the backend.
func (p *Controller) undoTooLong(ctx context.Context, l *Lease, realID, handle string) error {
	msg := fmt.Sprintf("connection %s: the volume handle %q would be %d bytes; CSI allows %d. Use a shorter connection name (the backend id alone is %d bytes)",
		l.Name, handle, len(handle), MaxHandleLen, len(realID))
	if _, err := l.Driver.DeleteVolume(ctx, &csipb.DeleteVolumeRequest{VolumeId: realID}); err != nil {
		p.log.Error("could not remove a volume whose handle is too long", "connection", l.Name, "volume", realID, "error", err)
		return status.Errorf(codes.InvalidArgument, "%s; removing the backend volume %s failed too: %v", msg, realID, status.Convert(err).Message())
	}
	return status.Error(codes.InvalidArgument, msg)
}

// realSource swaps the proxy handle of a clone or restore source for the
// backend's id and returns the source's connection. A source on another
// connection is left for createAcross.
func (p *Controller) realSource(src *csipb.VolumeContentSource) (string, error) {
	var kind, handle, srcConn, id string
	var ok bool
	switch {
	case src.GetSnapshot() != nil:
		kind, handle = "snapshot", src.GetSnapshot().GetSnapshotId()
		srcConn, id, ok = p.snapshot(handle)
	case src.GetVolume() != nil:
		kind, handle = "volume", src.GetVolume().GetVolumeId()
		srcConn, id, ok = p.volume(handle)
	default:
		return "", status.Error(codes.InvalidArgument, "CreateVolume: volume_content_source names neither a snapshot nor a volume")
	}
	if !ok {
		return "", status.Errorf(codes.NotFound, "CreateVolume: source %s %s does not exist", kind, echo.Quote(handle))
	}
	if s := src.GetSnapshot(); s != nil {
		s.SnapshotId = id
	} else {
		src.GetVolume().VolumeId = id
	}
	return srcConn, nil
}

func decorateSource(conn string, src *csipb.VolumeContentSource) {
	if s := src.GetSnapshot(); s != nil {
		s.SnapshotId = Decorate(SnapshotPrefix, conn, s.GetSnapshotId())
	}
	if v := src.GetVolume(); v != nil {
		v.VolumeId = Decorate(VolumePrefix, conn, v.GetVolumeId())
	}
}

func (p *Controller) DeleteVolume(ctx context.Context, req *csipb.DeleteVolumeRequest) (*csipb.DeleteVolumeResponse, error) {
	if req.GetVolumeId() == "" {
		return nil, status.Error(codes.InvalidArgument, "DeleteVolume: volume_id is required")
	}
	conn, id, ok := p.volume(req.GetVolumeId())
	if !ok {
		return &csipb.DeleteVolumeResponse{}, nil // names no volume: nothing to delete
	}
	if err := p.cancelCopyTo(ctx, conn, id); err != nil {
		return nil, err
	}
	l, err := p.conns.Acquire(ctx, conn, false)
	if err != nil {
		return nil, err
	}
	defer l.Release()
	fwd := proto.Clone(req).(*csipb.DeleteVolumeRequest)
	fwd.VolumeId = id
	resp, err := l.Driver.DeleteVolume(ctx, fwd)
	if err != nil {
		return nil, backendErr(l, "DeleteVolume", err)
	}
	return resp, nil
}

// onVolume runs a call that needs an existing volume: a handle that names
// none is NOT_FOUND, as CSI says.
func onVolume[R any](ctx context.Context, p *Controller, method, handle string, call func(l *Lease, id string) (R, error)) (R, error) {
	var zero R
	if handle == "" {
		return zero, status.Errorf(codes.InvalidArgument, "%s: volume_id is required", method)
	}
	conn, id, ok := p.volume(handle)
	if !ok {
		return zero, status.Errorf(codes.NotFound, "%s: volume %s does not exist (not a handle of this driver)", method, echo.Quote(handle))
	}
	l, err := p.conns.Acquire(ctx, conn, false)
	if err != nil {
		return zero, err
	}
	defer l.Release()
	r, err := call(l, id)
	if err != nil {
		return zero, backendErr(l, method, err)
	}
	return r, nil
}

func (p *Controller) ControllerExpandVolume(ctx context.Context, req *csipb.ControllerExpandVolumeRequest) (*csipb.ControllerExpandVolumeResponse, error) {
	return onVolume(ctx, p, "ControllerExpandVolume", req.GetVolumeId(), func(l *Lease, id string) (*csipb.ControllerExpandVolumeResponse, error) {
		fwd := proto.Clone(req).(*csipb.ControllerExpandVolumeRequest)
		fwd.VolumeId = id
		return l.Driver.ControllerExpandVolume(ctx, fwd)
	})
}

func (p *Controller) ValidateVolumeCapabilities(ctx context.Context, req *csipb.ValidateVolumeCapabilitiesRequest) (*csipb.ValidateVolumeCapabilitiesResponse, error) {
	return onVolume(ctx, p, "ValidateVolumeCapabilities", req.GetVolumeId(), func(l *Lease, id string) (*csipb.ValidateVolumeCapabilitiesResponse, error) {
		// Swap only the id: the request is not modified, so no deep copy on
		// this hot path.
		fwd := &csipb.ValidateVolumeCapabilitiesRequest{VolumeId: id, VolumeContext: req.GetVolumeContext(),
			VolumeCapabilities: req.GetVolumeCapabilities(), Parameters: req.GetParameters(), Secrets: req.GetSecrets(), MutableParameters: req.GetMutableParameters()}
		return l.Driver.ValidateVolumeCapabilities(ctx, fwd)
	})
}

func (p *Controller) ControllerGetVolume(ctx context.Context, req *csipb.ControllerGetVolumeRequest) (*csipb.ControllerGetVolumeResponse, error) {
	return onVolume(ctx, p, "ControllerGetVolume", req.GetVolumeId(), func(l *Lease, id string) (*csipb.ControllerGetVolumeResponse, error) {
		resp, err := l.Driver.ControllerGetVolume(ctx, &csipb.ControllerGetVolumeRequest{VolumeId: id})
		if err == nil && resp.GetVolume() != nil {
			resp.Volume.VolumeId = req.GetVolumeId()
			decorateSource(l.Name, resp.Volume.GetContentSource())
		}
		return resp, err
	})
}

func (p *Controller) ControllerModifyVolume(ctx context.Context, req *csipb.ControllerModifyVolumeRequest) (*csipb.ControllerModifyVolumeResponse, error) {
	return p.modifyVolume(ctx, req)
}

func (p *Controller) ControllerPublishVolume(ctx context.Context, req *csipb.ControllerPublishVolumeRequest) (*csipb.ControllerPublishVolumeResponse, error) {
	// CSI checks arguments before existence: a missing node id or
	// capability is INVALID_ARGUMENT even for a handle no connection knows.
	if req.GetVolumeId() != "" && req.GetNodeId() == "" {
		return nil, status.Error(codes.InvalidArgument, "ControllerPublishVolume: node_id is required")
	}
	if req.GetVolumeId() != "" && req.GetVolumeCapability() == nil {
		return nil, status.Error(codes.InvalidArgument, "ControllerPublishVolume: volume_capability is required")
	}
	return onVolume(ctx, p, "ControllerPublishVolume", req.GetVolumeId(), func(l *Lease, id string) (*csipb.ControllerPublishVolumeResponse, error) {
		fwd := proto.Clone(req).(*csipb.ControllerPublishVolumeRequest)
		fwd.VolumeId = id
		resp, err := l.Driver.ControllerPublishVolume(ctx, fwd)
		if status.Code(err) != codes.Unimplemented {
			return resp, err
		}
		// The proxy advertises PUBLISH_UNPUBLISH_VOLUME for all connections
		// when one backend needs it (Infinia grants host NQNs); the others
		// have nothing to attach (publish.go).
		return p.publishNothingToAttach(ctx, l, id, req)
	})
}

func (p *Controller) ControllerUnpublishVolume(ctx context.Context, req *csipb.ControllerUnpublishVolumeRequest) (*csipb.ControllerUnpublishVolumeResponse, error) {
	if req.GetVolumeId() == "" {
		return nil, status.Error(codes.InvalidArgument, "ControllerUnpublishVolume: volume_id is required")
	}
	if _, _, ok := p.volume(req.GetVolumeId()); !ok {
		return &csipb.ControllerUnpublishVolumeResponse{}, nil // CSI: unpublishing a volume that does not exist succeeds
	}
	return onVolume(ctx, p, "ControllerUnpublishVolume", req.GetVolumeId(), func(l *Lease, id string) (*csipb.ControllerUnpublishVolumeResponse, error) {
		fwd := proto.Clone(req).(*csipb.ControllerUnpublishVolumeRequest)
		fwd.VolumeId = id
		resp, err := l.Driver.ControllerUnpublishVolume(ctx, fwd)
		if status.Code(err) == codes.Unimplemented { // nothing was attached (see ControllerPublishVolume)
			return &csipb.ControllerUnpublishVolumeResponse{}, nil
		}
		return resp, err
	})
}

// Unlimited is what GetCapacity reports for a backend that cannot tell.
const Unlimited = math.MaxInt64

func (p *Controller) GetCapacity(ctx context.Context, req *csipb.GetCapacityRequest) (*csipb.GetCapacityResponse, error) {
	spec, isSet, err := parseSetSpec(req.GetParameters())
	if err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "GetCapacity: %v", err)
	}
	if isSet {
		return p.setCapacity(ctx, req, spec)
	}
	conn := req.GetParameters()[ConnectionParameter]
	if conn == "" {
		conn = p.set.DefaultConnection
	}
	if conn == "" {
		// No connection, no volume can be made: zero, not an error (the
		// external-provisioner and csi-sanity ask without parameters).
		return &csipb.GetCapacityResponse{AvailableCapacity: 0}, nil
	}
	l, err := p.conns.Acquire(ctx, conn, true)
	if err != nil {
		return nil, err
	}
	defer l.Release()
	resp, err := l.Driver.GetCapacity(ctx, req)
	if status.Code(err) == codes.Unimplemented {
		return &csipb.GetCapacityResponse{AvailableCapacity: Unlimited}, nil
	}
	if err != nil {
		return nil, backendErr(l, "GetCapacity", err)
	}
	return resp, nil
}

func (p *Controller) ControllerGetCapabilities(context.Context, *csipb.ControllerGetCapabilitiesRequest) (*csipb.ControllerGetCapabilitiesResponse, error) {
	return &csipb.ControllerGetCapabilitiesResponse{Capabilities: p.caps}, nil
}
