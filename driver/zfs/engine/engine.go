package engine

import (
	"context"
	"log/slog"
	"sync/atomic"

	"github.com/container-storage-interface/spec/lib/go/csi"

	"github.com/switchyard-csi/switchyard/driver/backend"
	"github.com/switchyard-csi/switchyard/driver/config"
	"github.com/switchyard-csi/switchyard/driver/zfs"
)

// Id limits: volume ids are at most MaxVolumeIDLen bytes and snapshot ids
// (<volume id>@<name>) at most MaxSnapshotIDLen, so that a proxy handle
// (`s:<connection>/<id>`) fits CSI's 128 bytes with connection names of up
// to 29 characters. Kubernetes names (pvc-<uuid>, snapshot-<uuid>) are never
// shortened.
const (
	MaxVolumeIDLen   = 64
	MaxSnapshotIDLen = 96
)

// Options configure one engine.
type Options struct {
	// Options are the backend's: Config supplies the keys every ZFS
	// backend shares (zfs.*, _private.csi.volume.*, instance_id), File
	// names it in errors, Logger and Connection label the log.
	backend.Options
	// Driver is the driver name, as in the config's driver key.
	Driver string
	// Block: volumes are zvols (iscsi, nvmeof), not filesystems.
	Block bool
	// FSTypes are the mount fs_types a node may be asked for; nil means
	// BlockFSTypes.
	FSTypes []string
	// Platform is the storage host.
	Platform Platform
}

// Engine is the controller service of one ZFS backend.
type Engine struct {
	csi.UnimplementedControllerServer

	cfg     settings
	fsTypes []string
	zfs     zfs.Datasets
	share   Sharer
	plat    Platform
	log     *slog.Logger
	// parseNodeID reads node ids (the front end's proxy.nodeId settings),
	// for the initiator names of ControllerPublishVolume; nil: opaque.
	parseNodeID func(string) (backend.NodeIdentity, error)
	// parentMnt is the parent dataset's mountpoint, once learnt (oneshot.go).
	parentMnt parentMount
	// parentSeen: zfs.datasetParentName is known to exist (GetCapacity
	// read it or a volume was made under it), so new volumes are created
	// without -p and without a read first (volumes.go).
	parentSeen atomic.Bool
}

var _ backend.Driver = (*Engine)(nil)

// New builds the controller for a platform. The common keys are read from
// opts.Config (a problem in them is an error naming opts.File); the
// platform's own keys are its builder's business. Nothing is contacted.
func New(opts Options) (*Engine, error) {
	r := config.NewReader(opts.Config)
	s := readSettings(r)
	if len(r.Problems()) > 0 {
		return nil, config.Problems(r.Problems()).InFile(opts.File)
	}
	s.driver, s.kind = opts.Driver, filesystem
	if opts.Block {
		s.kind = volume
	}
	fsTypes := opts.FSTypes
	if fsTypes == nil {
		fsTypes = BlockFSTypes
	}
	p := opts.Platform
	return &Engine{cfg: s, fsTypes: fsTypes, zfs: p.Datasets(), share: p.Sharer(), plat: p,
		log: Logger(opts.Options, opts.Driver), parseNodeID: opts.ParseNodeID}, nil
}

// Logger is opts.Logger (or the default) labelled with the driver and the
// connection, as every part of one backend logs.
func Logger(opts backend.Options, driver string) *slog.Logger {
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	log = log.With("driver", driver)
	if opts.Connection != "" {
		log = log.With("connection", opts.Connection)
	}
	return log
}

// Close releases the platform's connections.
func (e *Engine) Close() error { return e.plat.Close() }

// permissions returns the configured zfs.datasetPermissions* keys.
func (e *Engine) permissions() Permissions {
	return Permissions{Mode: e.cfg.permMode, User: e.cfg.permUser, Group: e.cfg.permGroup, ACLs: e.cfg.acls, ACLBinary: e.cfg.aclBinary}
}

// ControllerGetCapabilities lists what this backend implements:
// PUBLISH_UNPUBLISH_VOLUME only when its targets admit granted hosts only
// (HostAccess).
func (e *Engine) ControllerGetCapabilities(context.Context, *csi.ControllerGetCapabilitiesRequest) (*csi.ControllerGetCapabilitiesResponse, error) {
	rpcs := []csi.ControllerServiceCapability_RPC_Type{
		csi.ControllerServiceCapability_RPC_CREATE_DELETE_VOLUME,
		csi.ControllerServiceCapability_RPC_CREATE_DELETE_SNAPSHOT,
		csi.ControllerServiceCapability_RPC_CLONE_VOLUME,
		csi.ControllerServiceCapability_RPC_EXPAND_VOLUME,
		csi.ControllerServiceCapability_RPC_GET_CAPACITY,
		csi.ControllerServiceCapability_RPC_LIST_VOLUMES,
		csi.ControllerServiceCapability_RPC_LIST_SNAPSHOTS,
		csi.ControllerServiceCapability_RPC_GET_SNAPSHOT,
		csi.ControllerServiceCapability_RPC_GET_VOLUME,
		csi.ControllerServiceCapability_RPC_SINGLE_NODE_MULTI_WRITER,
		csi.ControllerServiceCapability_RPC_MODIFY_VOLUME,
	}
	rpcs = append(rpcs, HealthCapabilities...)
	if h, _ := e.hostAccess(); h != nil {
		rpcs = append(rpcs, csi.ControllerServiceCapability_RPC_PUBLISH_UNPUBLISH_VOLUME)
	}
	return backend.Capabilities(rpcs...), nil
}
