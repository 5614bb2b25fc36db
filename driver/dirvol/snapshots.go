package dirvol

import (
	"context"
	"os"
	"path/filepath"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/switchyard-csi/switchyard/driver/echo"
)

// isSnapshotDir reports whether a directory name from a request can name a
// snapshot directory.
func isSnapshotDir(dir string) bool { return safeComponent(dir) && !isTemporary(dir) }

// CreateSnapshot copies the source volume to <controllerBasePath>/s/<id>
// (democratic-csi's filecopy snapshot driver). It is idempotent by name.
func (d *Controller) CreateSnapshot(ctx context.Context, req *csi.CreateSnapshotRequest) (*csi.CreateSnapshotResponse, error) {
	srcID, name := req.GetSourceVolumeId(), req.GetName()
	if srcID == "" {
		return nil, status.Error(codes.InvalidArgument, "CreateSnapshot: source_volume_id is required")
	}
	id, err := snapshotID(name)
	if err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "CreateSnapshot: %v", err)
	}
	driver := d.cfg.SnapshotDriver
	if p := req.GetParameters()["driver"]; p != "" {
		driver = p // democratic-csi lets a VolumeSnapshotClass choose
	}
	if driver != snapshotDriverFilecopy {
		return nil, status.Errorf(codes.InvalidArgument, "CreateSnapshot %q: snapshot driver %q is not supported by switchyard's %s; only filecopy is (set parameters.driver to filecopy or remove it)", name, driver, d.flavor.Product)
	}
	if !isVolumeName(srcID) {
		return nil, status.Errorf(codes.NotFound, "CreateSnapshot %q: source volume %s not found (not %s)", name, echo.Quote(srcID), d.idNoun("volume"))
	}
	if err := d.be.Ready("CreateSnapshot"); err != nil {
		return nil, err
	}

	unlock := d.locks.lock("s:"+id, "v:"+srcID)
	defer unlock()
	defer d.listChanged()

	path := d.store.snapshotPath(id)
	exists, err := isDir(path)
	if err != nil {
		return nil, d.fsError("checking snapshot "+id, err)
	}
	if exists {
		m, err := d.store.readSnapshotMeta(id)
		switch {
		case err != nil:
			return nil, d.fsError("reading metadata of snapshot "+id, err)
		case m == nil:
			return nil, status.Errorf(codes.AlreadyExists, "CreateSnapshot %q: %s exists but was not cut by switchyard, so its source is unknown", name, path)
		case m.Name != name:
			return nil, status.Errorf(codes.AlreadyExists, "CreateSnapshot %q: snapshot id %q is already used by snapshot %q (the names map to the same id)", name, id, m.Name)
		case m.SourceVolumeID != srcID:
			return nil, status.Errorf(codes.AlreadyExists, "CreateSnapshot %q: a snapshot with this name exists for volume %q, not %q", name, m.SourceVolumeID, srcID)
		}
		return &csi.CreateSnapshotResponse{Snapshot: snapshotOf(id, m)}, nil
	}

	srcPath := d.store.volumePath(srcID)
	if ok, err := isDir(srcPath); err != nil {
		return nil, d.fsError("checking source volume "+srcID, err)
	} else if !ok {
		return nil, status.Errorf(codes.NotFound, "CreateSnapshot %q: source volume %q not found in %s", name, srcID, filepath.Dir(srcPath))
	}

	meta := &snapshotMeta{Name: name, SourceVolumeID: srcID, CreatedAt: d.now()}
	metaPath := d.store.snapshotMetaPath(id)
	fill := func(tmp string) error {
		if err := d.newCopier(ctx).copyTree(srcPath, tmp); err != nil {
			return d.fsError("copying volume "+srcID, err)
		}
		size, err := diskUsage(ctx, tmp)
		if err != nil {
			return d.fsError("measuring snapshot "+id, err)
		}
		meta.SizeBytes = size
		return nil
	}
	err = d.materialize(filepath.Join(d.store.base, snapshotsDir), id,
		fill,
		func() error { return writeJSON(metaPath, meta) },
		func() { _ = removeFile(metaPath) })
	if err != nil {
		return nil, err
	}
	d.log.Info("snapshot created", "name", name, "snapshot_id", id, "source_volume_id", srcID, "size_bytes", meta.SizeBytes)
	return &csi.CreateSnapshotResponse{Snapshot: snapshotOf(id, meta)}, nil
}

