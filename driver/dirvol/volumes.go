package dirvol

import (
	"context"
	"errors"
	"io/fs"
	"math"
	"os"
	"path/filepath"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"golang.org/x/sys/unix"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/driver/backend"
)

// isVolumeName reports whether a volume id from a request can name a
// volume directory: a safe path component that is not a temporary entry.
func isVolumeName(id string) bool { return safeComponent(id) && !isTemporary(id) }

// CreateVolume makes <controllerBasePath>/v/<id>: empty, or a copy of a
// snapshot or volume. It is idempotent by name.
func (d *Controller) CreateVolume(ctx context.Context, req *csi.CreateVolumeRequest) (*csi.CreateVolumeResponse, error) {
	id, err := volumeID(req.GetName(), d.cfg.IDHash)
	if err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "CreateVolume: %v", err)
	}
	if msg := d.checkCapabilities(req.GetVolumeCapabilities()); msg != "" {
		return nil, status.Errorf(codes.InvalidArgument, "CreateVolume %q: %s", req.GetName(), msg)
	}
	capacity, err := requestedCapacity(req.GetCapacityRange())
	if err != nil {
		return nil, err
	}
	if err := d.be.CheckRequisite(req.GetAccessibilityRequirements()); err != nil {
		return nil, err
	}
	src, err := requestSource(req.GetVolumeContentSource())
	if err != nil {
		return nil, err
	}
	if err := d.be.Ready("CreateVolume"); err != nil {
		return nil, err
	}

	keys := []string{"v:" + id}
	if src != nil {
		keys = append(keys, src.lockKey())
	}
	unlock := d.locks.lock(keys...)
	defer unlock()
	defer d.listChanged()

	if vol, err := d.existingVolume(id, req, src); vol != nil || err != nil {
		return &csi.CreateVolumeResponse{Volume: vol}, err
	}

	srcPath, err := d.sourcePath(src)
	if err != nil {
		return nil, err
	}
	meta := &volumeMeta{Name: req.GetName(), CapacityBytes: capacity, Source: src, CreatedAt: d.now()}
	metaPath := d.store.volumeMetaPath(id)
	fill := func(tmp string) error {
		if srcPath != "" {
			if err := d.newCopier(ctx).copyTree(srcPath, tmp); err != nil {
				return d.fsError("copying "+srcPath, err)
			}
		} else {
			if err := os.Mkdir(tmp, 0o755); err != nil {
				return d.fsError("creating the volume directory", err)
			}
			// mode as democratic-csi's mkdir, whatever the umask
			if err := unix.Chmod(tmp, 0o755); err != nil {
				return d.fsError("chmod "+tmp, err)
			}
		}
		return d.applyDirPermissions(tmp)
	}
	if srcPath == "" && d.flavor.FastEmpty && d.plainEmpty() {
		err = d.materializeEmpty(filepath.Join(d.store.base, volumesDir), id,
			func() error { return d.writeNewVolumeMeta(id, meta) },
			func() { _ = removeFile(metaPath) })
	} else {
		err = d.materialize(filepath.Join(d.store.base, volumesDir), id,
			fill,
			func() error { return writeJSON(metaPath, meta) },
			func() { _ = removeFile(metaPath) })
	}
	if err != nil {
		return nil, err
	}
	d.log.Info("volume created", "name", req.GetName(), "volume_id", id, "capacity_bytes", capacity, "source", src)
	vol := d.volume(id, meta)
	vol.ContentSource = req.GetVolumeContentSource()
	return &csi.CreateVolumeResponse{Volume: vol}, nil
}

