// Package assembly assembles a running CSI plugin from a main config: the
// proxy or a single backend as controller, the node service, the identity
// service and their capabilities. cmd/switchyard, the sanity suites and the
// demo all start the driver through it.
package assembly

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"slices"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"

	"github.com/switchyard-csi/switchyard/driver/backend"
	"github.com/switchyard-csi/switchyard/driver/config"
	csisrv "github.com/switchyard-csi/switchyard/driver/csi"
	"github.com/switchyard-csi/switchyard/driver/node"
	"github.com/switchyard-csi/switchyard/driver/nodeid"
	"github.com/switchyard-csi/switchyard/driver/proxy"
)

// Modes a plugin serves (--csi-mode).
const (
	ModeController = "controller"
	ModeNode       = "node"
)

// Options start a plugin.
type Options struct {
	ConfigFile string      // the main config (ignored when Config is set)
	Config     config.Tree // an already loaded main config
	CSIName    string
	CSIVersion string
	Modes      []string // controller and/or node; empty = both
	NodeName   string   // CSI_NODE_ID
	StateDir   string   // node records; default /var/lib/switchyard/node
	Logger     *slog.Logger
	NodeFacts  nodeid.Facts // zero: read from the host
}

// Plugin is an assembled plugin; Server serves it.
type Plugin struct {
	Identity   *csisrv.Identity
	Controller csipb.ControllerServer
	Node       csipb.NodeServer
	Server     *csisrv.Server
	Group      csipb.GroupControllerServer // nil: no group snapshots
	// Connections is the proxy's connection cache (nil for a single
	// backend or a node-only plugin); metrics observe it.
	Connections *proxy.Connections
	closers     []func()
}

// Close releases backends (after the server has stopped).
func (p *Plugin) Close() {
	for i := len(p.closers) - 1; i >= 0; i-- {
		p.closers[i]()
	}
	p.closers = nil
}

// DefaultStateDir keeps the node's per-volume records.
const DefaultStateDir = "/var/lib/switchyard/node"

// New builds the plugin described by the main config.
func New(o Options) (*Plugin, error) {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if len(o.Modes) == 0 {
		o.Modes = []string{ModeController, ModeNode}
	}
	for _, m := range o.Modes {
		if m != ModeController && m != ModeNode {
			return nil, fmt.Errorf("--csi-mode %q: use controller and/or node", m)
		}
	}
	if o.StateDir == "" {
		o.StateDir = DefaultStateDir
	}
	if o.NodeFacts.NodeName == "" {
		o.NodeFacts.NodeName = o.NodeName
	}
	main := o.Config
	file := o.ConfigFile
	if main == nil {
		var err error
		if main, err = config.LoadMain(o.ConfigFile); err != nil {
			return nil, err
		}
	}
	if drv, _ := backend.DriverOf(main); drv == "proxy" {
		return newProxy(o, main, file)
	}
	return newStandalone(o, main, file)
}

func (o Options) serves(mode string) bool { return slices.Contains(o.Modes, mode) }

// proxyCaps is the one capability set the proxy advertises for every
// connection (docs/proxy.md, "Capabilities").
func proxyCaps() csisrv.CapabilitySet {
	return csisrv.CapabilitySet{
		PluginServices: []string{"CONTROLLER_SERVICE", "VOLUME_ACCESSIBILITY_CONSTRAINTS", "GROUP_CONTROLLER_SERVICE"},
		Expansion:      "ONLINE",
		Controller: []string{"CREATE_DELETE_VOLUME", "GET_CAPACITY", "CREATE_DELETE_SNAPSHOT", "CLONE_VOLUME",
			"EXPAND_VOLUME", "SINGLE_NODE_MULTI_WRITER", "LIST_VOLUMES", "LIST_SNAPSHOTS", "GET_SNAPSHOT", "MODIFY_VOLUME", "GET_VOLUME_HEALTH", "LIST_VOLUME_HEALTH"},
		Node: defaultNodeCaps,
	}
}

var defaultNodeCaps = []string{"STAGE_UNSTAGE_VOLUME", "GET_VOLUME_STATS", "EXPAND_VOLUME", "SINGLE_NODE_MULTI_WRITER", "GET_VOLUME_HEALTH"}

// nodeOnlyCaps: a static PV is never expanded (no controller), so its
// node does not advertise EXPAND_VOLUME either.
var nodeOnlyCaps = []string{"STAGE_UNSTAGE_VOLUME", "GET_VOLUME_STATS", "SINGLE_NODE_MULTI_WRITER", "GET_VOLUME_HEALTH"}

