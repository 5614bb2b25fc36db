// Package infinia is the infinia-nvmeof backend: block volumes on DDN
// Infinia, exported over NVMe-oF/TCP, managed through Infinia's REST API
// (package api). Its config file, StorageClass parameters, secrets and
// volume handles are those of DDN's own CSI driver (block.csi.red.ddn.com),
// so a DDN deployment's config and PersistentVolumes keep working.
//
// Each volume gets an NVMe-oF subsystem of its own, named like the volume,
// so ControllerPublishVolume can grant one node's host NQN access to one
// volume. The node side needs only the volume_context (nqn, transports,
// nsid, uuid) this package returns.
package infinia

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/driver/backend"
	"github.com/switchyard-csi/switchyard/driver/config"
	"github.com/switchyard-csi/switchyard/driver/infinia/api"
)

// DriverName is the driver type (config `driver:`, volume_context
// provisioner_driver).
const DriverName = "infinia-nvmeof"

// reloadEvery is how often a standalone driver checks its config file, as
// DDN's driver does (a variable for tests).
var reloadEvery = 3 * time.Second

func init() {
	backend.Register(backend.Type{
		Name:           DriverName,
		ConfigKey:      sectionKey,
		MaxVolumeIDLen: MaxVolumeIDLen,
		HostNQN:        true,
		Validate:       Validate,
		New:            backend.Constructor(New),
	})
}

// Driver is a configured infinia-nvmeof backend (the controller service).
type Driver struct {
	csi.UnimplementedControllerServer

	file        string
	log         *slog.Logger
	accounts    atomic.Pointer[accountSet]
	clients     *clientPool
	parseNodeID func(string) (backend.NodeIdentity, error)
	datasets    sync.Map // account key + "\x00" + subtenant/service → dataset name

	stop, stopped chan struct{}
}

var _ backend.Driver = (*Driver)(nil)

// New builds a driver from opts.Config (nothing is contacted yet). A
// standalone driver (no opts.Connection) re-reads opts.File every 3 s; the
// proxy rebuilds drivers itself when a connection file changes.
func New(opts backend.Options) (*Driver, error) {
	set, ps := parseAccounts(opts.Config)
	if len(ps) > 0 {
		return nil, config.Problems(ps).InFile(opts.File)
	}
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	log = log.With("driver", DriverName)
	if opts.Connection != "" {
		log = log.With("connection", opts.Connection)
	}
	d := &Driver{file: opts.File, log: log, clients: newClientPool(log), parseNodeID: opts.ParseNodeID}
	d.accounts.Store(set)
	if opts.Connection == "" && opts.File != "" {
		d.stop, d.stopped = make(chan struct{}), make(chan struct{})
		go d.watch(opts.File, reloadEvery)
	}
	return d, nil
}

// Close stops the config watch and drops idle connections.
func (d *Driver) Close() error {
	if d.stop != nil {
		close(d.stop)
		<-d.stopped
		d.stop = nil
	}
	d.clients.closeAll()
	return nil
}

// Stats sums the REST clients' counters (logins, requests, failovers).
func (d *Driver) Stats() api.Stats { return d.clients.stats() }

func (d *Driver) fileName() string {
	if d.file == "" {
		return "the driver config"
	}
	return d.file
}

// ControllerGetCapabilities lists what this backend implements. Not
// PUBLISH_READONLY: an Infinia host grant has no read-only flag, so a
// read-only publish could not be told from a read-write one (the node
// mounts read-only volumes with ro).
func (d *Driver) ControllerGetCapabilities(context.Context, *csi.ControllerGetCapabilitiesRequest) (*csi.ControllerGetCapabilitiesResponse, error) {
	return backend.Capabilities(
		csi.ControllerServiceCapability_RPC_CREATE_DELETE_VOLUME,
		csi.ControllerServiceCapability_RPC_PUBLISH_UNPUBLISH_VOLUME,
		csi.ControllerServiceCapability_RPC_EXPAND_VOLUME,
		csi.ControllerServiceCapability_RPC_GET_CAPACITY,
		csi.ControllerServiceCapability_RPC_LIST_VOLUMES,
		csi.ControllerServiceCapability_RPC_SINGLE_NODE_MULTI_WRITER,
		csi.ControllerServiceCapability_RPC_GET_VOLUME,
	), nil
}

// target is a parsed handle resolved to its account and client.
type target struct {
	h    handle
	acct *account
	c    *api.Client
}

// resolve finds the account and client of a handle. An account that is
// not configured is FAILED_PRECONDITION for every call: success on delete
// would make the CO forget a volume that still exists.
func (d *Driver) resolve(h handle, secrets map[string]string) (target, error) {
	set := d.accounts.Load()
	a, ok := set.byKey[h.account]
	if !ok {
		return target{}, errNoAccount(codes.FailedPrecondition, h.account, d.file, set)
	}
	c, err := d.client(a, secrets)
	if err != nil {
		return target{}, err
	}
	return target{h: h, acct: a, c: c}, nil
}

// client is the account's client, or one for its secret overrides.
func (d *Driver) client(a *account, secrets map[string]string) (*api.Client, error) {
	cfg, err := withSecrets(a, secrets)
	if err != nil {
		return nil, err
	}
	return d.clients.get(a, cfg)
}

// service reads a service (and remembers its dataset).
func (d *Driver) service(ctx context.Context, c *api.Client, a *account, sub, svc string) (*api.Service, error) {
	s, err := c.GetService(ctx, sub, svc)
	if err != nil {
		return nil, err
	}
	d.datasets.Store(a.key+"\x00"+sub+"/"+svc, s.DatasetName())
	return s, nil
}

// dataset is where a service keeps its volumes; a service never moves, so
// the answer is remembered.
func (d *Driver) dataset(ctx context.Context, t target) (string, error) {
	if ds, ok := d.datasets.Load(t.h.account + "\x00" + t.h.subtenant + "/" + t.h.service); ok {
		return ds.(string), nil
	}
	s, err := d.service(ctx, t.c, t.acct, t.h.subtenant, t.h.service)
	if err != nil {
		return "", err
	}
	return s.DatasetName(), nil
}

// volume reads the volume a handle names: NOT_FOUND when it or its service
// does not exist.
func (d *Driver) volume(ctx context.Context, t target) (*api.Volume, string, error) {
	ds, err := d.dataset(ctx, t)
	if api.IsNotFound(err) {
		return nil, "", status.Errorf(codes.NotFound, "volume %s does not exist: account %s has no service %s/%s", t.h, t.acct.key, t.h.subtenant, t.h.service)
	}
	if err != nil {
		return nil, "", apiErr(err, t.acct, "reading service "+t.h.subtenant+"/"+t.h.service)
	}
	v, err := t.c.GetVolume(ctx, t.h.subtenant, ds, t.h.volume)
	if api.IsNotFound(err) {
		return nil, ds, status.Errorf(codes.NotFound, "volume %s does not exist", t.h)
	}
	if err != nil {
		return nil, ds, apiErr(err, t.acct, "reading volume "+t.h.String())
	}
	return v, ds, nil
}
