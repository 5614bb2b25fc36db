package node

import (
	"context"
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/switchyard-csi/switchyard/driver/volumecontext"
)

// NodeStageVolume implements csi.NodeServer: the attacher makes the volume
// appear at the staging path; the record remembers how.
func (s *Service) NodeStageVolume(ctx context.Context, req *csi.NodeStageVolumeRequest) (*csi.NodeStageVolumeResponse, error) {
	id := req.GetVolumeId()
	staging, err := idAndPath(id, "staging_target_path", req.GetStagingTargetPath())
	if err != nil {
		return nil, err
	}
	if err := checkCapability(id, req.GetVolumeCapability()); err != nil {
		return nil, err
	}
	vc, from := attachContext(req.GetVolumeContext(), req.GetPublishContext())
	a, err := s.attacherFor(id, vc)
	if err != nil {
		return nil, err
	}
	v := &Volume{
		ID:             id,
		Context:        vc,
		PublishContext: req.GetPublishContext(),
		Secrets:        req.GetSecrets(),
		Capability:     req.GetVolumeCapability(),
		StagingPath:    staging,
	}
	if err := a.Validate(v); err != nil {
		return nil, err
	}

	old, err := s.loadRecord(id)
	if err != nil {
		return nil, err
	}
	if old != nil && old.Staged {
		live, err := isMountPoint(s.host.Mounter, old.volume().StagedPath())
		if err != nil {
			return nil, status.Errorf(codes.Internal, "volume %s: staging path %s: %v", id, old.StagingPath, err)
		}
		if live {
			if old.StagingPath != staging {
				return nil, status.Errorf(codes.AlreadyExists,
					"volume %s is already staged at %s; it can be staged at one path per node (unstage it there first)", id, old.StagingPath)
			}
			if diff := stageDiff(old, a.Name(), v); diff != "" {
				return nil, status.Errorf(codes.AlreadyExists,
					"volume %s is already staged at %s with a different %s", id, staging, diff)
			}
			return &csi.NodeStageVolumeResponse{}, nil
		}
		// Recorded but no longer mounted (node reboot, manual unmount):
		// stage it again under this request.
	}

	// Record first: if the plugin dies while attaching, NodeUnstageVolume
	// still finds what to release.
	rec := &record{
		VolumeID:       id,
		Attacher:       a.Name(),
		Context:        v.Context,
		ContextFrom:    from,
		PublishContext: v.PublishContext,
		StagingPath:    staging,
		Capability:     capJSON{v.Capability},
	}
	if old != nil {
		rec.Targets = old.Targets
	}
	if err := s.saveRecord(rec); err != nil {
		return nil, err
	}
	// The CO creates the staging directory, but recreating a missing one
	// is harmless and lets a retry after an unstage succeed.
	if err := os.MkdirAll(staging, 0o750); err != nil {
		return nil, status.Errorf(codes.Internal, "volume %s: create staging path %s: %v", id, staging, err)
	}
	v.Retry = old != nil
	if err := a.Stage(ctx, s.host, v); err != nil {
		s.log.Warn("stage failed", "volume", v, "error", err)
		return nil, asStatus(err, id, a.Name()+" stage")
	}
	rec.Staged = true
	if err := s.saveRecord(rec); err != nil {
		return nil, err
	}
	s.log.Info("volume staged", "volume", v)
	return &csi.NodeStageVolumeResponse{}, nil
}

// stageDiff names what differs between a live staging and a new request
// ("" when they are the same, so the request is a retry).
func stageDiff(rec *record, attacher string, v *Volume) string {
	var diffs []string
	if rec.Attacher != attacher {
		diffs = append(diffs, volumecontext.KeyAttachDriver+" ("+rec.Attacher+")")
	}
	if !maps.Equal(rec.Context, v.Context) {
		diffs = append(diffs, "volume_context")
	}
	if !proto.Equal(rec.Capability.VolumeCapability, v.Capability) {
		diffs = append(diffs, "volume_capability ("+describe(rec.Capability.VolumeCapability)+")")
	}
	return strings.Join(diffs, " and ")
}

// NodeUnstageVolume implements csi.NodeServer: unmount the staging path,
// let the attacher release the volume, forget it.
func (s *Service) NodeUnstageVolume(ctx context.Context, req *csi.NodeUnstageVolumeRequest) (*csi.NodeUnstageVolumeResponse, error) {
	id := req.GetVolumeId()
	staging, err := idAndPath(id, "staging_target_path", req.GetStagingTargetPath())
	if err != nil {
		return nil, err
	}

	rec, err := s.loadRecord(id)
	if err != nil {
		return nil, err
	}
	var a Attacher
	if rec != nil {
		if rec.StagingPath != staging {
			// The spec: not staged at this path → OK. The path is not
			// ours to unmount.
			s.log.Warn("unstage of a path the volume is not staged at", "volume_id", id, "staging", staging, "recorded", rec.StagingPath)
			return &csi.NodeUnstageVolumeResponse{}, nil
		}
		if a, err = s.recordedAttacher(rec); err != nil {
			return nil, err
		}
		if err := s.pruneTargets(rec); err != nil {
			return nil, err
		}
		if len(rec.Targets) > 0 {
			return nil, status.Errorf(codes.FailedPrecondition,
				"volume %s is still published at %s; NodeUnpublishVolume must come first",
				id, strings.Join(slices.Sorted(maps.Keys(rec.Targets)), ", "))
		}
	}

	if err := s.unmountStaging(ctx, rec, staging); err != nil {
		return nil, status.Errorf(codes.Internal, "volume %s: %v", id, err)
	}
	if a != nil {
		// Unmounted: this volume no longer holds a shared connection, so
		// a concurrent unstage of another volume may release it.
		rec.Releasing = true
		if err := s.saveRecord(rec); err != nil {
			return nil, err
		}
		if err := a.Unstage(ctx, s.host, rec.volume()); err != nil {
			return nil, asStatus(err, id, a.Name()+" unstage")
		}
	}
	// The CO owns the staging directory; removing it once empty is what
	// Kubernetes does next anyway, and a non-empty one is left alone.
	if err := removeMountPath(staging); err != nil {
		s.log.Warn("staging path left in place", "volume_id", id, "staging", staging, "error", err)
	}
	if err := s.store.remove(id); err != nil {
		return nil, status.Errorf(codes.Internal, "volume %s: %v", id, err)
	}
	if rec != nil {
		s.log.Info("volume unstaged", "volume", rec.volume())
	}
	return &csi.NodeUnstageVolumeResponse{}, nil
}

// unmountStaging undoes the mounts of a staging: the block device bound
// under it, then the staging path itself.
func (s *Service) unmountStaging(ctx context.Context, rec *record, staging string) error {
	dev := filepath.Join(staging, StagedBlockDevice)
	var block bool
	if rec != nil {
		block = rec.volume().IsBlock()
	} else {
		// No record (lost state dir): a block staging is a plain directory
		// holding block_device. When the staging path is itself a mount,
		// block_device would be a file inside the volume, so never touch it.
		mounted, err := isMountPoint(s.host.Mounter, staging)
		if err != nil {
			return err
		}
		_, statErr := os.Lstat(dev)
		block = !mounted && statErr == nil
	}
	if block {
		if err := s.unmountAll(ctx, dev); err != nil {
			return err
		}
		if err := os.Remove(dev); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return s.unmountAll(ctx, staging)
}