func newProxy(o Options, main config.Tree, file string) (*Plugin, error) {
	set, ps := proxy.ParseSettings(main)
	caps, cps := proxyCaps().Override(main)
	ps = append(ps, cps...)
	if len(ps) > 0 {
		return nil, ps.InFile(file)
	}
	p := &Plugin{}
	if err := p.identity(o, caps); err != nil {
		return nil, err
	}
	if o.serves(ModeController) {
		if _, err := os.Stat(set.ConfigFolder); err != nil {
			o.Logger.Warn("the connections folder is not readable yet; calls will fail until it is", "folder", set.ConfigFolder, "error", err)
		}
		conns := proxy.NewConnections(&set, main, backend.Options{NodeName: o.NodeName, CSIName: o.CSIName, TopologyPrefix: set.Topology.Prefix,
			ParseNodeID: nodeid.Parser(set.NodeID), Logger: o.Logger})
		p.closers = append(p.closers, conns.Close)
		p.Connections = conns
		ccaps, _ := csisrv.ControllerCaps(caps.Controller...)
		p.Controller = proxy.NewController(conns, &set, ccaps, o.Logger)
		p.Group = csisrv.GroupControllerOf(p.Controller)
	}
	if o.serves(ModeNode) {
		// Fail at start, not at the first NodeGetInfo, when the node facts
		// the config asks for are missing.
		info, err := proxy.NodeInfo(&set, o.NodeFacts, o.Logger)
		if err != nil {
			return nil, err
		}
		if err := p.node(o, caps, func() (*csipb.NodeGetInfoResponse, error) { return info, nil }); err != nil {
			return nil, err
		}
	}
	return p, nil
}

func newStandalone(o Options, main config.Tree, file string) (*Plugin, error) {
	typ, err := backend.Resolve(main, file)
	if err != nil {
		return nil, err
	}
	set := csisrv.CapabilitySet{PluginServices: []string{"CONTROLLER_SERVICE"}, Expansion: "ONLINE", Node: defaultNodeCaps}
	if typ.NodeLocal {
		set.PluginServices = append(set.PluginServices, "VOLUME_ACCESSIBILITY_CONSTRAINTS")
	}
	if typ.NodeOnly { // democratic-csi's node-manual advertises no service and no expansion
		set = csisrv.CapabilitySet{Node: nodeOnlyCaps}
	}
	caps, ps := set.Override(main)
	nodeID, ips := nodeid.ParseSettings(main, nodeid.Settings{NodeName: true, NQN: typ.HostNQN})
	ps = append(ps, ips...)
	if len(ps) > 0 {
		return nil, ps.InFile(file)
	}
	p := &Plugin{}
	if err := p.identity(o, caps); err != nil {
		return nil, err
	}
	if o.serves(ModeController) {
		d, err := typ.New(backend.Options{File: file, Config: main, NodeName: o.NodeName, CSIName: o.CSIName,
			ParseNodeID: nodeid.Parser(nodeID), Logger: o.Logger})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		p.closers = append(p.closers, func() { _ = d.Close() })
		p.Group = csisrv.AdvertiseGroup(p.Identity, d)
		p.Controller = d
		if caps.Controller != nil { // an override replaces what the backend advertises
			cc, _ := csisrv.ControllerCaps(caps.Controller...)
			p.Controller = withCaps{d, cc}
		}
	}
	if o.serves(ModeNode) {
		id, name, err := nodeid.Standalone(nodeID, o.NodeFacts, typ.HostNQN)
		if err != nil {
			return nil, err
		}
		info := &csipb.NodeGetInfoResponse{NodeId: id}
		if typ.NodeLocal {
			info.AccessibleTopology = &csipb.Topology{Segments: map[string]string{backend.DefaultTopologyPrefix + "/node": name}}
		}
		if err := p.node(o, caps, func() (*csipb.NodeGetInfoResponse, error) { return info, nil }); err != nil {
			return nil, err
		}
	}
	return p, nil
}

func (p *Plugin) identity(o Options, caps csisrv.CapabilitySet) error {
	pc, err := csisrv.PluginCaps(caps.PluginServices, caps.Expansion)
	if err != nil {
		return err
	}
	p.Identity = &csisrv.Identity{Name: o.CSIName, Version: o.CSIVersion, Capabilities: pc}
	return nil
}

func (p *Plugin) node(o Options, caps csisrv.CapabilitySet, info func() (*csipb.NodeGetInfoResponse, error)) error {
	nc, err := csisrv.NodeCaps(caps.Node...)
	if err != nil {
		return err
	}
	svc, err := node.NewService(node.Options{
		StateDir:     o.StateDir,
		Capabilities: nc,
		Logger:       o.Logger,
		NodeInfo:     func(ctx context.Context) (*csipb.NodeGetInfoResponse, error) { return info() },
	})
	if err != nil {
		return err
	}
	p.Node = svc
	return nil
}

// withCaps overrides a backend's advertised controller capabilities.
type withCaps struct {
	backend.Driver
	caps []*csipb.ControllerServiceCapability
}

func (w withCaps) ControllerGetCapabilities(context.Context, *csipb.ControllerGetCapabilitiesRequest) (*csipb.ControllerGetCapabilitiesResponse, error) {
	return &csipb.ControllerGetCapabilitiesResponse{Capabilities: w.caps}, nil
}

// NewServer wraps the services into a gRPC server; outer interceptors
// (metrics) run before the server's own.
func (p *Plugin) NewServer(log *slog.Logger, outer ...grpc.UnaryServerInterceptor) *csisrv.Server {
	p.Server = csisrv.NewServer(csisrv.Options{Identity: p.Identity, Controller: p.Controller, Node: p.Node, Logger: log, Outer: outer})
	p.Server.RegisterGroupController(p.Group)
	return p.Server
}
