package node

import (
	"context"
	"errors"
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

// NodePublishVolume implements csi.NodeServer: bind the staged volume onto
// the target path, read-only when asked or when the access mode is a
// reader-only one.
func (s *Service) NodePublishVolume(ctx context.Context, req *csi.NodePublishVolumeRequest) (*csi.NodePublishVolumeResponse, error) {
	id := req.GetVolumeId()
	tgt, err := idAndPath(id, "target_path", req.GetTargetPath())
	if err != nil {
		return nil, err
	}
	capability := req.GetVolumeCapability()
	if err := checkCapability(id, capability); err != nil {
		return nil, err
	}
	staging := req.GetStagingTargetPath()
	if staging == "" {
		return nil, status.Errorf(codes.FailedPrecondition,
			"volume %s: staging_target_path is required: this plugin has STAGE_UNSTAGE_VOLUME, so NodeStageVolume must come first", id)
	}
	if err := requirePath(id, "staging_target_path", staging); err != nil {
		return nil, err
	}
	staging = filepath.Clean(staging)
	if _, ok := req.GetVolumeContext()[volumecontext.KeyAttachDriver]; ok {
		if _, err := s.attacherFor(id, req.GetVolumeContext()); err != nil {
			return nil, err
		}
	}

	rec, err := s.loadRecord(id)
	if err != nil {
		return nil, err
	}
	if rec == nil {
		if rec, err = s.adoptStaged(id, staging, capability, req.GetVolumeContext(), req.GetPublishContext()); err != nil {
			return nil, err
		}
	}
	if rec == nil || !rec.Staged {
		return nil, status.Errorf(codes.FailedPrecondition,
			"volume %s is not staged on this node; NodeStageVolume must succeed first", id)
	}
	if rec.StagingPath != staging {
		return nil, status.Errorf(codes.FailedPrecondition,
			"volume %s is staged at %s, not at %s", id, rec.StagingPath, staging)
	}
	a, err := s.recordedAttacher(rec)
	if err != nil {
		return nil, err
	}
	if err := a.Validate(&Volume{ID: id, Context: rec.Context, Capability: capability, StagingPath: staging}); err != nil {
		return nil, err
	}
	staged := rec.volume()
	if block := capability.GetBlock() != nil; block != staged.IsBlock() {
		return nil, status.Errorf(codes.FailedPrecondition,
			"volume %s is staged with access type %s and cannot be published with access type %s",
			id, accessType(staged.IsBlock()), accessType(block))
	}
	source := staged.StagedPath()
	live, err := isMountPoint(s.host.Mounter, source)
	if err != nil {
		return nil, status.Errorf(codes.Internal, "volume %s: staging path %s: %v", id, source, err)
	}
	if !live {
		return nil, status.Errorf(codes.FailedPrecondition,
			"volume %s: staging path %s is no longer mounted; stage the volume again", id, source)
	}

	mode := capability.GetAccessMode().GetMode()
	ro := req.GetReadonly() || readerOnly(mode)
	mounted, err := isMountPoint(s.host.Mounter, tgt)
	if err != nil {
		return nil, status.Errorf(codes.Internal, "volume %s: target path %s: %v", id, tgt, err)
	}
	if t, ok := rec.Targets[tgt]; ok {
		if t.Readonly != ro || !proto.Equal(t.Capability.VolumeCapability, capability) {
			return nil, status.Errorf(codes.AlreadyExists,
				"volume %s is already published at %s with readonly=%t and %s; unpublish it before publishing it there differently",
				id, tgt, t.Readonly, describe(t.Capability.VolumeCapability))
		}
		if mounted {
			return &csi.NodePublishVolumeResponse{}, nil
		}
		// Recorded but the mount is gone: publish again below.
	} else if mounted {
		// A mount we have no record of: ours if it shows the staged volume
		// (a retry after a lost record), anyone else's otherwise.
		mro, err := mountedReadOnly(s.host.Mounter, tgt)
		if err != nil {
			return nil, status.Errorf(codes.Internal, "volume %s: target path %s: %v", id, tgt, err)
		}
		if !sameFile(tgt, source) || mro != ro {
			return nil, status.Errorf(codes.AlreadyExists,
				"volume %s: target path %s already has a mount that is not this volume from %s with readonly=%t", id, tgt, source, ro)
		}
	}

	if err := s.pruneTargets(rec); err != nil {
		return nil, err
	}
	if others := otherTargets(rec, tgt); len(others) > 0 {
		if exclusive(mode) {
			return nil, status.Errorf(codes.FailedPrecondition,
				"volume %s has access mode %s and is already published at %s on this node",
				id, mode, strings.Join(others, ", "))
		}
		for _, o := range others {
			if m := rec.Targets[o].Capability.GetAccessMode().GetMode(); exclusive(m) {
				return nil, status.Errorf(codes.FailedPrecondition,
					"volume %s is published at %s with access mode %s, which allows no other target on this node", id, o, m)
			}
		}
	}

	// Record the target before mounting, so an unpublish or unstage after
	// a crash knows about it.
	if rec.Targets == nil {
		rec.Targets = map[string]target{}
	}
	rec.Targets[tgt] = target{Readonly: ro, Capability: capJSON{capability}}
	if err := s.saveRecord(rec); err != nil {
		return nil, err
	}
	if !mounted {
		if err := s.bind(source, tgt, staged.IsBlock(), ro); err != nil {
			delete(rec.Targets, tgt)
			if serr := s.store.save(rec); serr != nil {
				s.log.Error("cannot drop failed target from node record", "volume_id", id, "error", serr)
			}
			return nil, status.Errorf(codes.Internal, "volume %s: publish at %s: %v", id, tgt, err)
		}
	}
	s.log.Info("volume published", "volume_id", id, "target", tgt, "readonly", ro)
	return &csi.NodePublishVolumeResponse{}, nil
}

// bind creates the target (a directory, or a file for a block device) and
// bind-mounts source onto it. mount-utils turns "ro" on a bind into a bind
// followed by a read-only remount, which the kernel needs.
func (s *Service) bind(source, tgt string, block, ro bool) error {
	if block {
		if err := os.MkdirAll(filepath.Dir(tgt), 0o750); err != nil {
			return err
		}
		f, err := os.OpenFile(tgt, os.O_CREATE|os.O_RDONLY, 0o640)
		if err != nil {
			return err
		}
		_ = f.Close()
	} else if err := os.MkdirAll(tgt, 0o750); err != nil {
		return err
	}
	opts := []string{"bind"}
	if ro {
		opts = append(opts, "ro")
	}
	return s.host.Mounter.Mount(source, tgt, "", opts)
}

// pruneTargets forgets recorded targets that are no longer mounted (the CO
// cleaned them up, the node rebooted), so they do not block access-mode
// checks or unstaging forever.
func (s *Service) pruneTargets(rec *record) error {
	changed := false
	for t := range rec.Targets {
		mounted, err := isMountPoint(s.host.Mounter, t)
		if err != nil {
			return status.Errorf(codes.Internal, "volume %s: target path %s: %v", rec.VolumeID, t, err)
		}
		if !mounted {
			delete(rec.Targets, t)
			changed = true
		}
	}
	if changed {
		return s.saveRecord(rec)
	}
	return nil
}

func otherTargets(rec *record, tgt string) []string {
	var out []string
	for _, t := range slices.Sorted(maps.Keys(rec.Targets)) {
		if t != tgt {
			out = append(out, t)
		}
	}
	return out
}

// NodeUnpublishVolume implements csi.NodeServer: unmount the target and
// remove the directory or file, as the spec requires of the plugin.
func (s *Service) NodeUnpublishVolume(ctx context.Context, req *csi.NodeUnpublishVolumeRequest) (*csi.NodeUnpublishVolumeResponse, error) {
	id := req.GetVolumeId()
	tgt, err := idAndPath(id, "target_path", req.GetTargetPath())
	if err != nil {
		return nil, err
	}

	if err := s.unmountAll(ctx, tgt); err != nil {
		return nil, status.Errorf(codes.Internal, "volume %s: %v", id, err)
	}
	if err := removeMountPath(tgt); err != nil {
		if errors.Is(err, errNotEmpty) {
			return nil, status.Errorf(codes.FailedPrecondition,
				"volume %s: target path %s is not mounted but not empty; refusing to delete its contents", id, tgt)
		}
		return nil, status.Errorf(codes.Internal, "volume %s: remove target path %s: %v", id, tgt, err)
	}
	rec, err := s.loadRecord(id)
	if err != nil {
		return nil, err
	}
	if _, ok := rec.targets()[tgt]; ok {
		delete(rec.Targets, tgt)
		if err := s.saveRecord(rec); err != nil {
			return nil, err
		}
	}
	s.log.Info("volume unpublished", "volume_id", id, "target", tgt)
	return &csi.NodeUnpublishVolumeResponse{}, nil
}