// existingVolume answers a repeated CreateVolume: the volume when it exists
// and matches the request, ALREADY_EXISTS when it does not, nil when there
// is no volume yet.
func (d *Controller) existingVolume(id string, req *csi.CreateVolumeRequest, src *contentSource) (*csi.Volume, error) {
	path := d.store.volumePath(id)
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, d.fsError("checking "+path, err)
	}
	if !fi.IsDir() {
		return nil, status.Errorf(codes.FailedPrecondition, "CreateVolume %q: %s exists and is not a directory; remove it", req.GetName(), path)
	}
	m, err := d.store.readVolumeMeta(id)
	if err != nil {
		return nil, d.fsError("reading metadata of volume "+id, err)
	}
	if m == nil {
		// made by democratic-csi (or by hand): nothing to compare with
		vol := d.volume(id, nil)
		vol.ContentSource = req.GetVolumeContentSource()
		return vol, nil
	}
	name := req.GetName()
	if m.Name != "" && m.Name != name {
		return nil, status.Errorf(codes.AlreadyExists, "CreateVolume %q: volume id %q is already used by volume %q (the names map to the same id)", name, id, m.Name)
	}
	cr := req.GetCapacityRange()
	if m.CapacityBytes > 0 && (cr.GetRequiredBytes() > 0 && m.CapacityBytes < cr.GetRequiredBytes() ||
		cr.GetLimitBytes() > 0 && m.CapacityBytes > cr.GetLimitBytes()) {
		return nil, status.Errorf(codes.AlreadyExists, "CreateVolume %q: the volume exists with capacity %d bytes, outside the requested range (required %d, limit %d)",
			name, m.CapacityBytes, cr.GetRequiredBytes(), cr.GetLimitBytes())
	}
	if !m.Source.equal(src) {
		return nil, status.Errorf(codes.AlreadyExists, "CreateVolume %q: the volume exists with content source %s, the request asks for %s", name, m.Source, src)
	}
	vol := d.volume(id, m)
	vol.ContentSource = req.GetVolumeContentSource()
	return vol, nil
}

// requestedCapacity is the capacity to record: required_bytes, else
// limit_bytes, else 0 (a directory has no size of its own).
func requestedCapacity(cr *csi.CapacityRange) (int64, error) {
	if err := backend.CheckRange(cr); err != nil {
		return 0, err
	}
	req, lim := cr.GetRequiredBytes(), cr.GetLimitBytes()
	if req > 0 {
		return req, nil
	}
	return lim, nil
}

// applyDirPermissions gives a new volume directory the configured owner and
// mode (owner first: chown may clear setgid).
func (d *Controller) applyDirPermissions(dir string) error {
	if d.cfg.UID >= 0 || d.cfg.GID >= 0 {
		if err := os.Lchown(dir, d.cfg.UID, d.cfg.GID); err != nil {
			return d.fsError("applying dirPermissionsUser/dirPermissionsGroup", err)
		}
	}
	if d.cfg.HasMode {
		if err := unix.Chmod(dir, d.cfg.Mode); err != nil {
			return d.fsError("applying dirPermissionsMode", &fs.PathError{Op: "chmod", Path: dir, Err: err})
		}
	}
	return nil
}

// volume is the CSI view of a volume directory.
func (d *Controller) volume(id string, m *volumeMeta) *csi.Volume {
	v := &csi.Volume{
		VolumeId:           id,
		VolumeContext:      d.be.VolumeContext(id),
		AccessibleTopology: d.be.Topology(),
	}
	if m != nil {
		v.CapacityBytes = m.CapacityBytes
		v.ContentSource = m.Source.csi()
	}
	return v
}

// lookupVolume returns the metadata of an existing volume (nil when it has
// none) or NOT_FOUND.
func (d *Controller) lookupVolume(call, id string) (*volumeMeta, error) {
	if err := d.checkVolume(call, id); err != nil {
		return nil, err
	}
	m, err := d.store.readVolumeMeta(id)
	if err != nil {
		return nil, d.fsError("reading metadata of volume "+id, err)
	}
	return m, nil
}

// checkVolume is NOT_FOUND unless volume id exists (one lstat).
func (d *Controller) checkVolume(call, id string) error {
	if !isVolumeName(id) {
		return status.Errorf(codes.NotFound, "%s: volume %q not found (not %s)", call, id, d.idNoun("volume"))
	}
	ok, err := isDir(d.store.volumePath(id))
	if err != nil {
		return d.fsError("checking volume "+id, err)
	}
	if !ok {
		return status.Errorf(codes.NotFound, "%s: volume %q not found in %s", call, id, filepath.Join(d.store.base, volumesDir))
	}
	return nil
}

