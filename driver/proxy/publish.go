package proxy

import (
	"context"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/driver/nodeid"
)

// publishNothingToAttach answers ControllerPublishVolume for a backend
// without a publish step (every backend but Infinia and the hostAccess
// allow-lists): nothing is attached, so publishing succeeds once the
// volume is known to exist, and a volume that does not exist is NOT_FOUND,
// as CSI asks.
//
// Existence is asked of the backend on the controller that serves the
// call, and with controller.strategy node that need not be the node the
// volume is published to: the chart runs csi-provisioner and
// csi-snapshotter per node, but csi-attacher (like csi-resizer, which has
// no per-node mode) on every node with leader election, so one node's
// controller publishes every volume of the cluster. Two kinds of backend
// cannot answer there for a volume of another node:
//   - a share that only some nodes mount (nfs-client, smb-client,
//     lustre-client): the leader's node lacks it, and the backend says so
//     with FAILED_PRECONDITION ("not mounted on the controller"), which
//     says nothing about the volume;
//   - node-local storage (local-hostpath, zfs-local-*): the volume lives on
//     its own node, so the leader's node answers NOT_FOUND for it.
//
// When the publish targets another node than this controller's, either
// answer means "cannot be checked here", and the publish succeeds: there
// is nothing to attach, and NodeStageVolume on the target node, which
// mounts from the server or its own disk, fails by itself if the volume is
// gone. When the target is this controller's own node, or either node is
// unknown (node ids without the nodeName part, no CSI_NODE_ID), the
// backend's answer stands: there existence can be checked, and a missing
// volume is NOT_FOUND (csi-sanity publishes to the node of the plugin it
// talks to). Alternatives weighed: attachRequired false would drop the
// attach step Infinia's host grants need; pinning the attacher's leader to
// one node cannot suit node-local volumes on several nodes.
func (p *Controller) publishNothingToAttach(ctx context.Context, l *Lease, id string, req *csipb.ControllerPublishVolumeRequest) (*csipb.ControllerPublishVolumeResponse, error) {
	_, err := l.Driver.ValidateVolumeCapabilities(ctx, &csipb.ValidateVolumeCapabilitiesRequest{
		VolumeId: id, VolumeCapabilities: []*csipb.VolumeCapability{req.GetVolumeCapability()},
		VolumeContext: req.GetVolumeContext(), Secrets: req.GetSecrets(),
	})
	if err == nil {
		return &csipb.ControllerPublishVolumeResponse{}, nil
	}
	code := status.Code(err)
	unreachable := code == codes.FailedPrecondition || code == codes.NotFound && l.Type.NodeLocal
	if !unreachable {
		return nil, err
	}
	target, ok := p.otherNode(req.GetNodeId())
	if !ok {
		return nil, err
	}
	p.log.Info("ControllerPublishVolume: nothing to attach, and this controller cannot check the volume, which belongs to another node; published without the check",
		"connection", l.Name, "volume_id", id, "node", target, "own_node", p.conns.opts.NodeName, "reason", status.Convert(err).Message())
	return &csipb.ControllerPublishVolumeResponse{}, nil
}

// otherNode returns the node name in nodeID when it is known to differ
// from the node this controller runs on (CSI_NODE_ID).
func (p *Controller) otherNode(nodeID string) (string, bool) {
	own := p.conns.opts.NodeName
	if own == "" {
		return "", false
	}
	n, err := nodeid.Parse(p.set.NodeID, nodeID)
	if err != nil || n.Name == "" || n.Name == own {
		return "", false
	}
	return n.Name, true
}
