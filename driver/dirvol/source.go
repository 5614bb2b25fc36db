package dirvol

import (
	"fmt"
	"path/filepath"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/driver/echo"
)

const (
	sourceVolume   = "volume"
	sourceSnapshot = "snapshot"
)

// requestSource reads a CreateVolume content source (nil for none).
func requestSource(s *csi.VolumeContentSource) (*contentSource, error) {
	switch {
	case s == nil:
		return nil, nil
	case s.GetSnapshot() != nil:
		if s.GetSnapshot().GetSnapshotId() == "" {
			return nil, status.Error(codes.InvalidArgument, "CreateVolume: volume_content_source.snapshot.snapshot_id is required")
		}
		return &contentSource{Type: sourceSnapshot, ID: s.GetSnapshot().GetSnapshotId()}, nil
	case s.GetVolume() != nil:
		if s.GetVolume().GetVolumeId() == "" {
			return nil, status.Error(codes.InvalidArgument, "CreateVolume: volume_content_source.volume.volume_id is required")
		}
		return &contentSource{Type: sourceVolume, ID: s.GetVolume().GetVolumeId()}, nil
	}
	return nil, status.Error(codes.InvalidArgument, "CreateVolume: volume_content_source names neither a snapshot nor a volume")
}

// lockKey is the key that keeps the source from changing during the copy.
func (s *contentSource) lockKey() string {
	if s.Type == sourceSnapshot {
		return "s:" + parseSnapshotID(s.ID).dir
	}
	return "v:" + s.ID
}

func (s *contentSource) equal(o *contentSource) bool {
	if s == nil || o == nil {
		return s == o
	}
	return *s == *o
}

func (s *contentSource) String() string {
	if s == nil {
		return "none"
	}
	return fmt.Sprintf("%s %q", s.Type, s.ID)
}

func (s *contentSource) csi() *csi.VolumeContentSource {
	switch {
	case s == nil:
		return nil
	case s.Type == sourceSnapshot:
		return &csi.VolumeContentSource{Type: &csi.VolumeContentSource_Snapshot{
			Snapshot: &csi.VolumeContentSource_SnapshotSource{SnapshotId: s.ID},
		}}
	default:
		return &csi.VolumeContentSource{Type: &csi.VolumeContentSource_Volume{
			Volume: &csi.VolumeContentSource_VolumeSource{VolumeId: s.ID},
		}}
	}
}

// sourcePath is the directory a clone or restore copies: "" for no source,
// NOT_FOUND when the source does not exist.
func (d *Controller) sourcePath(s *contentSource) (string, error) {
	if s == nil {
		return "", nil
	}
	if s.Type == sourceVolume {
		if !isVolumeName(s.ID) {
			return "", status.Errorf(codes.NotFound, "CreateVolume: source volume %s not found (not %s)", echo.Quote(s.ID), d.idNoun("volume"))
		}
		path := d.store.volumePath(s.ID)
		ok, err := isDir(path)
		if err != nil {
			return "", d.fsError("checking source volume", err)
		}
		if !ok {
			return "", status.Errorf(codes.NotFound, "CreateVolume: source volume %q not found in %s", s.ID, filepath.Dir(path))
		}
		return path, nil
	}
	ref := parseSnapshotID(s.ID)
	if ref.driver != snapshotDriverFilecopy {
		return "", status.Errorf(codes.InvalidArgument, "CreateVolume: source snapshot %q was cut by democratic-csi's %q snapshot driver; switchyard only restores filecopy snapshots", s.ID, ref.driver)
	}
	if !isSnapshotDir(ref.dir) {
		return "", status.Errorf(codes.NotFound, "CreateVolume: source snapshot %s not found (not %s)", echo.Quote(s.ID), d.idNoun("snapshot"))
	}
	path := d.store.snapshotPath(ref.dir)
	ok, err := isDir(path)
	if err != nil {
		return "", d.fsError("checking source snapshot", err)
	}
	if !ok {
		return "", status.Errorf(codes.NotFound, "CreateVolume: source snapshot %q not found in %s", s.ID, filepath.Dir(path))
	}
	return path, nil
}
