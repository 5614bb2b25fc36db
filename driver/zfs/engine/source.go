package engine

import (
	"context"
	"strconv"
	"strings"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/driver/echo"
	"github.com/switchyard-csi/switchyard/driver/zfs"
)

// source is a CreateVolume content source.
type source struct {
	kind string // "snapshot" or "volume" (democratic-csi's property values)
	id   string // the snapshot or volume id from the request
	// snap is the zfs snapshot to clone or send. For a detached snapshot
	// and for a volume it is a temporary snapshot made for this volume.
	snap string
	// temporary is true when snap was made for this volume.
	temporary bool
	// of is the dataset the temporary snapshot is taken of.
	of string
}

// parseSource resolves a content source to the zfs snapshot it starts
// from. Ids that cannot exist give NOT_FOUND, as CSI asks.
func (e *Engine) parseSource(cs *csi.VolumeContentSource) (*source, error) {
	if cs == nil {
		return nil, nil
	}
	switch {
	case cs.GetSnapshot() != nil:
		id := cs.GetSnapshot().GetSnapshotId()
		ref, ok := e.parseSnapshotID(id)
		if !ok {
			return nil, status.Errorf(codes.NotFound, "source snapshot %s does not exist", echo.Quote(id))
		}
		s := &source{kind: "snapshot", id: id}
		if ref.detached {
			s.of, s.temporary = ref.dataset, true
		} else {
			s.snap = ref.dataset
		}
		return s, nil
	case cs.GetVolume() != nil:
		id := cs.GetVolume().GetVolumeId()
		if !volumeIDOK(id) {
			return nil, status.Errorf(codes.NotFound, "source volume %s does not exist", echo.Quote(id))
		}
		return &source{kind: "volume", id: id, of: e.cfg.datasetName(id), temporary: true}, nil
	}
	return nil, status.Error(codes.InvalidArgument, "volume_content_source names neither a snapshot nor a volume")
}

// makeFromSource clones the source into ds, or copies it with zfs send |
// receive when the StorageClass asks for detached volumes
// (detachedVolumesFromSnapshots / detachedVolumesFromVolumes).
//
// enc is the request's key (nil without one): a source whose key the host
// has unloaded (a reboot) cannot be cloned until it is loaded again.
func (e *Engine) makeFromSource(ctx context.Context, ds, name string, req *csi.CreateVolumeRequest, src *source, enc *Encryption) error {
	newID := ds[strings.LastIndexByte(ds, '/')+1:]
	param := "detachedVolumesFromSnapshots"
	if src.kind == "volume" {
		param = "detachedVolumesFromVolumes"
	}
	detached, _ := strconv.ParseBool(req.GetParameters()[param])
	if detached {
		// Before the temporary snapshot, so a refusal leaves nothing.
		of := src.of
		if !src.temporary {
			of = src.snap
		}
		if err := e.RefuseDecryptingCopy(ctx, of); err != nil {
			return err
		}
	}
	if src.temporary {
		src.snap = src.of + "@" + cloneSnapshotPrefix + newID
		if err := e.zfs.Snapshot(ctx, src.snap); err != nil && !zfs.IsExists(err) {
			if zfs.IsNotExist(err) {
				return status.Errorf(codes.NotFound, "source %s %q does not exist", src.kind, src.id)
			}
			return e.zfsErr(err, "snapshotting "+src.of)
		}
	}
	props := append(e.baseProps(name, req.GetParameters(), true),
		zfs.Prop{Name: propSourceType, Value: src.kind}, zfs.Prop{Name: propSourceID, Value: src.id})
	if !detached {
		err := e.zfs.Clone(ctx, src.snap, ds, props...)
		if err != nil && strings.Contains(err.Error(), "permission denied") {
			// zfs says only "permission denied" when the origin's key is
			// not loaded; read why only then, so a clone costs no extra
			// round trip otherwise.
			if lerr := e.sourceKey(ctx, src, enc); lerr != nil {
				return lerr
			}
			err = e.zfs.Clone(ctx, src.snap, ds, props...)
		}
		switch {
		case err == nil, zfs.IsExists(err):
			return nil
		case zfs.IsNotExist(err):
			return status.Errorf(codes.NotFound, "source %s %q does not exist", src.kind, src.id)
		}
		return e.zfsErr(err, "cloning "+src.snap)
	}
	err := e.zfs.SendReceive(ctx, src.snap, ds)
	switch {
	case err == nil, zfs.IsExists(err):
	case zfs.IsNotExist(err):
		return status.Errorf(codes.NotFound, "source %s %q does not exist", src.kind, src.id)
	default:
		return e.zfsErr(err, "copying "+src.snap+" to "+ds)
	}
	if err := e.zfs.Set(ctx, ds, props...); err != nil {
		return e.zfsErr(err, "labelling "+ds)
	}
	// The copy arrives with the snapshot it was sent from; neither it nor
	// a temporary source snapshot is needed any more.
	received := ds + src.snap[strings.IndexByte(src.snap, '@'):]
	if err := e.zfs.Destroy(ctx, received, zfs.DestroyOptions{}); err != nil && !zfs.IsNotExist(err) {
		return e.zfsErr(err, "removing "+received)
	}
	if src.temporary {
		if err := e.zfs.Destroy(ctx, src.snap, zfs.DestroyOptions{Defer: true}); err != nil && !zfs.IsNotExist(err) {
			return e.zfsErr(err, "removing "+src.snap)
		}
	}
	return nil
}

// sourceKey loads the key of the source snapshot's encryption root when
// the host has it unloaded, with the request's key (the provisioner
// secret of the new volume's class). nil when the key is loaded or the
// source is not encrypted: the clone's error was something else.
func (e *Engine) sourceKey(ctx context.Context, src *source, enc *Encryption) error {
	p, err := e.zfs.Get(ctx, src.snap, keyProps...)
	if err != nil {
		// Not readable (no encryption properties on this host, or the
		// source gone): the clone's own error says more than this one.
		return nil //nolint:nilerr // the caller reports the clone's error
	}
	if !keyUnavailable(p) {
		return nil
	}
	of := src.snap[:strings.IndexByte(src.snap, '@')]
	root := encryptionRoot(of, p)
	if enc == nil {
		return status.Errorf(codes.FailedPrecondition, "source %s %q (%s) is encrypted and the key of its encryption root %s is not loaded (the storage host restarted or its pool was imported): give the new volume's StorageClass a provisioner secret with that key in %s (%s, %s), or run `zfs load-key %s` on the storage host",
			src.kind, src.id, of, root, SecretEncryptionKey, "csi.storage.k8s.io/provisioner-secret-name", "csi.storage.k8s.io/provisioner-secret-namespace", root)
	}
	// The source filesystem is mounted too (as a boot would have); its
	// share is left to its own publish.
	return e.loadKey(ctx, of, root, enc, false)
}
