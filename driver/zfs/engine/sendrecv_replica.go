package engine

import (
	"context"
	"strings"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/driver/backend"
	"github.com/switchyard-csi/switchyard/driver/volumeid"
	"github.com/switchyard-csi/switchyard/driver/zfs"
)

// Copies across connections that the storage system makes itself: two
// connections of one system (one TrueNAS, say, with different parent
// datasets) need no stream through the controller; the system's own
// send | receive (Datasets.SendReceive: a one-time LOCAL replication on
// TrueNAS) copies the source into the target connection's parent, and the
// target finishes the copy as a fresh volume of its own.

// ReplicaEndpointer is a Platform that names the storage system it
// reaches, so the proxy can tell that two connections share one.
type ReplicaEndpointer interface {
	ReplicaEndpoint() string
}

var _ backend.Replicator = (*Engine)(nil)

// ReplicaEndpoint is the storage system this connection reaches, "" when
// its platform does not say (the proxy then never pairs it this way).
func (e *Engine) ReplicaEndpoint() string {
	if r, ok := e.plat.(ReplicaEndpointer); ok {
		return r.ReplicaEndpoint() + "#" + e.StreamKind()
	}
	return ""
}

// StreamKind is the kind of dataset this connection's volumes are: a
// filesystem cannot be received as a zvol.
func (e *Engine) StreamKind() string {
	if e.cfg.kind == volume {
		return FormatVolume
	}
	return FormatFilesystem
}

// ReplicaSource is the snapshot a content source is copied from: a
// snapshot source as it is, a volume from a temporary snapshot named after
// the new volume (removed by done).
func (e *Engine) ReplicaSource(ctx context.Context, cs *csi.VolumeContentSource, forName string) (string, func(), error) {
	src, done, err := e.sourceSnapshot(ctx, cs, forName)
	if err != nil {
		return "", nil, err
	}
	return src.snap, done, nil
}

// sourceSnapshot resolves cs to a snapshot on this host, taking the
// temporary one a volume (or detached snapshot) is sent from, and checks
// that it exists.
func (e *Engine) sourceSnapshot(ctx context.Context, cs *csi.VolumeContentSource, forName string) (*source, func(), error) {
	src, err := e.parseSource(cs)
	if err != nil {
		return nil, nil, err
	}
	if src == nil {
		return nil, nil, status.Error(codes.InvalidArgument, "no content source to copy")
	}
	done := func() {}
	if src.temporary {
		src.snap = src.of + "@" + xferSnapshotPrefix + volumeid.Shorten(forName, 64)
		if err := e.zfs.Snapshot(ctx, src.snap); err != nil && !zfs.IsExists(err) {
			if zfs.IsNotExist(err) {
				return nil, nil, status.Errorf(codes.NotFound, "source %s %q does not exist", src.kind, src.id)
			}
			return nil, nil, e.zfsErr(err, "snapshotting "+src.of)
		}
		snap := src.snap
		done = func() {
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), defaultCleanupTimeout)
			defer cancel()
			if err := e.zfs.Destroy(cctx, snap, zfs.DestroyOptions{Defer: true}); err != nil && !zfs.IsNotExist(err) {
				e.log.Warn("could not remove the temporary snapshot of a copy", "snapshot", snap, "error", err)
			}
		}
	}
	return src, done, nil
}

// ReceiveReplica makes the volume req names from snap, a snapshot on the
// same storage system, with the system's own send | receive, then
// finishes it as CreateVolume finishes any new volume. A retry after the
// copy arrived finishes it without copying again.
func (e *Engine) ReceiveReplica(ctx context.Context, req *csi.CreateVolumeRequest, snap string) (*csi.CreateVolumeResponse, error) {
	return e.ReceiveReplicaWith(ctx, req, func(ctx context.Context, ds string) error {
		return e.zfs.SendReceive(ctx, snap, ds)
	})
}

