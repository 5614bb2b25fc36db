// Package localhostpath is the local-hostpath backend: a volume is a
// directory on the node that runs the controller, laid out like
// democratic-csi's local-hostpath driver so that volumes and snapshots made
// by democratic-csi are found (v/<volume id>, s/<snapshot>), plus small
// JSON metadata files of switchyard's own under .switchyard/ (requested
// capacity, content source, creation times).
//
// Clones, restores and snapshots are directory copies made in Go (no rsync)
// in a temporary directory next to the target and renamed into place when
// complete, so a failure never leaves a partial volume or snapshot under its
// final name.
package localhostpath

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"strings"
	"syscall"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/driver/backend"
	"github.com/switchyard-csi/switchyard/driver/config"
	"github.com/switchyard-csi/switchyard/driver/volumecontext"
)

const (
	// DriverName is the democratic-csi driver type (and config section).
	DriverName = "local-hostpath"
	// TopologyKey is the default segment key naming the node a volume
	// lives on, as democratic-csi's local-hostpath reports it; behind a
	// proxy with another nodeTopology.prefix the key follows that prefix.
	TopologyKey = backend.DefaultTopologyPrefix + "/node"
)

func init() {
	backend.Register(backend.Type{
		Name:             DriverName,
		ConfigKey:        sectionKey,
		NodeLocal:        true,
		MaxVolumeIDLen:   MaxIDLen,
		MaxSnapshotIDLen: MaxIDLen,
		Validate:         Validate,
		New:              backend.Constructor(New),
	})
}

// Driver is a configured local-hostpath backend (the controller service).
type Driver struct {
	csi.UnimplementedControllerServer

	cfg      settings
	store    store
	nodeName string
	log      *slog.Logger
	locks    keyLocks

	// topoKey is the topology key volumes carry (TopologyKey by default).
	topoKey string
	// copyHook is passed to every copy (tests simulate failures with it).
	copyHook func(rel string) error
}

var _ backend.Driver = (*Driver)(nil)

// New builds a driver from opts.Config. The config must be valid (the
// problems Validate reports are returned, naming opts.File) and
// opts.NodeName must be set: volumes are made on, and only reachable from,
// the node the controller runs on.
func New(opts backend.Options) (*Driver, error) {
	cfg, problems := parseSettings(opts.Config)
	if len(problems) > 0 {
		return nil, config.Problems(problems).InFile(opts.File)
	}
	if opts.NodeName == "" {
		return nil, fmt.Errorf("%s: the node name (CSI_NODE_ID) is required: volumes are directories on the controller's node and carry its name as topology", DriverName)
	}
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	log = log.With("driver", DriverName)
	if opts.Connection != "" {
		log = log.With("connection", opts.Connection)
	}
	key := TopologyKey
	if opts.TopologyPrefix != "" {
		key = opts.TopologyPrefix + "/node"
	}
	return &Driver{
		cfg:      cfg,
		store:    store{base: cfg.controllerBase, cache: &metaCache{}},
		nodeName: opts.NodeName,
		topoKey:  key,
		log:      log,
	}, nil
}

// Close releases nothing: the driver holds no connections or open files.
func (d *Driver) Close() error { return nil }

// NodeTopology is the accessible topology of volumes made on node.
func (d *Driver) NodeTopology(node string) map[string]string {
	return map[string]string{d.topoKey: node}
}

func (d *Driver) topology() []*csi.Topology {
	return []*csi.Topology{{Segments: d.NodeTopology(d.nodeName)}}
}

// volumeContext is what the node service needs to publish a volume.
func (d *Driver) volumeContext(id string) map[string]string {
	return volumecontext.Context{
		Attach:      volumecontext.HostPath{Path: d.cfg.shareBase + "/" + volumesDir + "/" + id},
		Provisioner: volumecontext.Provisioner{Driver: DriverName, InstanceID: d.cfg.instanceID},
	}.Encode()
}

