package engine

import (
	"context"
	"strings"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/driver/echo"
	"github.com/switchyard-csi/switchyard/driver/zfs"
)

// Initiator is how a node names itself to a block target.
type Initiator int

const (
	// OpenTargets: the sharer's targets admit every initiator (the
	// default, democratic-csi's behaviour); there is no publish step.
	OpenTargets Initiator = iota
	// IQN: an iSCSI initiator name (proxy.nodeId.parts.iqn).
	IQN
	// NQN: an NVMe host NQN (proxy.nodeId.parts.nqn).
	NQN
)

func (i Initiator) String() string {
	switch i {
	case IQN:
		return "iSCSI initiator name (IQN)"
	case NQN:
		return "NVMe host NQN"
	}
	return "none"
}

// part is the proxy.nodeId.parts key that puts this name in node ids.
func (i Initiator) part() string {
	if i == IQN {
		return "iqn"
	}
	return "nqn"
}

// HostAccess is implemented by a Sharer whose targets can be closed to
// every initiator but the nodes granted access (iscsi.hostAccess or
// nvmeof.hostAccess: allowList). The engine then advertises
// PUBLISH_UNPUBLISH_VOLUME: ControllerPublishVolume grants the node's
// initiator name, ControllerUnpublishVolume withdraws it, and the sharer's
// Remove (DeleteVolume) takes every grant left with the target.
type HostAccess interface {
	// Initiator is the name the targets admit, or OpenTargets when the
	// connection keeps them open.
	Initiator() Initiator
	// Grant lets initiator in to the volume's target; granted already is
	// success. props holds what was read of the dataset (at least
	// AssetProps).
	Grant(ctx context.Context, dataset string, props zfs.Properties, initiator string) error
	// Revoke withdraws initiator, or every initiator when it is "";
	// withdrawn already, or the target gone, is success.
	Revoke(ctx context.Context, dataset string, props zfs.Properties, initiator string) error
}

// hostAccess is the sharer's access control, nil when targets are open.
func (e *Engine) hostAccess() (HostAccess, Initiator) {
	if h, ok := e.share.(HostAccess); ok && h.Initiator() != OpenTargets {
		return h, h.Initiator()
	}
	return nil, OpenTargets
}

// maxQualifiedName is the longest IQN or NQN (RFC 3720, NVMe base spec).
const maxQualifiedName = 223

// initiatorOf reads the node's IQN or NQN from its node id: a switchyard
// node id (n=<name>/i<short>=<iqn>/v<short>=<nqn>, read with the front
// end's proxy.nodeId settings) or a node id that is itself the name.
// A node id that is neither names no node (NOT_FOUND, as CSI wants for an
// unknown node); one without the part names a node whose id does not
// carry what the target needs (FAILED_PRECONDITION, naming the config).
func (e *Engine) initiatorOf(nodeID string, kind Initiator) (string, error) {
	bare := func(id string) bool {
		if kind == IQN {
			return strings.HasPrefix(id, "iqn.") || strings.HasPrefix(id, "eui.") || strings.HasPrefix(id, "naa.")
		}
		return strings.HasPrefix(id, "nqn.")
	}
	if bare(nodeID) && !strings.Contains(nodeID, "/") {
		return checkInitiator(nodeID, nodeID, kind)
	}
	if e.parseNodeID == nil {
		return "", status.Errorf(codes.NotFound, "node %q: node ids of this plugin carry no %s (run the connection behind the proxy with proxy.nodeId.parts.%s: true, or set CSI_NODE_ID to the name itself)", nodeID, kind, kind.part())
	}
	id, err := e.parseNodeID(nodeID)
	if err != nil {
		return "", status.Errorf(codes.NotFound, "node %q does not exist: %v", nodeID, err)
	}
	name := id.IQN
	if kind == NQN {
		name = id.NQN
	}
	if name == "" {
		return "", status.Errorf(codes.FailedPrecondition, "%s grants each node's %s at ControllerPublishVolume (%s.hostAccess: allowList), and node id %q carries none: set proxy.nodeId.parts.%s: true in the main config of the node plugins (the node then reports %s)",
			e.cfg.driver, kind, map[Initiator]string{IQN: "iscsi", NQN: "nvmeof"}[kind], nodeID, kind.part(),
			map[Initiator]string{IQN: "/etc/iscsi/initiatorname.iscsi", NQN: "/etc/nvme/hostnqn"}[kind])
	}
	return checkInitiator(nodeID, name, kind)
}

func checkInitiator(nodeID, name string, kind Initiator) (string, error) {
	ok := len(name) <= maxQualifiedName && !strings.ContainsAny(name, " \t\n\"'`$\\/;|&<>")
	if kind == NQN {
		ok = ok && strings.HasPrefix(name, "nqn.")
	}
	if !ok {
		return "", status.Errorf(codes.InvalidArgument, "node id %q: %q is not a valid %s (at most %d bytes, no spaces, quotes or shell characters)", nodeID, name, kind, maxQualifiedName)
	}
	// IQNs are case-insensitive and LIO stores them lowercased.
	if kind == IQN {
		name = strings.ToLower(name)
	}
	return name, nil
}