// DeleteVolume removes the volume directory and its metadata. Snapshots of
// it are independent copies and stay. A volume that does not exist (or an
// id that cannot name one) is already deleted.
func (d *Controller) DeleteVolume(ctx context.Context, req *csi.DeleteVolumeRequest) (*csi.DeleteVolumeResponse, error) {
	id := req.GetVolumeId()
	if id == "" {
		return nil, status.Error(codes.InvalidArgument, "DeleteVolume: volume_id is required")
	}
	if !isVolumeName(id) {
		d.log.Warn("DeleteVolume: id cannot name "+d.nameNoun("volume")+"; nothing to delete", "volume_id", id)
		return &csi.DeleteVolumeResponse{}, nil
	}
	if err := d.be.Ready("DeleteVolume"); err != nil {
		return nil, err
	}
	unlock := d.locks.lock("v:" + id)
	defer unlock()
	defer d.listChanged()
	metaPath := d.store.volumeMetaPath(id)
	parent := filepath.Join(d.store.base, volumesDir)
	if d.flavor.FastEmpty && removeEmpty(parent, id) {
		// An empty volume went with one rmdir; its metadata follows (a
		// crash in between leaves only an unlisted metadata file).
		if err := removeFile(metaPath); err != nil {
			return nil, d.fsError("removing metadata", err)
		}
	} else if err := d.dematerialize(parent, id, func() error { return removeFile(metaPath) }); err != nil {
		return nil, err
	}
	if d.store.cache != nil {
		d.store.cache.forget(id)
	}
	d.log.Info("volume deleted", "volume_id", id)
	return &csi.DeleteVolumeResponse{}, nil
}

// ControllerExpandVolume records the new capacity. A directory has no size
// to enforce (it shares its filesystem with every other volume), so there
// is nothing to resize, on the controller or on the node.
func (d *Controller) ControllerExpandVolume(ctx context.Context, req *csi.ControllerExpandVolumeRequest) (*csi.ControllerExpandVolumeResponse, error) {
	id := req.GetVolumeId()
	if id == "" {
		return nil, status.Error(codes.InvalidArgument, "ControllerExpandVolume: volume_id is required")
	}
	if req.GetCapacityRange() == nil {
		return nil, status.Error(codes.InvalidArgument, "ControllerExpandVolume: capacity_range is required")
	}
	if c := req.GetVolumeCapability(); c != nil {
		if msg := d.be.CheckCapability(c); msg != "" {
			return nil, status.Errorf(codes.InvalidArgument, "ControllerExpandVolume %q: %s", id, msg)
		}
	}
	capacity, err := requestedCapacity(req.GetCapacityRange())
	if err != nil {
		return nil, err
	}
	if capacity == 0 {
		return nil, status.Error(codes.InvalidArgument, "ControllerExpandVolume: capacity_range needs required_bytes or limit_bytes")
	}
	if !isVolumeName(id) {
		return nil, status.Errorf(codes.NotFound, "ControllerExpandVolume: volume %q not found (not %s)", id, d.idNoun("volume"))
	}
	if err := d.be.Ready("ControllerExpandVolume"); err != nil {
		return nil, err
	}
	unlock := d.locks.lock("v:" + id)
	defer unlock()
	m, err := d.lookupVolume("ControllerExpandVolume", id)
	if err != nil {
		return nil, err
	}
	if m == nil {
		m = &volumeMeta{} // made by democratic-csi: start recording
	}
	if lim := req.GetCapacityRange().GetLimitBytes(); lim > 0 && m.CapacityBytes > lim {
		return nil, status.Errorf(codes.OutOfRange, "ControllerExpandVolume %q: the volume already has %d bytes, more than limit_bytes %d (volumes do not shrink)", id, m.CapacityBytes, lim)
	}
	if m.CapacityBytes < capacity {
		m.CapacityBytes = capacity
		if err := writeJSON(d.store.volumeMetaPath(id), m); err != nil {
			return nil, d.fsError("recording the new capacity of volume "+id, err)
		}
		d.log.Info("volume expanded", "volume_id", id, "capacity_bytes", capacity)
	}
	return &csi.ControllerExpandVolumeResponse{CapacityBytes: m.CapacityBytes, NodeExpansionRequired: false}, nil
}

