package infinia

import (
	"context"
	"strings"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/driver/echo"
	"github.com/switchyard-csi/switchyard/driver/infinia/api"
)

// maxNQNLen is the NVMe limit on qualified names.
const maxNQNLen = 223

// hostNQN reads the node's NVMe host NQN from its node id: through the
// front end's node id parser, or the node id itself when it is an NQN.
func (d *Driver) hostNQN(nodeID string) (string, error) {
	nqn := ""
	var parseErr error
	if d.parseNodeID != nil {
		id, err := d.parseNodeID(nodeID)
		nqn, parseErr = id.NQN, err
	}
	if nqn == "" && strings.HasPrefix(nodeID, "nqn.") {
		nqn, parseErr = nodeID, nil
	}
	switch {
	case parseErr != nil:
		return "", status.Errorf(codes.NotFound, "node id %s cannot be read: %v", echo.Quote(nodeID), parseErr)
	case nqn == "":
		return "", status.Errorf(codes.NotFound, "node id %s carries no NVMe host NQN: enable proxy.nodeId.parts.nqn (the node then reports /etc/nvme/hostnqn)", echo.Quote(nodeID))
	case !strings.HasPrefix(nqn, "nqn.") || len(nqn) > maxNQNLen:
		return "", status.Errorf(codes.NotFound, "node id %q: %q is not an NVMe qualified name (nqn.…, at most %d bytes)", nodeID, nqn, maxNQNLen)
	}
	return nqn, nil
}

// ControllerPublishVolume allows the node's host NQN on the volume's
// subsystem and returns the connection details as publish_context (the
// same keys as volume_context, so a static PersistentVolume without
// volumeAttributes can be staged too). Read-only needs nothing here: the
// node mounts read-only.
func (d *Driver) ControllerPublishVolume(ctx context.Context, req *csi.ControllerPublishVolumeRequest) (*csi.ControllerPublishVolumeResponse, error) {
	switch {
	case req.GetVolumeId() == "":
		return nil, status.Error(codes.InvalidArgument, "volume_id is required")
	case req.GetNodeId() == "":
		return nil, status.Error(codes.InvalidArgument, "node_id is required")
	case req.GetVolumeCapability() == nil:
		return nil, status.Error(codes.InvalidArgument, "volume_capability is required")
	}
	if why := checkCapability(req.GetVolumeCapability()); why != "" {
		return nil, status.Error(codes.InvalidArgument, why)
	}
	h, ok := parseHandle(req.GetVolumeId())
	if !ok {
		return nil, status.Errorf(codes.NotFound, "volume %s does not exist: it is not an Infinia volume handle (<cluster>/<tenant>/<account>:<subtenant>/<service>/<volume>)", echo.Quote(req.GetVolumeId()))
	}
	t, err := d.resolve(h, req.GetSecrets())
	if err != nil {
		return nil, err
	}
	nqn, err := d.hostNQN(req.GetNodeId())
	if err != nil {
		return nil, err
	}
	vol, _, err := d.volume(ctx, t)
	if err != nil {
		return nil, err
	}
	if vol.Subsystem == "" {
		return nil, status.Errorf(codes.FailedPrecondition, "%s: volume %s is not exported by any NVMe-oF subsystem: export it on Infinia first", DriverName, h)
	}
	err = t.c.AddHost(ctx, h.subtenant, vol.Subsystem, nqn)
	switch {
	case err == nil, api.IsConflict(err): // already allowed
	case api.IsNotFound(err):
		return nil, status.Errorf(codes.NotFound, "%s: subsystem %s/%s of volume %s does not exist", DriverName, h.subtenant, vol.Subsystem, h)
	default:
		return nil, apiErr(err, t.acct, "allowing host "+nqn+" on subsystem "+h.subtenant+"/"+vol.Subsystem)
	}
	o := fromContext(req.GetVolumeContext(), ownershipOf(t.acct, vol))
	pc, err := d.contextOf(ctx, t, vol, o, t.acct.dataPort)
	if err != nil {
		return nil, err
	}
	return &csi.ControllerPublishVolumeResponse{PublishContext: pc}, nil
}

// ControllerUnpublishVolume withdraws the node's host NQN; with no node id
// (CSI: every node) every host of the subsystem. A volume, subsystem or
// host that is already gone is success.
func (d *Driver) ControllerUnpublishVolume(ctx context.Context, req *csi.ControllerUnpublishVolumeRequest) (*csi.ControllerUnpublishVolumeResponse, error) {
	if req.GetVolumeId() == "" {
		return nil, status.Error(codes.InvalidArgument, "volume_id is required")
	}
	h, ok := parseHandle(req.GetVolumeId())
	if !ok {
		d.log.Info("ControllerUnpublishVolume: not an Infinia volume handle; nothing to do", "volume_id", req.GetVolumeId())
		return &csi.ControllerUnpublishVolumeResponse{}, nil
	}
	t, err := d.resolve(h, req.GetSecrets())
	if err != nil {
		return nil, err
	}
	var hosts []string
	if req.GetNodeId() != "" {
		nqn, err := d.hostNQN(req.GetNodeId())
		if err != nil {
			// Nothing can have been allowed under an NQN we cannot name.
			d.log.Warn("ControllerUnpublishVolume: no host NQN in the node id; nothing to withdraw", "node_id", req.GetNodeId(), "error", status.Convert(err).Message())
			return &csi.ControllerUnpublishVolumeResponse{}, nil
		}
		hosts = []string{nqn}
	}
	vol, _, err := d.volume(ctx, t)
	if status.Code(err) == codes.NotFound {
		return &csi.ControllerUnpublishVolumeResponse{}, nil
	}
	if err != nil {
		return nil, err
	}
	if vol.Subsystem == "" {
		return &csi.ControllerUnpublishVolumeResponse{}, nil
	}
	if req.GetNodeId() == "" {
		hosts, err = t.c.ListHosts(ctx, h.subtenant, vol.Subsystem)
		if api.IsNotFound(err) {
			return &csi.ControllerUnpublishVolumeResponse{}, nil
		}
		if err != nil {
			return nil, apiErr(err, t.acct, "listing the hosts of subsystem "+h.subtenant+"/"+vol.Subsystem)
		}
	}
	for _, nqn := range hosts {
		if err := t.c.RemoveHost(ctx, h.subtenant, vol.Subsystem, nqn); err != nil && !api.IsNotFound(err) {
			return nil, apiErr(err, t.acct, "withdrawing host "+nqn+" from subsystem "+h.subtenant+"/"+vol.Subsystem)
		}
	}
	return &csi.ControllerUnpublishVolumeResponse{}, nil
}
