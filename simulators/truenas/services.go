package truenas

import (
	"fmt"
	"path/filepath"

	"github.com/switchyard-csi/switchyard/simulators/truenas/sharing"
	"github.com/switchyard-csi/switchyard/simulators/truenas/storage"
)

// services are the method families of the storage and sharing packages
// plugged into the registry.
type services struct {
	sharing *sharing.Service
}

// close releases the services (their state is already on disk) and takes
// what they made real out of the kernel.
func (sv services) close() error {
	if sv.sharing == nil {
		return nil
	}
	return sv.sharing.Close()
}

// registerServices adds the storage (pool.*, pool.dataset.*, snapshots,
// filesystem.*, replication) and sharing (NFS, SMB, iSCSI, NVMe-oF) methods
// of s.version, with the sharing objects kept in StateDir/sharing.
func (s *Server) registerServices() error {
	if err := storage.Register(s.reg, s.model, s.version, storage.Options{Logger: s.log}); err != nil {
		return fmt.Errorf("truenas: storage services: %w", err)
	}
	sh, err := sharing.Register(s.reg, s.model, s.version, sharing.Options{
		StateDir: filepath.Join(s.opts.StateDir, "sharing"), Hostname: s.opts.Hostname, Logger: s.log,
		Kernel: s.opts.Kernel, KernelOwner: "truenas-" + s.opts.Hostname})
	if err != nil {
		return fmt.Errorf("truenas: sharing services: %w", err)
	}
	s.svc.sharing = sh
	return nil
}

// Sharing is the sharing service (NFS/SMB shares, iSCSI and NVMe-oF
// targets), for tests and the lab to inspect.
func (s *Server) Sharing() *sharing.Service { return s.svc.sharing }