func snapshotOf(id string, m *snapshotMeta) *csi.Snapshot {
	return &csi.Snapshot{
		SnapshotId:     id,
		SourceVolumeId: m.SourceVolumeID,
		CreationTime:   timestamppb.New(m.CreatedAt),
		SizeBytes:      m.SizeBytes,
		ReadyToUse:     true,
	}
}

// DeleteSnapshot removes a snapshot directory and its metadata. A snapshot
// that does not exist (or an id that cannot name one) is already deleted.
func (d *Controller) DeleteSnapshot(ctx context.Context, req *csi.DeleteSnapshotRequest) (*csi.DeleteSnapshotResponse, error) {
	id := req.GetSnapshotId()
	if id == "" {
		return nil, status.Error(codes.InvalidArgument, "DeleteSnapshot: snapshot_id is required")
	}
	ref := parseSnapshotID(id)
	if ref.driver != snapshotDriverFilecopy {
		// OK would make the CO forget a backup switchyard cannot remove
		return nil, status.Errorf(codes.FailedPrecondition, "DeleteSnapshot: snapshot %q was cut by democratic-csi's %q snapshot driver, which switchyard does not support; delete it with %s's tools", id, ref.driver, ref.driver)
	}
	if !isSnapshotDir(ref.dir) {
		d.log.Warn("DeleteSnapshot: id cannot name "+d.nameNoun("snapshot")+"; nothing to delete", "snapshot_id", id)
		return &csi.DeleteSnapshotResponse{}, nil
	}
	if err := d.be.Ready("DeleteSnapshot"); err != nil {
		return nil, err
	}
	unlock := d.locks.lock("s:" + ref.dir)
	defer unlock()
	defer d.listChanged()
	metaPath := d.store.snapshotMetaPath(ref.dir)
	if err := d.dematerialize(filepath.Join(d.store.base, snapshotsDir), ref.dir, func() error { return removeFile(metaPath) }); err != nil {
		return nil, err
	}
	d.log.Info("snapshot deleted", "snapshot_id", id)
	return &csi.DeleteSnapshotResponse{}, nil
}

// GetSnapshot describes one snapshot.
func (d *Controller) GetSnapshot(ctx context.Context, req *csi.GetSnapshotRequest) (*csi.GetSnapshotResponse, error) {
	id := req.GetSnapshotId()
	if id == "" {
		return nil, status.Error(codes.InvalidArgument, "GetSnapshot: snapshot_id is required")
	}
	if err := d.be.Ready("GetSnapshot"); err != nil {
		return nil, err
	}
	snap, err := d.snapshotByID(id)
	if err != nil {
		return nil, err
	}
	if snap == nil {
		return nil, status.Errorf(codes.NotFound, "GetSnapshot: snapshot %q not found in %s", id, filepath.Join(d.store.base, snapshotsDir))
	}
	return &csi.GetSnapshotResponse{Snapshot: snap}, nil
}

// snapshotByID describes the snapshot an id from a request names, keeping
// the id as given; nil when there is none.
func (d *Controller) snapshotByID(id string) (*csi.Snapshot, error) {
	ref := parseSnapshotID(id)
	if ref.driver != snapshotDriverFilecopy || !isSnapshotDir(ref.dir) {
		return nil, nil
	}
	snap, err := d.snapshotInfo(ref.dir)
	if snap != nil {
		snap.SnapshotId = id
	}
	return snap, err
}

// snapshotInfo describes the snapshot directory dir, nil when it does not
// exist. A snapshot without switchyard metadata was cut by democratic-csi:
// it is named by democratic-csi's id form, its creation time is the
// directory's modification time, and its source and size are unknown.
func (d *Controller) snapshotInfo(dir string) (*csi.Snapshot, error) {
	path := d.store.snapshotPath(dir)
	fi, err := os.Lstat(path)
	if os.IsNotExist(err) || err == nil && !fi.IsDir() {
		return nil, nil
	}
	if err != nil {
		return nil, d.fsError("checking snapshot "+dir, err)
	}
	m, err := d.store.readSnapshotMeta(dir)
	if err != nil {
		return nil, d.fsError("reading metadata of snapshot "+dir, err)
	}
	if m != nil {
		return snapshotOf(dir, m), nil
	}
	return &csi.Snapshot{
		SnapshotId:   legacySnapshotID(dir),
		CreationTime: timestamppb.New(fi.ModTime()),
		ReadyToUse:   true,
	}, nil
}
