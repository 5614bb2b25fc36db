// Package zfslocal is the zfs-local-dataset and zfs-local-zvol backends:
// ZFS on the node itself. The controller runs on every node (as
// democratic-csi deploys it) and drives that node's pool with the local zfs
// command line through driver/zfs/engine; a volume lives on the node whose
// controller made it and carries that node as its accessible topology, so
// the scheduler keeps its pods there. The node publishes a dataset by
// mounting it and a zvol through its /dev/zvol device (driver/node's
// zfs-local attacher).
//
// Expansion works for both (a dataset's refquota, a zvol's volsize and
// then its filesystem on the node), which democratic-csi cannot do for
// zfs-local-dataset (its issue #524).
package zfslocal

import (
	"context"

	"github.com/switchyard-csi/switchyard/driver/backend"
	"github.com/switchyard-csi/switchyard/driver/config"
	"github.com/switchyard-csi/switchyard/driver/volumecontext"
	"github.com/switchyard-csi/switchyard/driver/zfs"
	"github.com/switchyard-csi/switchyard/driver/zfs/engine"
)

// Driver names, as democratic-csi spells them.
const (
	DriverDataset = "zfs-local-dataset"
	DriverZvol    = "zfs-local-zvol"
)

func init() {
	for _, name := range []string{DriverDataset, DriverZvol} {
		backend.Register(backend.Type{
			Name:             name,
			ConfigKey:        "zfs",
			NodeLocal:        true,
			MaxVolumeIDLen:   engine.MaxVolumeIDLen,
			MaxSnapshotIDLen: engine.MaxSnapshotIDLen,
			Validate:         Validate,
			Warnings:         warnings,
			New:              backend.Constructor(New),
		})
	}
}

// parse reads the keys: those every ZFS backend shares and zfs.cli.*
// (sudoEnabled, paths). democratic-csi always runs zfs in the controller's
// own container; switchyard also takes an sshConnection, for a controller
// image without zfs tools that logs in to the node's own sshd (and for the
// lab's simulated host). The pool must be the node's either way: the
// volumes carry this node as their topology.
func parse(cfg config.Tree) (engine.CLIConfig, []config.Problem) {
	r := config.NewReader(cfg)
	engine.Validate(r)
	cli := engine.ReadCLI(r, false)
	return cli, r.Problems()
}

// warnings: an sshConnection must reach this node itself.
func warnings(cfg config.Tree) []config.Problem {
	ps := engine.SSHWarnings(cfg)
	if v, ok := cfg.Lookup("sshConnection"); ok && v != nil {
		ps = append(ps, config.Problem{Key: "sshConnection", Warning: true,
			Msg: "zfs-local runs zfs over SSH: the host must be the node this controller runs on (volumes carry this node as topology); for a remote ZFS host use zfs-generic-*"})
	}
	return ps
}

// Validate reports every problem in a zfs-local config, each naming its key.
func Validate(cfg config.Tree) []config.Problem {
	_, ps := parse(cfg)
	return ps
}

// New builds a driver from opts.Config. opts.NodeName (CSI_NODE_ID) is
// required: it is the volumes' topology. Nothing runs until the first call.
func New(opts backend.Options) (*Driver, error) {
	cli, ps := parse(opts.Config)
	if len(ps) > 0 {
		return nil, config.Problems(ps).InFile(opts.File)
	}
	name, _ := opts.Config.String("driver")
	if opts.NodeName == "" {
		return nil, errNoNodeName(name)
	}
	host, err := engine.NewCLIHost(opts, name, cli)
	if err != nil {
		return nil, err
	}
	return newDriver(opts, name, &platform{CLIHost: host})
}

// newDriver builds the engine on platform p (tests pass one whose zfs is a
// model or a fake).
func newDriver(opts backend.Options, name string, p engine.Platform) (*Driver, error) {
	fsTypes := []string{"zfs"}
	if name == DriverZvol {
		fsTypes = engine.BlockFSTypes
	}
	e, err := engine.New(engine.Options{Options: opts, Driver: name, Block: name == DriverZvol, FSTypes: fsTypes, Platform: p})
	if err != nil {
		return nil, err
	}
	key := backend.DefaultTopologyPrefix + "/node"
	if opts.TopologyPrefix != "" {
		key = opts.TopologyPrefix + "/node"
	}
	return &Driver{Engine: e, name: name, node: opts.NodeName, topoKey: key}, nil
}

// platform is the node's own ZFS: the local zfs command line, and a sharer
// that only says which dataset the node should use.
type platform struct {
	*engine.CLIHost
}

var _ engine.Platform = (*platform)(nil)

func (p *platform) Sharer() engine.Sharer { return localShare{} }

// MinQuota: zfs takes any refquota.
func (*platform) MinQuota() int64 { return 0 }

// localShare shares nothing: the volume is already on the node.
// volume_context names the dataset or zvol (democratic-csi's
// node_attach_driver zfs-local, zfs_asset_name).
type localShare struct{}

func (localShare) Create(_ context.Context, r engine.ShareRequest) (map[string]string, []zfs.Prop, error) {
	return volumecontext.ZFSLocal{AssetName: r.Dataset}.Encode(), nil, nil
}

func (localShare) Remove(context.Context, string, zfs.Properties) error { return nil }

func (localShare) AssetProps() []string { return nil }

// Datasets is the node's zfs, setting one property per `zfs set`: a node
// may run a zfs older than ZFS on Linux 0.7 (or zfs-fuse), whose `zfs set`
// takes a single property=value. Properties are set in the engine's order,
// so its completion marker still comes last. Setting is rare (creation,
// expansion), so the extra commands cost little.
func (p *platform) Datasets() zfs.Datasets { return oneSet{p.CLIHost.Datasets()} }

type oneSet struct{ zfs.Datasets }

func (o oneSet) Set(ctx context.Context, name string, props ...zfs.Prop) error {
	for _, p := range props {
		if err := o.Datasets.Set(ctx, name, p); err != nil {
			return err
		}
	}
	return nil
}
