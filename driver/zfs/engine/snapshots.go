package engine

import (
	"context"
	"strconv"
	"strings"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/switchyard-csi/switchyard/driver/echo"
	"github.com/switchyard-csi/switchyard/driver/volumeid"
	"github.com/switchyard-csi/switchyard/driver/zfs"
)

// snapshotRef is a snapshot id resolved to zfs: `<volume>@<name>` is a zfs
// snapshot of the volume's dataset; `<volume>/<name>` is a detached
// snapshot, a dataset under detachedSnapshotsDatasetParentName.
type snapshotRef struct {
	volumeID string
	name     string
	detached bool
	dataset  string // the zfs snapshot, or the detached dataset
}

func (e *Engine) parseSnapshotID(id string) (snapshotRef, bool) {
	if len(id) > 255 {
		return snapshotRef{}, false
	}
	if i := strings.IndexByte(id, '@'); i > 0 {
		vol, name := id[:i], id[i+1:]
		if !volumeIDOK(vol) || name == "" || volumeid.InvalidChars(name, volumeid.IsSnapshotChar) != "" {
			return snapshotRef{}, false
		}
		return snapshotRef{volumeID: vol, name: name, dataset: e.cfg.datasetName(id)}, true
	}
	if i := strings.IndexByte(id, '/'); i > 0 && e.cfg.snapshot != "" {
		vol, name := id[:i], id[i+1:]
		if !volumeIDOK(vol) || name == "" || volumeid.InvalidChars(name, volumeid.IsSnapshotChar) != "" {
			return snapshotRef{}, false
		}
		return snapshotRef{volumeID: vol, name: name, detached: true, dataset: e.cfg.snapshot + "/" + id}, true
	}
	return snapshotRef{}, false
}

var snapshotProps = []string{"creation", "volsize", "referenced", "type", propSnapshotName, propSnapshotSource, propManaged}

// CreateSnapshot snapshots a volume: a zfs snapshot, or with the snapshot
// class parameter detachedSnapshots: "true" a full copy (send | receive)
// under detachedSnapshotsDatasetParentName that outlives its volume.
func (e *Engine) CreateSnapshot(ctx context.Context, req *csi.CreateSnapshotRequest) (*csi.CreateSnapshotResponse, error) {
	name, srcID := req.GetName(), req.GetSourceVolumeId()
	if name == "" {
		return nil, status.Error(codes.InvalidArgument, "name is required")
	}
	if srcID == "" {
		return nil, status.Error(codes.InvalidArgument, "source_volume_id is required")
	}
	if bad := volumeid.InvalidChars(name, volumeid.IsSnapshotChar); bad != "" {
		return nil, status.Errorf(codes.InvalidArgument, "snapshot name %q contains invalid characters %q: only A-Z, a-z, 0-9, _, -, :, . and + are allowed", name, bad)
	}
	if !volumeIDOK(srcID) {
		return nil, status.Errorf(codes.NotFound, "source volume %s does not exist", echo.Quote(srcID))
	}
	detached, _ := strconv.ParseBool(req.GetParameters()["detachedSnapshots"])
	if detached && e.cfg.snapshot == "" {
		return nil, status.Errorf(codes.InvalidArgument, "detachedSnapshots needs zfs.detachedSnapshotsDatasetParentName in the %s config", e.cfg.driver)
	}
	// The zfs name keeps the whole id within MaxSnapshotIDLen.
	zname := volumeid.Shorten(name, max(MaxSnapshotIDLen-len(srcID)-1, 34))
	sep := "@"
	if detached {
		sep = "/"
	}
	id := srcID + sep + zname
	ref, _ := e.parseSnapshotID(id)

	if resp, done, err := e.snapshotOneShot(ctx, name, srcID, id, ref); done {
		return resp, err
	}
	if err := e.checkSnapshotName(ctx, name, srcID); err != nil {
		return nil, err
	}
	props := []zfs.Prop{{Name: propSnapshotName, Value: name}, {Name: propSnapshotSource, Value: srcID}, {Name: propManaged, Value: "true"}}
	srcDS := e.cfg.datasetName(srcID)
	if !detached {
		err := e.zfs.Snapshot(ctx, ref.dataset, props...)
		switch {
		case err == nil, zfs.IsExists(err):
		case zfs.IsNotExist(err):
			return nil, status.Errorf(codes.NotFound, "source volume %s does not exist", srcID)
		default:
			return nil, e.zfsErr(err, "snapshotting "+srcDS)
		}
	} else if err := e.detachedSnapshot(ctx, srcDS, ref.dataset, zname, props); err != nil {
		return nil, err
	}
	p, err := e.zfs.Get(ctx, ref.dataset, snapshotProps...)
	if err != nil {
		return nil, e.zfsErr(err, "reading "+ref.dataset)
	}
	return &csi.CreateSnapshotResponse{Snapshot: e.snapshotFromProps(id, srcID, p)}, nil
}