func (d *Driver) newCopier(ctx context.Context) *copier {
	return &copier{ctx: ctx, hook: d.copyHook, tolerateChownEPERM: os.Geteuid() != 0}
}

// ControllerGetCapabilities lists what this backend implements.
func (d *Driver) ControllerGetCapabilities(context.Context, *csi.ControllerGetCapabilitiesRequest) (*csi.ControllerGetCapabilitiesResponse, error) {
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
	}
	return backend.Capabilities(rpcs...), nil
}

// checkCapability returns why a volume capability cannot be served, or "".
func checkCapability(c *csi.VolumeCapability) string {
	if c == nil {
		return "a volume capability is empty"
	}
	if c.GetBlock() != nil {
		return "local-hostpath volumes are directories; block access is not supported"
	}
	m := c.GetMount()
	if m == nil {
		return "a volume capability has no access type: local-hostpath volumes need mount access"
	}
	if m.GetFsType() != "" {
		return fmt.Sprintf("local-hostpath volumes are directories; fs_type %q cannot be applied (leave fs_type empty)", m.GetFsType())
	}
	if c.GetAccessMode() == nil {
		return "a volume capability has no access_mode"
	}
	switch mode := c.GetAccessMode().GetMode(); mode {
	case csi.VolumeCapability_AccessMode_SINGLE_NODE_WRITER,
		csi.VolumeCapability_AccessMode_SINGLE_NODE_READER_ONLY,
		csi.VolumeCapability_AccessMode_SINGLE_NODE_SINGLE_WRITER,
		csi.VolumeCapability_AccessMode_SINGLE_NODE_MULTI_WRITER:
		return ""
	case csi.VolumeCapability_AccessMode_MULTI_NODE_READER_ONLY,
		csi.VolumeCapability_AccessMode_MULTI_NODE_SINGLE_WRITER,
		csi.VolumeCapability_AccessMode_MULTI_NODE_MULTI_WRITER:
		return fmt.Sprintf("a local-hostpath volume is a directory on one node; access mode %s is not supported (use a SINGLE_NODE_* mode, ReadWriteOnce or ReadWriteOncePod)", mode)
	default:
		return fmt.Sprintf("access mode %s is not supported (use a SINGLE_NODE_* mode)", mode)
	}
}

func checkCapabilities(caps []*csi.VolumeCapability) string {
	if len(caps) == 0 {
		return "volume_capabilities is required"
	}
	for _, c := range caps {
		if msg := checkCapability(c); msg != "" {
			return msg
		}
	}
	return ""
}

// checkRequisite fails when the requisite topology names nodes under
// TopologyKey and none of them is this controller's node. Terms without the
// key do not constrain the node and are ignored.
func (d *Driver) checkRequisite(req *csi.TopologyRequirement) error {
	var others []string
	for _, t := range req.GetRequisite() {
		node, ok := t.GetSegments()[d.topoKey]
		if !ok {
			continue
		}
		if node == d.nodeName {
			return nil
		}
		others = append(others, fmt.Sprintf("%q", node))
	}
	if len(others) == 0 {
		return nil
	}
	return status.Errorf(codes.ResourceExhausted,
		"local-hostpath can only make volumes on node %q (where this controller runs), but the requisite topology allows only %s %s",
		d.nodeName, d.topoKey, strings.Join(others, ", "))
}

// fsError turns a filesystem failure into a status with the operation and
// path in the message.
func fsError(op string, err error) error {
	if _, ok := status.FromError(err); ok {
		return err // already a status, chosen where the cause was known
	}
	code := codes.Internal
	switch {
	case errors.Is(err, context.Canceled):
		code = codes.Canceled
	case errors.Is(err, context.DeadlineExceeded):
		code = codes.DeadlineExceeded
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT):
		code = codes.ResourceExhausted
	case errors.Is(err, fs.ErrPermission), errors.Is(err, syscall.EROFS):
		code = codes.FailedPrecondition
	}
	return status.Errorf(code, "local-hostpath: %s: %v", op, err)
}
