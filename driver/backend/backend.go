// Package backend is the contract between the driver front ends (standalone
// and proxy) and the real drivers ("backends"): the Driver interface, the
// options a backend is built from, the registry of driver types, and
// Resolve, the one place a config's driver type is resolved and validated.
package backend

import (
	"context"
	"log/slog"

	"github.com/container-storage-interface/spec/lib/go/csi"

	"github.com/switchyard-csi/switchyard/driver/config"
	"github.com/switchyard-csi/switchyard/driver/transfer"
)

// Driver is one configured backend: a controller service plus Close.
// Backends embed csi.UnimplementedControllerServer; a method they do not
// implement answers codes.Unimplemented, which the proxy turns into a clear
// INVALID_ARGUMENT (or a default, for GetCapacity).
//
// Node calls never reach a Driver: the node service picks an attacher from
// the volume_context alone (docs/proxy.md, "Calls").
type Driver interface {
	csi.ControllerServer
	// Close releases connections (SSH sessions, HTTP keep-alives). It is
	// called once, after every in-flight call on the driver has returned.
	Close() error
}

// DefaultTopologyPrefix is democratic-csi's topology key prefix.
const DefaultTopologyPrefix = "org.democratic-csi.topology"

// Options are what a backend is built from.
type Options struct {
	// Connection is the proxy connection name, "" when standalone.
	Connection string
	// File is the config file the tree came from, for error messages.
	File string
	// Config is the complete driver config (for a connection: the
	// connection file deep-merged over the main config).
	Config config.Tree
	// NodeName is CSI_NODE_ID of the host the controller runs on.
	NodeName string
	// CSIName is the CSI driver name (--csi-name).
	CSIName string
	// TopologyPrefix prefixes the topology keys of node-local backends so
	// they match what nodes report (proxy.nodeTopology.prefix; default
	// DefaultTopologyPrefix).
	TopologyPrefix string
	// ParseNodeID reads a node_id back into its parts with the front end's
	// node id settings (proxy.nodeId), so a backend that grants hosts
	// access (ControllerPublishVolume) learns the node's IQN or NQN. Nil
	// when node ids are opaque.
	ParseNodeID func(nodeID string) (NodeIdentity, error)
	Logger      *slog.Logger
}

// NodeIdentity is what a node_id says about its node.
type NodeIdentity struct {
	Name, Hostname, IQN, NQN string
}

// Type describes one driver type ("local-hostpath").
type Type struct {
	// Name is the democratic-csi driver name; Aliases are accepted too
	// (truenas-* for freenas-*).
	Name    string
	Aliases []string
	// ConfigKey is the section holding the driver's own keys
	// ("local-hostpath", "zfs", ...), used in error messages.
	ConfigKey string
	// MaxVolumeIDLen and MaxSnapshotIDLen are the longest ids the backend
	// can return; `config check` warns when a connection name makes the
	// decorated handle exceed the CSI limit of 128 bytes.
	MaxVolumeIDLen   int
	MaxSnapshotIDLen int
	// NodeLocal is true when volumes live on one node: standalone, the
	// node reports {org.democratic-csi.topology/node: <node>} like
	// democratic-csi; behind the proxy nodeTopology.type must be node.
	NodeLocal bool
	// HostNQN is true when ControllerPublishVolume grants the node's NVMe
	// host NQN access: standalone, node ids then carry the NQN part
	// (proxy.nodeId.parts.nqn defaults to true).
	HostNQN bool
	// NodeOnly is true for a backend with node calls only (node-manual's
	// static PVs): standalone, the plugin then advertises no
	// CONTROLLER_SERVICE, so no provisioner or attacher waits on it.
	NodeOnly bool
	// Validate returns every problem in cfg (missing or malformed keys),
	// each naming the key; nil when cfg is usable.
	Validate func(cfg config.Tree) []config.Problem
	// Warnings, if set, returns what config check should point out in a
	// valid cfg (Problem.Warning set): things that work but trust more
	// than the user may think.
	Warnings func(cfg config.Tree) []config.Problem
	// New builds a driver from a validated config.
	New func(opts Options) (Driver, error)
}