// checkSnapshotName enforces CSI's rule that a snapshot name belongs to one
// source volume: ALREADY_EXISTS when another volume has it.
func (e *Engine) checkSnapshotName(ctx context.Context, name, srcID string) error {
	type scope struct {
		root  string
		types []string
	}
	scopes := []scope{{e.cfg.parent, []string{"snapshot"}}}
	if e.cfg.snapshot != "" {
		scopes = append(scopes, scope{e.cfg.snapshot, []string{e.cfg.kind.String()}})
	}
	for _, s := range scopes {
		rows, err := e.zfs.List(ctx, s.root, zfs.ListOptions{Recursive: true, Types: s.types, Props: []string{propSnapshotName, propSnapshotSource}})
		if zfs.IsNotExist(err) {
			continue
		}
		if err != nil {
			return e.zfsErr(err, "listing snapshots under "+s.root)
		}
		for _, r := range rows {
			if r.Props[propSnapshotName] == name && r.Props[propSnapshotSource] != srcID {
				return status.Errorf(codes.AlreadyExists, "snapshot name %q is already used for volume %s", name, r.Props[propSnapshotSource])
			}
		}
	}
	return nil
}

// detachedSnapshot copies a volume into target via a temporary snapshot.
func (e *Engine) detachedSnapshot(ctx context.Context, srcDS, target, zname string, props []zfs.Prop) error {
	if _, err := e.zfs.Get(ctx, target, "type"); err == nil {
		return nil // made by an earlier call
	}
	if err := e.RefuseDecryptingCopy(ctx, srcDS); err != nil {
		return err
	}
	// The temporary snapshot first: it proves the source exists before
	// anything is made for the copy (a refused request leaves nothing).
	tmp := srcDS + "@" + detachedSnapshotPrefix + zname
	if err := e.zfs.Snapshot(ctx, tmp); err != nil && !zfs.IsExists(err) {
		if zfs.IsNotExist(err) {
			return status.Errorf(codes.NotFound, "source volume dataset %s does not exist", srcDS)
		}
		return e.zfsErr(err, "snapshotting "+srcDS)
	}
	container := target[:strings.LastIndexByte(target, '/')]
	if err := e.zfs.Create(ctx, container, zfs.CreateOptions{Parents: true}); err != nil && !zfs.IsExists(err) {
		return e.zfsErr(err, "creating "+container)
	}
	if err := e.zfs.SendReceive(ctx, tmp, target); err != nil && !zfs.IsExists(err) {
		return e.zfsErr(err, "copying "+tmp+" to "+target)
	}
	if err := e.zfs.Set(ctx, target, props...); err != nil {
		return e.zfsErr(err, "labelling "+target)
	}
	for _, s := range []string{target + tmp[strings.IndexByte(tmp, '@'):], tmp} {
		if err := e.zfs.Destroy(ctx, s, zfs.DestroyOptions{}); err != nil && !zfs.IsNotExist(err) {
			return e.zfsErr(err, "removing "+s)
		}
	}
	return nil
}

func (e *Engine) snapshotFromProps(id, srcID string, p zfs.Properties) *csi.Snapshot {
	size := p.Int("volsize")
	if size < 0 {
		size = max(p.Int("referenced"), 0)
	}
	created := max(p.Int("creation"), 0)
	return &csi.Snapshot{SnapshotId: id, SourceVolumeId: srcID, SizeBytes: size,
		CreationTime: timestamppb.New(unix(created)), ReadyToUse: true}
}

// DeleteSnapshot destroys the snapshot. A zfs snapshot that volumes were
// cloned from is destroyed deferred (-d): it disappears with its last
// clone, as in democratic-csi.
func (e *Engine) DeleteSnapshot(ctx context.Context, req *csi.DeleteSnapshotRequest) (*csi.DeleteSnapshotResponse, error) {
	id := req.GetSnapshotId()
	if id == "" {
		return nil, status.Error(codes.InvalidArgument, "snapshot_id is required")
	}
	ref, ok := e.parseSnapshotID(id)
	if !ok {
		return &csi.DeleteSnapshotResponse{}, nil
	}
	var err error
	if ref.detached {
		err = e.destroy(ctx, ref.dataset)
		if err == nil {
			// Remove the per-volume container when it is empty.
			container := ref.dataset[:strings.LastIndexByte(ref.dataset, '/')]
			if cerr := e.zfs.Destroy(ctx, container, zfs.DestroyOptions{}); cerr != nil && !zfs.IsNotExist(cerr) {
				e.log.Debug("snapshot container kept", "dataset", container, "reason", cerr)
			}
		}
		return &csi.DeleteSnapshotResponse{}, err
	}
	err = e.zfs.Destroy(ctx, ref.dataset, zfs.DestroyOptions{Defer: true})
	switch {
	case err == nil, zfs.IsNotExist(err):
		return &csi.DeleteSnapshotResponse{}, nil
	case zfs.HasDependentClones(err):
		return nil, status.Errorf(codes.FailedPrecondition, "snapshot %s has dependent clones: delete the volumes made from it first", id)
	}
	return nil, e.zfsErr(err, "destroying "+ref.dataset)
}
