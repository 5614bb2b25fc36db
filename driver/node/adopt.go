package node

import (
	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/driver/volumecontext"
)

// adoptStaged takes over a volume that is staged (its staging path is a
// mount point) but has no record: one staged by democratic-csi before this
// node plugin replaced it, or one whose record was lost. Without this, a
// node switched in place could not publish its running volumes to new pods
// until they were drained. It returns nil when there is nothing to adopt.
func (s *Service) adoptStaged(id, staging string, capability *csi.VolumeCapability, reqVC, pc map[string]string) (*record, error) {
	vc, from := attachContext(reqVC, pc)
	if capability.GetBlock() != nil || volumecontext.AttachDriver(vc) == "" {
		return nil, nil // block layouts differ between drivers: never guess
	}
	mounted, err := isMountPoint(s.host.Mounter, staging)
	if err != nil || !mounted {
		return nil, nil //nolint:nilerr // nothing to adopt: the caller answers as for an unstaged volume
	}
	a, err := s.attacherFor(id, vc)
	if err != nil {
		return nil, err
	}
	rec := &record{VolumeID: id, Attacher: a.Name(), Context: vc, ContextFrom: from, StagingPath: staging, Capability: capJSON{capability}, Staged: true}
	if err := s.saveRecord(rec); err != nil {
		return nil, status.Errorf(codes.Internal, "volume %s: recording the adopted staging mount: %v", id, err)
	}
	s.log.Info("adopted a staged volume this node had no record of (staged by an earlier plugin)", "volume_id", id, "staging_path", staging)
	return rec, nil
}