// ValidateVolumeCapabilities confirms the capabilities a directory can serve.
func (d *Controller) ValidateVolumeCapabilities(ctx context.Context, req *csi.ValidateVolumeCapabilitiesRequest) (*csi.ValidateVolumeCapabilitiesResponse, error) {
	id := req.GetVolumeId()
	if id == "" {
		return nil, status.Error(codes.InvalidArgument, "ValidateVolumeCapabilities: volume_id is required")
	}
	if len(req.GetVolumeCapabilities()) == 0 {
		return nil, status.Error(codes.InvalidArgument, "ValidateVolumeCapabilities: volume_capabilities is required")
	}
	if err := d.be.Ready("ValidateVolumeCapabilities"); err != nil {
		return nil, err
	}
	// Only the volume's existence matters here: its metadata is not read.
	if err := d.checkVolume("ValidateVolumeCapabilities", id); err != nil {
		return nil, err
	}
	if msg := d.checkCapabilities(req.GetVolumeCapabilities()); msg != "" {
		return &csi.ValidateVolumeCapabilitiesResponse{Message: msg}, nil
	}
	return &csi.ValidateVolumeCapabilitiesResponse{Confirmed: &csi.ValidateVolumeCapabilitiesResponse_Confirmed{
		VolumeContext:      req.GetVolumeContext(),
		VolumeCapabilities: req.GetVolumeCapabilities(),
		Parameters:         req.GetParameters(),
		MutableParameters:  req.GetMutableParameters(),
	}}, nil
}

// ControllerGetVolume describes one volume.
func (d *Controller) ControllerGetVolume(ctx context.Context, req *csi.ControllerGetVolumeRequest) (*csi.ControllerGetVolumeResponse, error) {
	id := req.GetVolumeId()
	if id == "" {
		return nil, status.Error(codes.InvalidArgument, "ControllerGetVolume: volume_id is required")
	}
	if err := d.be.Ready("ControllerGetVolume"); err != nil {
		return nil, err
	}
	m, err := d.lookupVolume("ControllerGetVolume", id)
	if err != nil {
		return nil, err
	}
	return &csi.ControllerGetVolumeResponse{
		Volume: d.volume(id, m),
		Status: &csi.ControllerGetVolumeResponse_VolumeStatus{},
	}, nil
}

// GetCapacity reports the space available in controllerBasePath (0 for
// capabilities or topology the backend cannot serve).
func (d *Controller) GetCapacity(ctx context.Context, req *csi.GetCapacityRequest) (*csi.GetCapacityResponse, error) {
	if len(req.GetVolumeCapabilities()) > 0 && d.checkCapabilities(req.GetVolumeCapabilities()) != "" {
		return &csi.GetCapacityResponse{AvailableCapacity: 0}, nil
	}
	serve, err := d.be.CapacityFor(req.GetAccessibleTopology())
	if err != nil {
		return nil, err
	}
	if !serve {
		return &csi.GetCapacityResponse{AvailableCapacity: 0}, nil
	}
	var st unix.Statfs_t
	if err := unix.Statfs(d.store.base, &st); err != nil {
		return nil, d.fsError("statfs "+d.store.base, &fs.PathError{Op: "statfs", Path: d.store.base, Err: err})
	}
	avail := uint64(st.Bavail) * uint64(st.Bsize) //nolint:unconvert // Stat_t/Statfs_t field types differ between architectures
	if avail > math.MaxInt64 {
		avail = math.MaxInt64
	}
	return &csi.GetCapacityResponse{AvailableCapacity: int64(avail)}, nil
}
