package storage

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"

	"github.com/switchyard-csi/switchyard/simulators/truenas/middleware"
	"github.com/switchyard-csi/switchyard/simulators/zfsmodel"
)

// Options configure Register.
type Options struct {
	// Logger receives debug lines about what the services did; nil
	// discards them.
	Logger *slog.Logger
}

// service holds what every handler needs. Datasets, snapshots and their
// properties all live in the model, which is safe for concurrent use.
type service struct {
	r   *middleware.Registry
	m   *zfsmodel.Model
	v   middleware.Version
	log *slog.Logger
	// acls holds non-trivial ACLs of paths whose filesystem has no user
	// xattrs (see filesystem_acl.go); the only state of the service.
	acls *sync.Map
	keys *keychain // keychaincredential.* (keychain.go), for replication over SSH

	// The dataset create and update schemas, built once (they depend on
	// the version only) rather than per call.
	dsSchemaOnce [2]sync.Once
	dsSchema     [2]schema
}

// Register adds the storage methods of TrueNAS version v to r, served
// from m: pool.query/get_instance, pool.dataset.*, zfs.snapshot.* (up to
// 25.04) or pool.snapshot.* (25.10 on), filesystem.setperm/chown/stat and
// replication.run_onetime.
func Register(r *middleware.Registry, m *zfsmodel.Model, v middleware.Version, o Options) error {
	if r == nil || m == nil {
		return errors.New("storage: Register needs a registry and a model")
	}
	if !v.AtLeast(24, 10, 0) {
		return fmt.Errorf("storage: TrueNAS %s is not simulated (24.10 or later)", v)
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	s := &service{r: r, m: m, v: v, log: log, acls: &sync.Map{}}
	s.registerPool()
	s.registerDataset()
	s.registerSnapshot()
	s.registerFilesystem()
	s.registerACL()
	s.registerReplication()
	s.registerKeychain()
	s.registerZFSResource()
	return nil
}

// pydantic reports whether a namespace's methods validate their arguments
// with the new (pydantic) API models in this version, which changes the
// wording of schema errors. pool.dataset, the snapshot service and
// replication moved in 25.10; filesystem moved in 25.04.
func (s *service) pydantic() bool { return s.v.AtLeast(25, 10, 0) }

// snapshotNS is the public snapshot namespace: zfs.snapshot up to 25.04,
// pool.snapshot from 25.10 (zfs.snapshot became private then).
func (s *service) snapshotNS() string {
	if s.v.AtLeast(25, 10, 0) {
		return "pool.snapshot"
	}
	return "zfs.snapshot"
}

// progress reports job progress when the call is a job.
func progress(c *middleware.Call, pct float64, desc string) {
	if c != nil && c.Progress != nil {
		c.Progress(pct, desc)
	}
}