// ControllerPublishVolume loads the volume's encryption key when the
// storage host has it unloaded (encrypt_publish.go) and grants the node's
// initiator access to the volume's target. With open targets (the
// default) there is nothing to grant: a zfs command-line backend still
// answers, for the key, and the TrueNAS API backends (no encrypted
// volumes) answer UNIMPLEMENTED, which the proxy answers for the backend.
func (e *Engine) ControllerPublishVolume(ctx context.Context, req *csi.ControllerPublishVolumeRequest) (*csi.ControllerPublishVolumeResponse, error) {
	h, kind := e.hostAccess()
	if h == nil && e.publishKeyProps() == nil {
		return nil, status.Errorf(codes.Unimplemented, "%s targets admit every initiator (iscsi/nvmeof.hostAccess is not allowList): there is no publish step", e.cfg.driver)
	}
	switch {
	case req.GetVolumeId() == "":
		return nil, status.Error(codes.InvalidArgument, "volume_id is required")
	case req.GetNodeId() == "":
		return nil, status.Error(codes.InvalidArgument, "node_id is required")
	case req.GetVolumeCapability() == nil:
		return nil, status.Error(codes.InvalidArgument, "volume_capability is required")
	}
	ds, props, err := e.readVolume(ctx, req.GetVolumeId(), e.publishKeyProps()...)
	if err != nil {
		return nil, err
	}
	if why := e.checkCapability(req.GetVolumeCapability()); why != "" {
		return nil, status.Error(codes.InvalidArgument, why)
	}
	name := ""
	if h != nil {
		// Before the key: a node the target cannot admit is refused
		// without touching the host.
		if name, err = e.initiatorOf(req.GetNodeId(), kind); err != nil {
			return nil, err
		}
	}
	if err := e.publishKey(ctx, ds, props, req.GetSecrets()); err != nil {
		return nil, err
	}
	if h == nil {
		return &csi.ControllerPublishVolumeResponse{}, nil
	}
	if err := h.Grant(ctx, ds, props, name); err != nil {
		return nil, err
	}
	e.log.Info("granted a node access to a volume", "volume", req.GetVolumeId(), "node", req.GetNodeId(), "initiator", name)
	return &csi.ControllerPublishVolumeResponse{}, nil
}

// ControllerUnpublishVolume withdraws the node's initiator (every
// initiator when node_id is empty, as CSI asks). A volume that is gone, or
// a node id that names no initiator, leaves nothing to withdraw.
func (e *Engine) ControllerUnpublishVolume(ctx context.Context, req *csi.ControllerUnpublishVolumeRequest) (*csi.ControllerUnpublishVolumeResponse, error) {
	h, kind := e.hostAccess()
	if h == nil {
		return nil, status.Errorf(codes.Unimplemented, "%s targets admit every initiator: there is no unpublish step", e.cfg.driver)
	}
	if req.GetVolumeId() == "" {
		return nil, status.Error(codes.InvalidArgument, "volume_id is required")
	}
	name := ""
	if req.GetNodeId() != "" {
		var err error
		if name, err = e.initiatorOf(req.GetNodeId(), kind); err != nil {
			e.log.Warn("ControllerUnpublishVolume: the node id names no initiator; nothing to withdraw", "node_id", req.GetNodeId(), "error", status.Convert(err).Message())
			return &csi.ControllerUnpublishVolumeResponse{}, nil
		}
	}
	ds, props, err := e.readVolume(ctx, req.GetVolumeId())
	if status.Code(err) == codes.NotFound {
		return &csi.ControllerUnpublishVolumeResponse{}, nil
	}
	if err != nil {
		return nil, err
	}
	if err := h.Revoke(ctx, ds, props, name); err != nil {
		return nil, err
	}
	return &csi.ControllerUnpublishVolumeResponse{}, nil
}

// readVolume reads a provisioned volume's dataset and properties, and
// the extra properties asked for; NOT_FOUND when there is none. Extra
// encryption properties a host's zfs does not know (zfs-fuse) are left
// out: such a host has no encrypted volume.
func (e *Engine) readVolume(ctx context.Context, id string, extra ...string) (string, zfs.Properties, error) {
	if !volumeIDOK(id) {
		return "", nil, status.Errorf(codes.NotFound, "volume %s does not exist", echo.Quote(id))
	}
	ds := e.cfg.datasetName(id)
	props, err := e.zfs.Get(ctx, ds, append(e.volumeProps(), extra...)...)
	if err != nil && len(extra) > 0 && noKeyProps(err) {
		props, err = e.zfs.Get(ctx, ds, e.volumeProps()...)
	}
	if zfs.IsNotExist(err) {
		return "", nil, status.Errorf(codes.NotFound, "volume %s does not exist (no dataset %s)", id, ds)
	}
	if err != nil {
		return "", nil, e.zfsErr(err, "reading "+ds)
	}
	if _, ok := e.volumeFromProps(id, props); !ok || props[propSuccess].Value != "true" {
		return "", nil, status.Errorf(codes.NotFound, "dataset %s is not a provisioned volume of this driver", ds)
	}
	return ds, props, nil
}