// ReceiveReplicaWith is ReceiveReplica with the copy made by copyTo (on
// this system, or pushed here by another: backend.ReplicaTarget).
func (e *Engine) ReceiveReplicaWith(ctx context.Context, req *csi.CreateVolumeRequest, copyTo func(ctx context.Context, dataset string) error) (*csi.CreateVolumeResponse, error) {
	if req.GetVolumeContentSource() != nil {
		return nil, status.Error(codes.Internal, "ReceiveReplica: the request must not carry a content source")
	}
	if why := e.checkCapabilities(req.GetVolumeCapabilities()); why != "" {
		return nil, status.Error(codes.InvalidArgument, why)
	}
	id, err := volumeid.Volume(req.GetName(), e.cfg.idHash, MaxVolumeIDLen)
	if err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	ds := e.cfg.datasetName(id)
	props, err := e.zfs.Get(ctx, ds, propManaged, propVolumeName)
	switch {
	case zfs.IsNotExist(err):
		if err := e.replicate(ctx, copyTo, ds, req); err != nil {
			return nil, err
		}
	case err != nil:
		return nil, e.zfsErr(err, "reading "+ds)
	case props[propManaged].Value == "true" && props[propVolumeName].Value != req.GetName():
		return nil, status.Errorf(codes.AlreadyExists, "dataset %s exists but was not made for volume %q", ds, req.GetName())
	}
	return e.CreateVolume(ctx, req)
}

// replicate copies into ds (copyTo) and makes it an unfinished volume of req:
// the copy carries the source's properties (TrueNAS replicates them), so
// the labels, the share records and provision_success are set to this
// volume's before anything else can see it.
func (e *Engine) replicate(ctx context.Context, copyTo func(context.Context, string) error, ds string, req *csi.CreateVolumeRequest) error {
	if err := e.zfs.Create(ctx, e.cfg.parent, zfs.CreateOptions{Parents: true}); err != nil && !zfs.IsExists(err) {
		return e.zfsErr(err, "creating "+e.cfg.parent)
	}
	if err := copyTo(ctx, ds); err != nil && !zfs.IsExists(err) {
		e.removePartial(ds)
		if _, ok := status.FromError(err); ok {
			return err
		}
		if zfs.IsNotExist(err) {
			return status.Errorf(codes.NotFound, "%s: the source snapshot of the copy to %s does not exist any more", e.cfg.driver, ds)
		}
		return e.zfsErr(err, "replicating to "+ds)
	}
	labels := append(e.baseProps(req.GetName(), req.GetParameters(), true),
		zfs.Prop{Name: propSuccess, Value: "false"}, zfs.Prop{Name: propShareContext, Value: ""},
		zfs.Prop{Name: propSourceType, Value: ""}, zfs.Prop{Name: propSourceID, Value: ""})
	for _, p := range e.share.AssetProps() {
		if strings.Contains(p, ":") { // the sharer's own records (share ids), not zfs's
			labels = append(labels, zfs.Prop{Name: p, Value: ""})
		}
	}
	if err := e.zfs.Set(ctx, ds, labels...); err != nil {
		e.removePartial(ds)
		return e.zfsErr(err, "labelling "+ds)
	}
	snaps, err := e.zfs.List(ctx, ds, zfs.ListOptions{Depth: 1, Types: []string{"snapshot"}})
	if err != nil {
		return e.zfsErr(err, "listing the snapshots of "+ds)
	}
	for _, s := range snaps {
		if err := e.zfs.Destroy(ctx, s.Name, zfs.DestroyOptions{}); err != nil && !zfs.IsNotExist(err) {
			return e.zfsErr(err, "removing "+s.Name)
		}
	}
	return nil
}

// removePartial removes what a failed replication left, with its own
// deadline (the request's context may be what failed).
func (e *Engine) removePartial(ds string) {
	ctx, cancel := context.WithTimeout(context.Background(), defaultCleanupTimeout)
	defer cancel()
	if err := e.zfs.Destroy(ctx, ds, zfs.DestroyOptions{Recursive: true}); err != nil && !zfs.IsNotExist(err) {
		e.log.Warn("could not remove a partial copy", "dataset", ds, "error", err)
	}
}
