// Package localhostpath is the local-hostpath backend: a volume is a
// directory on the node that runs the controller, laid out like
// democratic-csi's local-hostpath driver so that volumes and snapshots made
// by democratic-csi are found (v/<volume id>, s/<snapshot>), plus small
// JSON metadata files of switchyard's own under .switchyard/ (requested
// capacity, content source, creation times).
//
// The layout, the copies and every controller call are driver/dirvol's
// (shared with the nfs/smb/lustre client backends); this package keeps what
// is local-hostpath's own: a volume lives on one node, the controller's, and
// carries it as topology; nodes bind-mount shareBasePath/v/<id>.
package localhostpath

import (
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/driver/backend"
	"github.com/switchyard-csi/switchyard/driver/config"
	"github.com/switchyard-csi/switchyard/driver/dirvol"
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
	*dirvol.Controller
	node *node
}

// node is what local-hostpath decides over dirvol: the node volumes are on.
type node struct {
	cfg      dirvol.Settings
	nodeName string
	// topoKey is the topology key volumes carry (TopologyKey by default).
	topoKey string
}

var _ backend.Driver = (*Driver)(nil)

// MaxIDLen is the longest volume or snapshot id this backend returns.
const MaxIDLen = dirvol.MaxIDLen

// flavor: local-hostpath's wording, and its fast paths for empty volumes
// and metadata reads (the base is a local disk no one else writes).
var flavor = dirvol.Flavor{ErrPrefix: DriverName, Family: DriverName, Product: DriverName, FastEmpty: true, CacheMeta: true, CacheLists: true}

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
	n := &node{cfg: cfg, nodeName: opts.NodeName, topoKey: key}
	return &Driver{Controller: dirvol.NewController(flavor, cfg, n, log), node: n}, nil
}

// NodeTopology is the accessible topology of volumes made on node.
func (d *Driver) NodeTopology(node string) map[string]string {
	return map[string]string{d.node.topoKey: node}
}

// Topology: a volume is reachable from the controller's node only.
func (n *node) Topology() []*csi.Topology {
	return []*csi.Topology{{Segments: map[string]string{n.topoKey: n.nodeName}}}
}

// VolumeContext is what the node service needs to publish a volume.
func (n *node) VolumeContext(id string) map[string]string {
	return volumecontext.Context{
		Attach:      volumecontext.HostPath{Path: n.cfg.ShareBase + "/" + dirvol.VolumesDir + "/" + id},
		Provisioner: volumecontext.Provisioner{Driver: DriverName, InstanceID: n.cfg.InstanceID},
	}.Encode()
}

// Ready: a local directory needs no check before use.
func (n *node) Ready(string) error { return nil }

// CapacityFor counts the free space for this node only, making
// controllerBasePath first.
func (n *node) CapacityFor(topo *csi.Topology) (bool, error) {
	if name, ok := topo.GetSegments()[n.topoKey]; ok && name != n.nodeName {
		return false, nil
	}
	if err := os.MkdirAll(n.cfg.ControllerBase, 0o755); err != nil {
		return false, dirvol.FSError(DriverName, "creating controllerBasePath", err)
	}
	return true, nil
}

// CheckCapability returns why a volume capability cannot be served, or "".
func (*node) CheckCapability(c *csi.VolumeCapability) string {
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

// CheckRequisite fails when the requisite topology names nodes under
// TopologyKey and none of them is this controller's node. Terms without the
// key do not constrain the node and are ignored.
func (n *node) CheckRequisite(req *csi.TopologyRequirement) error {
	var others []string
	for _, t := range req.GetRequisite() {
		node, ok := t.GetSegments()[n.topoKey]
		if !ok {
			continue
		}
		if node == n.nodeName {
			return nil
		}
		others = append(others, fmt.Sprintf("%q", node))
	}
	if len(others) == 0 {
		return nil
	}
	return status.Errorf(codes.ResourceExhausted,
		"local-hostpath can only make volumes on node %q (where this controller runs), but the requisite topology allows only %s %s",
		n.nodeName, n.topoKey, strings.Join(others, ", "))
}
