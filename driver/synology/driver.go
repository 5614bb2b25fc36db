// Package synology is the synology-iscsi, synology-nfs and synology-smb
// backends: volumes on a Synology NAS, made through DSM's Web API
// (package dsm). Its config keys, handles and volume_context are
// democratic-csi's controller-synology ones (httpConnection, synology,
// iscsi with lunTemplate/targetTemplate/lunSnapshotTemplate), so a
// democratic-csi deployment's config and PersistentVolumes keep working.
//
// synology-iscsi: a volume is a LUN named <namePrefix><name><nameSuffix>
// (lower case) with its own target <baseiqn><LUN name>; snapshots are LUN
// snapshots, clones DSM's LUN clones. synology-nfs and synology-smb
// (which democratic-csi lists but never implemented) make a shared folder
// per volume with a quota, exported over NFS (SharePrivilege rules) or
// SMB (share permissions); snapshots are share snapshots, clones share
// clones.
package synology

import (
	"context"
	"log/slog"
	"sync"

	"github.com/container-storage-interface/spec/lib/go/csi"

	"github.com/switchyard-csi/switchyard/driver/backend"
	"github.com/switchyard-csi/switchyard/driver/config"
	"github.com/switchyard-csi/switchyard/driver/synology/dsm"
)

// The driver types.
const (
	DriverISCSI = "synology-iscsi"
	DriverNFS   = "synology-nfs"
	DriverSMB   = "synology-smb"
)

// Id limits: an iSCSI volume id is the request name (lower case) when it
// has at most 64 bytes, else shortened with its md5 (package volumeid), so
// a proxy handle keeps room for the connection name; the LUN name adds
// namePrefix and nameSuffix and must fit DSM's 128 characters. A share's
// id is its name (DSM: 32 characters). Snapshot ids are
// /lun/<uuid>/<uuid> and /share/<name>/<GMT time>.
const (
	maxVolumeID     = 64
	maxLunName      = 128
	maxShareName    = 32
	maxLunSnapID    = len("/lun//") + 36 + 36
	maxShareSnapID  = len("/share//") + maxShareName + len("GMT+00-2006.01.02-15.04.05")
	defaultLocation = "/volume1"
)

func init() {
	for _, t := range []struct {
		name       string
		vol, snap  int
		configKeys string
	}{
		{DriverISCSI, maxVolumeID, maxLunSnapID, "iscsi"},
		{DriverNFS, maxShareName, maxShareSnapID, "nfs"},
		{DriverSMB, maxShareName, maxShareSnapID, "smb"},
	} {
		backend.Register(backend.Type{
			Name: t.name, ConfigKey: t.configKeys, MaxVolumeIDLen: t.vol, MaxSnapshotIDLen: t.snap,
			Validate: Validate, Warnings: warnings, New: backend.Constructor(New),
		})
	}
}

// warnings points out a config that trusts more than a user may think.
func warnings(t config.Tree) []config.Problem {
	s, ps := parse(t)
	if len(ps) > 0 {
		return nil
	}
	var out []config.Problem
	if s.conn.Protocol == "http" {
		out = append(out, config.Problem{Key: "httpConnection.protocol", Warning: true,
			Msg: "http sends the DSM password and session in clear text; use https (port 5001)"})
	} else if s.conn.AllowInsecure {
		out = append(out, config.Problem{Key: "httpConnection.allowInsecure", Warning: true,
			Msg: "the DSM certificate is not verified"})
	}
	return out
}

// Driver is a configured synology-* backend (the controller service).
type Driver struct {
	csi.UnimplementedControllerServer

	s   *settings
	log *slog.Logger
	c   *dsm.Client
	// serial holds every DSM call sequence when httpConnection.serialize
	// is set (as democratic-csi serializes its API calls).
	serial sync.Mutex
}

var _ backend.Driver = (*Driver)(nil)

// New builds a driver from opts.Config; DSM is contacted by the first call.
func New(opts backend.Options) (*Driver, error) {
	s, ps := parse(opts.Config)
	if len(ps) > 0 {
		return nil, config.Problems(ps).InFile(opts.File)
	}
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	log = log.With("driver", s.driver)
	if opts.Connection != "" {
		log = log.With("connection", opts.Connection)
	}
	return &Driver{s: s, log: log, c: dsm.New(s.conn)}, nil
}

// Close drops idle connections to DSM.
func (d *Driver) Close() error {
	d.c.Close()
	return nil
}

// Client is the DSM client (tests count its logins).
func (d *Driver) Client() *dsm.Client { return d.c }

// lock serializes calls when httpConnection.serialize asks for it.
func (d *Driver) lock() func() {
	if !d.s.serialize {
		return func() {}
	}
	d.serial.Lock()
	return d.serial.Unlock
}

func (d *Driver) block() bool { return d.s.driver == DriverISCSI }

// ControllerGetCapabilities: everything but publishing (a target admits
// every initiator, or the CHAP ones, as democratic-csi makes them).
func (d *Driver) ControllerGetCapabilities(context.Context, *csi.ControllerGetCapabilitiesRequest) (*csi.ControllerGetCapabilitiesResponse, error) {
	return backend.Capabilities(
		csi.ControllerServiceCapability_RPC_CREATE_DELETE_VOLUME,
		csi.ControllerServiceCapability_RPC_GET_CAPACITY,
		csi.ControllerServiceCapability_RPC_CREATE_DELETE_SNAPSHOT,
		csi.ControllerServiceCapability_RPC_LIST_SNAPSHOTS,
		csi.ControllerServiceCapability_RPC_GET_SNAPSHOT,
		csi.ControllerServiceCapability_RPC_CLONE_VOLUME,
		csi.ControllerServiceCapability_RPC_EXPAND_VOLUME,
		csi.ControllerServiceCapability_RPC_LIST_VOLUMES,
		csi.ControllerServiceCapability_RPC_SINGLE_NODE_MULTI_WRITER,
	), nil
}