// Constructor adapts a backend's typed New to Type.New. It returns a nil
// interface on error (not a typed nil pointer, which would not compare
// equal to nil).
func Constructor[D Driver](newFn func(Options) (D, error)) func(Options) (Driver, error) {
	return func(opts Options) (Driver, error) {
		d, err := newFn(opts)
		if err != nil {
			return nil, err
		}
		return d, nil
	}
}

// DriverOf is the driver type a config names. A config without `driver`
// whose top level has `accounts` is DDN Infinia's own config file
// (block.csi.red.ddn.com has no driver key): it runs infinia-nvmeof, so
// that file works unchanged.
func DriverOf(t config.Tree) (name string, inferred bool) {
	if d, _ := t.String("driver"); d != "" {
		return d, false
	}
	if v, ok := t.Lookup("accounts"); ok {
		if _, isMap := v.(map[string]any); isMap {
			return InfiniaDriver, true
		}
	}
	return "", false
}

// InfiniaDriver is the driver type DriverOf infers for DDN's config file.
const InfiniaDriver = "infinia-nvmeof"

// VolumeFinder is an optional Driver interface: FindVolume reports the
// volume a CreateVolume of req (its name, parameters and secrets) made, or
// (nil, nil) when there is none; a request whose parameters the backend
// would refuse holds no volume, so it is (nil, nil) too.
// The proxy asks every member of a connection set before making a volume,
// so a retried CreateVolume finds the volume on whichever member made it.
// Without it the proxy derives the id democratic-csi-style (the name,
// optionally hashed by _private.csi.volume.idHash.strategy, shortened to
// Type.MaxVolumeIDLen) and asks ControllerGetVolume or
// ValidateVolumeCapabilities; a backend whose ids are not derived from
// the name (Infinia: account, subtenant and service are in its ids) must
// implement it.
type VolumeFinder interface {
	FindVolume(ctx context.Context, req *csi.CreateVolumeRequest) (*csi.Volume, error)
}

// Replicator is an optional Driver interface for copies across
// connections that the storage system makes itself: two connections whose
// ReplicaEndpoint is equal (and not "") reach one system, so the target
// copies the source's snapshot with the system's own send | receive and
// nothing streams through the controller.
type Replicator interface {
	// ReplicaEndpoint names the storage system and the kind of volume.
	ReplicaEndpoint() string
	// ReplicaSource is the snapshot a content source (the backend's own
	// ids) is copied from; done removes a temporary one.
	ReplicaSource(ctx context.Context, src *csi.VolumeContentSource, forName string) (snap string, done func(), err error)
	// ReceiveReplica makes req's volume (no content source) from snap and
	// finishes it as a new volume.
	ReceiveReplica(ctx context.Context, req *csi.CreateVolumeRequest, snap string) (*csi.CreateVolumeResponse, error)
}

// StreamSender and StreamReceiver are optional Driver interfaces for clone
// and restore across connections: the proxy joins a sender's stream of a
// content source to a receiver's new volume when both speak the same
// StreamFormat (driver/transfer copies it through the controller).
type StreamSender interface {
	// StreamFormat names what the stream carries ("zfs-filesystem",
	// "zfs-volume"); only equal formats are joined.
	StreamFormat() string
	// SendSource prepares the stream of a content source (the backend's own
	// ids). forName is the new volume's name, for naming what the send
	// needs (a temporary snapshot); done removes it. size estimates the
	// stream in bytes (0: unknown).
	SendSource(ctx context.Context, src *csi.VolumeContentSource, forName string) (s transfer.Source, size int64, done func(), err error)
}

// StreamReceiver: see StreamSender.
type StreamReceiver interface {
	StreamFormat() string
	// ReceiveVolume prepares the target of req, which carries no content
	// source: the sink receives into it, and finish makes it a volume as
	// a fresh CreateVolume of req would (the connection's properties,
	// size and share) and returns it. A target already received and
	// finished by an earlier call makes the sink a no-op.
	ReceiveVolume(ctx context.Context, req *csi.CreateVolumeRequest) (sink transfer.Sink, finish func(context.Context) (*csi.CreateVolumeResponse, error), err error)
}
