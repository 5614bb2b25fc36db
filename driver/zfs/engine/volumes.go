package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/driver/backend"
	"github.com/switchyard-csi/switchyard/driver/echo"
	"github.com/switchyard-csi/switchyard/driver/volumecontext"
	"github.com/switchyard-csi/switchyard/driver/volumeid"
	"github.com/switchyard-csi/switchyard/driver/zfs"
)

// volumeID validates a volume id from a request: ok is false when it can
// name no volume of this driver (the caller answers NOT_FOUND, or success
// for deletes).
func volumeIDOK(id string) bool {
	return id != "" && len(id) <= 255 && volumeid.InvalidChars(id, volumeid.IsVolumeChar) == "" && volumeid.IsAlnum(id[0])
}

// CreateVolume makes (or finds) the dataset or zvol, shares it and marks it
// provisioned. Every step is idempotent and the last one sets
// provision_success, so a call cut short (connection dropped, process
// killed) is completed by the retry without leaking anything.
func (e *Engine) CreateVolume(ctx context.Context, req *csi.CreateVolumeRequest) (_ *csi.CreateVolumeResponse, err error) {
	name := req.GetName()
	if name == "" {
		return nil, status.Error(codes.InvalidArgument, "name is required")
	}
	if err := e.CheckMutableParameters(req.GetMutableParameters()); err != nil {
		return nil, err
	}
	if why := e.checkCapabilities(req.GetVolumeCapabilities()); why != "" {
		return nil, status.Error(codes.InvalidArgument, why)
	}
	// Per-volume encryption (docs/features.md): the key reaches zfs only on
	// stdin, so an encrypted volume takes the step-by-step path below.
	enc, err := ParseEncryption(req.GetParameters(), req.GetSecrets())
	if err != nil {
		return nil, err
	}
	id, err := volumeid.Volume(name, e.cfg.idHash, MaxVolumeIDLen)
	if err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	ds := e.cfg.datasetName(id)
	if len(ds) > 255 {
		return nil, status.Errorf(codes.FailedPrecondition, "dataset name %s is %d bytes; zfs allows 255: shorten zfs.datasetParentName", ds, len(ds))
	}
	var block int64
	if e.cfg.kind == volume {
		block = e.cfg.zvolBlocksize
		limit, host, err := e.plat.MaxZvolName(ctx)
		if err != nil {
			return nil, err
		}
		if dev := "zvol/" + ds; len(dev) > limit {
			return nil, status.Errorf(codes.FailedPrecondition, "zvol device name %s is %d characters; %s allows %d: shorten zfs.datasetParentName", dev, len(dev), host, limit)
		}
	}
	size, err := backend.Capacity(req.GetCapacityRange(), block)
	if err != nil {
		return nil, err
	}
	if size, err = e.atLeastMinQuota(size, req.GetCapacityRange()); err != nil {
		return nil, err
	}
	src, err := e.parseSource(req.GetVolumeContentSource())
	if err != nil {
		return nil, err
	}

	if src == nil && enc == nil {
		if resp, done, err := e.createOneShot(ctx, id, ds, size, req); done {
			return resp, err
		}
	}

	// With the parent known to exist, a new volume is created straight
	// away, without -p: that create fails on an existing dataset (where -p
	// would leave it alone silently), so the read that would only have
	// found nothing is saved. Anything it refuses (a retry finding its
	// dataset, a parent removed meanwhile) takes the read path below, which
	// keeps every earlier rule.
	mountpoint := "" // known once the dataset is made
	made := false
	// Not for an encrypted volume: its create treats "exists" as done.
	if src == nil && enc == nil && e.parentSeen.Load() {
		mp, cerr := e.makeEmpty(ctx, ds, name, size, req, false, nil)
		var ze *zfs.Error
		switch {
		case cerr == nil:
			made, mountpoint = true, mp
		case !errors.As(cerr, &ze): // not run, or its outcome unknown
			return nil, e.zfsErr(cerr, "creating "+ds)
		}
	}
	var props zfs.Properties
	exists := false
	if !made {
		props, err = e.zfs.Get(ctx, ds, e.volumeProps()...)
		exists = err == nil
	}
	switch {
	case made:
		defer func() {
			if err != nil && status.Code(err) != codes.Unavailable {
				e.rollback(ds)
			}
		}()
	case err != nil && !zfs.IsNotExist(err):
		return nil, e.zfsErr(err, "reading "+ds)
	case exists:
		if e.unlabelledClone(ds, props, src) {
			// A clone an earlier call made whose labels it did not get to
			// set (the TrueNAS API clones, then sets the properties): it
			// is this volume's, so label it and finish it.
			e.log.Info("labelling a clone an earlier call left unlabelled", "dataset", ds, "origin", props["origin"].Value)
			labels := append(e.baseProps(name, req.GetParameters(), true),
				zfs.Prop{Name: propSourceType, Value: src.kind}, zfs.Prop{Name: propSourceID, Value: src.id})
			if err := e.zfs.Set(ctx, ds, labels...); err != nil {
				return nil, e.zfsErr(err, "labelling "+ds)
			}
			if props, err = e.zfs.Get(ctx, ds, e.volumeProps()...); err != nil {
				return nil, e.zfsErr(err, "reading "+ds)
			}
		}
		if err := e.checkExisting(ds, name, props, req, src); err != nil {
			return nil, err
		}
		if props[propSuccess].Value == "true" {
			resp, _, err := e.answerExisting(ctx, id, ds, name, props, req, nil)
			return resp, err
		}
		// A earlier call stopped half-way: redo the remaining steps, and
		// remove any share it may have made so it is made exactly once.
		e.log.Info("completing a volume an earlier call left unfinished", "dataset", ds)
		if err := e.share.Remove(ctx, ds, props); err != nil {
			return nil, err
		}
	default:
		if mountpoint, err = e.makeDataset(ctx, ds, name, size, req, src, enc); err != nil {
			return nil, err
		}
		// A step refused from here on (a clone smaller than its source, a
		// share with a bad name, a permission the host rejects) would leave
		// a dataset no volume handle names, since CreateVolume returns none:
		// remove what this call made. When the connection dropped, the
		// retry finishes the volume instead.
		defer func() {
			if err != nil && status.Code(err) != codes.Unavailable {
				e.rollback(ds)
			}
		}()
	}

	if err := e.sizeDataset(ctx, ds, size, exists || src != nil); err != nil {
		return nil, err
	}
	if err := e.SetMutableParameters(ctx, ds, req.GetMutableParameters()); err != nil {
		return nil, err
	}
	if e.cfg.kind == filesystem {
		if mountpoint == "" {
			p, err := e.zfs.Get(ctx, ds, "mountpoint")
			if err != nil {
				return nil, e.zfsErr(err, "reading the mountpoint of "+ds)
			}
			mountpoint = p["mountpoint"].Value
		}
		e.learnParentMount(id, zfs.Properties{"mountpoint": {Value: mountpoint, Source: "inherited"}})
		if p := e.permissions(); !p.IsZero() && usableMountpoint(mountpoint) {
			if err := e.plat.SetPermissions(ctx, mountpoint, p); err != nil {
				return nil, err
			}
		}
	}
	if enc != nil {
		if err := e.EnsureKeyLoaded(ctx, ds, enc); err != nil {
			return nil, err
		}
	}
	vc, shareProps, err := e.share.Create(ctx, ShareRequest{ID: id, Dataset: ds, Name: name, Params: req.GetParameters(), Mountpoint: mountpoint})
	if err != nil {
		return nil, err
	}
	raw, _ := json.Marshal(vc)
	final := append(slices.Clone(shareProps), zfs.Prop{Name: propShareContext, Value: string(raw)}, zfs.Prop{Name: propSuccess, Value: "true"})
	if err := e.zfs.Set(ctx, ds, final...); err != nil {
		return nil, e.zfsErr(err, "marking "+ds+" provisioned")
	}
	return &csi.CreateVolumeResponse{Volume: &csi.Volume{
		VolumeId:      id,
		CapacityBytes: e.reportedCapacity(size),
		VolumeContext: e.volumeContext(vc),
		ContentSource: req.GetVolumeContentSource(),
	}}, nil
}

// checkExisting decides whether an existing dataset answers this request
// (CSI idempotency) or conflicts with it (ALREADY_EXISTS).
func (e *Engine) checkExisting(ds, name string, props zfs.Properties, req *csi.CreateVolumeRequest, src *source) error {
	if props[propManaged].Value != "true" || (props[propVolumeName].IsSet() && props[propVolumeName].Value != name) {
		return status.Errorf(codes.AlreadyExists, "dataset %s exists but was not made for volume %q (its %s is %q)", ds, name, propVolumeName, props[propVolumeName].Value)
	}
	if want := e.cfg.kind.String(); props["type"].Value != want {
		return status.Errorf(codes.AlreadyExists, "dataset %s exists but is a %s, not a %s", ds, props["type"].Value, want)
	}
	// A volume an earlier call left unfinished has not been sized yet (a
	// clone has its source's size until sizeDataset runs): the steps that
	// follow size it, or refuse a source larger than the request.
	if props[propSuccess].Value == "true" && (e.cfg.kind == volume || e.cfg.quotas) {
		have := e.sizeOf(props)
		if !backend.Fits(have, req.GetCapacityRange()) {
			return status.Errorf(codes.AlreadyExists, "volume %q already exists with %d bytes, which does not fit required_bytes %d / limit_bytes %d", name, have, req.GetCapacityRange().GetRequiredBytes(), req.GetCapacityRange().GetLimitBytes())
		}
	}
	haveType, haveID := props[propSourceType].Value, props[propSourceID].Value
	if !props[propSourceType].IsSet() {
		haveType, haveID = "", ""
	}
	wantType, wantID := "", ""
	if src != nil {
		wantType, wantID = src.kind, src.id
	}
	if haveType != wantType || haveID != wantID {
		return status.Errorf(codes.AlreadyExists, "volume %q already exists with content source %q %q, not %q %q", name, haveType, haveID, wantType, wantID)
	}
	return nil
}

func (e *Engine) sizeOf(props zfs.Properties) int64 {
	if e.cfg.kind == volume {
		return props.Int("volsize")
	}
	if n := props.Int("refquota"); n > 0 {
		return n
	}
	return 0
}

// reportedCapacity is 0 for filesystems without quotas: their size is not
// bounded, and democratic-csi reports 0 too.
func (e *Engine) reportedCapacity(size int64) int64 {
	if e.cfg.kind == volume || e.cfg.quotas {
		return size
	}
	return 0
}

// baseProps are the properties every new volume gets: the user's templated
// datasetProperties first, so they can never override the ones the driver
// relies on.
func (e *Engine) baseProps(name string, params map[string]string, clone bool) []zfs.Prop {
	var props []zfs.Prop
	for _, p := range e.cfg.datasetProps {
		if clone && createOnlyProps[p.name] {
			continue
		}
		props = append(props, zfs.Prop{Name: p.name, Value: p.tmpl.render(name, params)})
	}
	props = append(props,
		zfs.Prop{Name: propVolumeName, Value: name},
		zfs.Prop{Name: propManaged, Value: "true"},
		zfs.Prop{Name: propProvisionerDriver, Value: e.cfg.driver})
	if e.cfg.instanceID != "" {
		props = append(props, zfs.Prop{Name: propProvisionerID, Value: e.cfg.instanceID})
	}
	if e.cfg.kind == volume {
		if !e.cfg.zvolReserve {
			props = append(props, zfs.Prop{Name: "refreservation", Value: "0"})
		}
		if e.cfg.zvolCompression != "" {
			props = append(props, zfs.Prop{Name: "compression", Value: e.cfg.zvolCompression})
		}
		if e.cfg.zvolDedup != "" {
			props = append(props, zfs.Prop{Name: "dedup", Value: e.cfg.zvolDedup})
		}
	}
	return props
}

// makeDataset creates the dataset: empty, or from a content source. A new
// filesystem's mountpoint is read in the same session and returned ("" when
// not known yet).
func (e *Engine) makeDataset(ctx context.Context, ds, name string, size int64, req *csi.CreateVolumeRequest, src *source, enc *Encryption) (string, error) {
	if src != nil {
		// A clone keeps its origin's encryption and key (zfs clone).
		return "", e.makeFromSource(ctx, ds, name, req, src, enc)
	}
	mp, err := e.makeEmpty(ctx, ds, name, size, req, true, enc)
	if err != nil && !zfs.IsExists(err) {
		return "", e.zfsErr(err, "creating "+ds)
	}
	return mp, nil
}

// makeEmpty creates an empty volume with all its creation properties (and
// a filesystem's mountpoint read in the same session); parents is -p.
// With enc, the dataset is created encrypted (its mountpoint is read
// later). Errors are the platform's, unmapped.
func (e *Engine) makeEmpty(ctx context.Context, ds, name string, size int64, req *csi.CreateVolumeRequest, parents bool, enc *Encryption) (string, error) {
	props := e.baseProps(name, req.GetParameters(), false)
	o := zfs.CreateOptions{Parents: parents}
	if e.cfg.kind == volume {
		props = append(props, zfs.Prop{Name: "volblocksize", Value: strconv.FormatInt(e.cfg.zvolBlocksize, 10)})
		o.Volsize = size
	} else {
		// Quota and reservation are set at creation, saving a command;
		// sizeDataset sets them again only for clones and resumed calls.
		if e.cfg.quotas {
			props = append(props, zfs.Prop{Name: "refquota", Value: strconv.FormatInt(size, 10)})
		}
		if e.cfg.reservation {
			props = append(props, zfs.Prop{Name: "refreservation", Value: strconv.FormatInt(size, 10)})
		}
	}
	o.Props = props
	if enc != nil {
		if err := e.CreateEncrypted(ctx, ds, o, enc); err != nil {
			return "", err
		}
		e.parentSeen.Store(true)
		return "", nil
	}
	if e.cfg.kind == filesystem {
		p, err := e.zfs.CreateAndGet(ctx, ds, o, "mountpoint")
		if err != nil {
			return "", err
		}
		e.parentSeen.Store(true)
		return p["mountpoint"].Value, nil
	}
	if err := e.zfs.Create(ctx, ds, o); err != nil {
		return "", err
	}
	e.parentSeen.Store(true)
	return "", nil
}

// sizeDataset applies the size to a dataset that did not get it at
// creation (clones, resumed calls).
func (e *Engine) sizeDataset(ctx context.Context, ds string, size int64, needed bool) error {
	if !needed {
		return nil
	}
	var props []zfs.Prop
	if e.cfg.kind == volume {
		// A clone starts at its source's size: it may grow, never shrink
		// (shrinking a zvol cuts off data).
		cur, err := e.zfs.Get(ctx, ds, "volsize")
		if err != nil {
			return e.zfsErr(err, "reading "+ds)
		}
		if have := cur.Int("volsize"); have > size {
			return status.Errorf(codes.OutOfRange, "the source is %d bytes; a volume made from it cannot be smaller (%d bytes asked)", have, size)
		} else if have == size {
			return nil
		}
		props = append(props, zfs.Prop{Name: "volsize", Value: strconv.FormatInt(size, 10)})
	} else {
		if e.cfg.quotas {
			props = append(props, zfs.Prop{Name: "refquota", Value: strconv.FormatInt(size, 10)})
		}
		if e.cfg.reservation {
			props = append(props, zfs.Prop{Name: "refreservation", Value: strconv.FormatInt(size, 10)})
		}
	}
	if err := e.zfs.Set(ctx, ds, props...); err != nil {
		return e.zfsErr(err, "sizing "+ds)
	}
	return nil
}

func usableMountpoint(m string) bool {
	return m != "" && m != "-" && m != "none" && m != "legacy"
}

// volumeContext is the share's context plus the provisioner fields.
func (e *Engine) volumeContext(share map[string]string) map[string]string {
	return e.withProvisioner(share, volumecontext.Provisioner{Driver: e.cfg.driver, InstanceID: e.cfg.instanceID})
}

// withProvisioner is the share's volume_context with the provisioner keys
// added (democratic-csi compares them when a volume moves between drivers).
func (e *Engine) withProvisioner(share map[string]string, p volumecontext.Provisioner) map[string]string {
	vc := make(map[string]string, len(share)+2)
	maps.Copy(vc, share)
	maps.Copy(vc, p.Encode())
	return vc
}

// storedContext reads the share context democratic-csi or switchyard
// stored on the dataset. Values may be numbers in democratic-csi's JSON
// (lun, nsid): they become strings, as CSI requires.
func storedContext(props zfs.Properties) (map[string]string, bool) {
	p := props[propShareContext]
	if !p.IsSet() {
		return nil, false
	}
	var raw map[string]any
	if err := json.Unmarshal([]byte(p.Value), &raw); err != nil {
		return nil, false
	}
	vc := make(map[string]string, len(raw))
	for k, v := range raw {
		switch x := v.(type) {
		case string:
			vc[k] = x
		case nil:
		default:
			b, _ := json.Marshal(x)
			vc[k] = string(b)
		}
	}
	return vc, true
}

func (e *Engine) volumeFromProps(id string, props zfs.Properties) (*csi.Volume, bool) {
	return e.volumeWithContext(id, props, nil)
}

// volumeWithContext is volumeFromProps for a call that may have written the
// share context itself (w, or nil): its read-back needs no decode.
func (e *Engine) volumeWithContext(id string, props zfs.Properties, w *writtenContext) (*csi.Volume, bool) {
	share, ok := w.stored(props)
	if !ok || props[propManaged].Value != "true" {
		return nil, false
	}
	// The volume reports the driver that made it, when the dataset says.
	prov := volumecontext.Provisioner{Driver: e.cfg.driver, InstanceID: e.cfg.instanceID}
	if p := props[propProvisionerDriver]; p.IsSet() {
		prov.Driver = p.Value
	}
	if p := props[propProvisionerID]; p.IsSet() {
		prov.InstanceID = p.Value
	}
	vc := e.withProvisioner(share, prov)
	v := &csi.Volume{VolumeId: id, CapacityBytes: e.reportedCapacity(e.sizeOf(props)), VolumeContext: vc}
	if props[propSourceType].IsSet() {
		switch props[propSourceType].Value {
		case "snapshot":
			v.ContentSource = &csi.VolumeContentSource{Type: &csi.VolumeContentSource_Snapshot{
				Snapshot: &csi.VolumeContentSource_SnapshotSource{SnapshotId: props[propSourceID].Value}}}
		case "volume":
			v.ContentSource = &csi.VolumeContentSource{Type: &csi.VolumeContentSource_Volume{
				Volume: &csi.VolumeContentSource_VolumeSource{VolumeId: props[propSourceID].Value}}}
		}
	}
	return v, true
}

func (e *Engine) createResponse(id string, props zfs.Properties, src *csi.VolumeContentSource, w *writtenContext) (*csi.CreateVolumeResponse, error) {
	v, ok := e.volumeWithContext(id, props, w)
	if !ok {
		return nil, status.Errorf(codes.Internal, "volume %s is marked provisioned but its %s is missing or not JSON", id, propShareContext)
	}
	v.ContentSource = src
	return &csi.CreateVolumeResponse{Volume: v}, nil
}

// DeleteVolume removes the share, then the dataset (and the snapshot it
// was cloned from, when the driver made that snapshot for it).
func (e *Engine) DeleteVolume(ctx context.Context, req *csi.DeleteVolumeRequest) (*csi.DeleteVolumeResponse, error) {
	id := req.GetVolumeId()
	if id == "" {
		return nil, status.Error(codes.InvalidArgument, "volume_id is required")
	}
	if !volumeIDOK(id) {
		return &csi.DeleteVolumeResponse{}, nil
	}
	ds := e.cfg.datasetName(id)
	if done, err := e.deleteOneShot(ctx, id, ds); done {
		if err != nil {
			return nil, err
		}
		return &csi.DeleteVolumeResponse{}, nil
	}
	rows, err := e.zfs.List(ctx, ds, zfs.ListOptions{Depth: 1, Types: []string{"filesystem", "volume", "snapshot"},
		Props: append([]string{"origin", "clones"}, e.share.AssetProps()...)})
	if zfs.IsNotExist(err) {
		return &csi.DeleteVolumeResponse{}, nil
	}
	if err != nil {
		return nil, e.zfsErr(err, "reading "+ds)
	}
	var self zfs.Properties
	var clones []string
	for _, r := range rows {
		if r.Name == ds {
			self = zfs.Properties{}
			for k, v := range r.Props {
				self[k] = zfs.Property{Value: v}
			}
		}
		if c := r.Props["clones"]; strings.Contains(r.Name, "@") && c != "" && c != "-" {
			clones = append(clones, strings.Split(c, ",")...)
		}
	}
	if len(clones) > 0 {
		return nil, status.Errorf(codes.FailedPrecondition, "volume %s has dependent clones (%s): delete the volumes made from it, or its snapshots' clones, first", id, strings.Join(clones, ", "))
	}
	if e.cfg.retain {
		e.log.Info("keeping the dataset (deleteStrategy: retain)", "dataset", ds)
		return &csi.DeleteVolumeResponse{}, nil
	}
	if err := e.share.Remove(ctx, ds, self); err != nil {
		return nil, err
	}
	if err := e.destroy(ctx, ds); err != nil {
		return nil, err
	}
	if origin := self["origin"].Value; strings.Contains(origin, "@"+cloneSnapshotPrefix) {
		if err := e.zfs.Destroy(ctx, origin, zfs.DestroyOptions{Defer: true}); err != nil && !zfs.IsNotExist(err) {
			// The volume is gone; a leftover source snapshot only costs
			// space and is removed with its volume.
			e.log.Warn("could not remove the snapshot the volume was cloned from", "snapshot", origin, "error", err)
		}
	}
	return &csi.DeleteVolumeResponse{}, nil
}

// destroy runs `zfs destroy -r -f`, retrying while the dataset is busy (a
// share or a zvol user letting go).
func (e *Engine) destroy(ctx context.Context, ds string) error {
	for attempt := 0; ; attempt++ {
		err := e.zfs.Destroy(ctx, ds, zfs.DestroyOptions{Recursive: true, Force: true})
		switch {
		case err == nil, zfs.IsNotExist(err):
			return nil
		case zfs.HasDependentClones(err):
			return status.Errorf(codes.FailedPrecondition, "%s has dependent clones: delete the volumes made from it first (%v)", ds, err)
		case zfs.IsBusy(err) && attempt < 5:
			select {
			case <-ctx.Done():
				return status.FromContextError(ctx.Err()).Err()
			case <-time.After(time.Duration(attempt+1) * 200 * time.Millisecond):
			}
			continue
		}
		return e.zfsErr(err, "destroying "+ds)
	}
}

// ControllerExpandVolume grows the zvol (volsize, rounded to its block
// size) or the filesystem quota. Zvols need the node to grow the
// filesystem too.
func (e *Engine) ControllerExpandVolume(ctx context.Context, req *csi.ControllerExpandVolumeRequest) (*csi.ControllerExpandVolumeResponse, error) {
	id := req.GetVolumeId()
	if id == "" {
		return nil, status.Error(codes.InvalidArgument, "volume_id is required")
	}
	if req.GetCapacityRange() == nil {
		return nil, status.Error(codes.InvalidArgument, "capacity_range is required")
	}
	if !volumeIDOK(id) {
		return nil, status.Errorf(codes.NotFound, "volume %s does not exist", echo.Quote(id))
	}
	ds := e.cfg.datasetName(id)
	if resp, ok, err := e.expandOneShot(ctx, id, ds, req.GetCapacityRange()); ok {
		return resp, err
	}
	props, err := e.zfs.Get(ctx, ds, expandProps...)
	if zfs.IsNotExist(err) {
		return nil, status.Errorf(codes.NotFound, "volume %s does not exist (no dataset %s)", id, ds)
	}
	if err != nil {
		return nil, e.zfsErr(err, "reading "+ds)
	}
	var block int64
	if e.cfg.kind == volume {
		block = props.Int("volblocksize")
	}
	size, err := e.expandSize(req.GetCapacityRange(), block)
	if err != nil {
		return nil, err
	}
	if have := e.sizeOf(props); have >= size {
		return e.expanded(have), nil
	}
	if err := e.zfs.Set(ctx, ds, e.growProps(size)...); err != nil {
		return nil, e.growErr(err, id, ds, size)
	}
	return e.expanded(size), nil
}

// expandProps are the properties ControllerExpandVolume reads.
var expandProps = []string{"type", "volsize", "volblocksize", "refquota"}

// expandSize is the size a capacity range asks of a volume with the given
// block size (0 for filesystems).
func (e *Engine) expandSize(r *csi.CapacityRange, block int64) (int64, error) {
	size, err := backend.Capacity(r, block)
	if err != nil {
		return 0, err
	}
	return e.atLeastMinQuota(size, r)
}

// growProps are the properties that grow a volume to size.
func (e *Engine) growProps(size int64) []zfs.Prop {
	n := strconv.FormatInt(size, 10)
	if e.cfg.kind == volume {
		return []zfs.Prop{{Name: "volsize", Value: n}}
	}
	var set []zfs.Prop
	if e.cfg.quotas {
		set = append(set, zfs.Prop{Name: "refquota", Value: n})
	}
	if e.cfg.reservation {
		set = append(set, zfs.Prop{Name: "refreservation", Value: n})
	}
	return set
}

func (e *Engine) growErr(err error, id, ds string, size int64) error {
	if zfs.IsOutOfSpace(err) {
		return status.Errorf(codes.OutOfRange, "cannot grow volume %s to %d bytes: %v", id, size, err)
	}
	return e.zfsErr(err, "growing "+ds)
}

// expanded answers a volume now size bytes large. Zvols need the node to
// grow the filesystem too.
func (e *Engine) expanded(size int64) *csi.ControllerExpandVolumeResponse {
	return &csi.ControllerExpandVolumeResponse{CapacityBytes: e.reportedCapacity(size), NodeExpansionRequired: e.cfg.kind == volume}
}

// ValidateVolumeCapabilities confirms the capabilities an existing volume
// can serve.
func (e *Engine) ValidateVolumeCapabilities(ctx context.Context, req *csi.ValidateVolumeCapabilitiesRequest) (*csi.ValidateVolumeCapabilitiesResponse, error) {
	id := req.GetVolumeId()
	if id == "" {
		return nil, status.Error(codes.InvalidArgument, "volume_id is required")
	}
	if len(req.GetVolumeCapabilities()) == 0 {
		return nil, status.Error(codes.InvalidArgument, "volume_capabilities is required")
	}
	if _, err := e.getVolume(ctx, id); err != nil {
		return nil, err
	}
	if why := e.checkCapabilities(req.GetVolumeCapabilities()); why != "" {
		return &csi.ValidateVolumeCapabilitiesResponse{Message: why}, nil
	}
	return &csi.ValidateVolumeCapabilitiesResponse{Confirmed: &csi.ValidateVolumeCapabilitiesResponse_Confirmed{
		VolumeContext: req.GetVolumeContext(), VolumeCapabilities: req.GetVolumeCapabilities(), Parameters: req.GetParameters(),
	}}, nil
}

// getVolume reads one volume; NOT_FOUND when there is no such managed dataset.
func (e *Engine) getVolume(ctx context.Context, id string) (*csi.Volume, error) {
	if !volumeIDOK(id) {
		return nil, status.Errorf(codes.NotFound, "volume %s does not exist", echo.Quote(id))
	}
	ds := e.cfg.datasetName(id)
	props, err := e.zfs.Get(ctx, ds, e.volumeProps()...)
	if zfs.IsNotExist(err) {
		return nil, status.Errorf(codes.NotFound, "volume %s does not exist (no dataset %s)", id, ds)
	}
	if err != nil {
		return nil, e.zfsErr(err, "reading "+ds)
	}
	v, ok := e.volumeFromProps(id, props)
	if !ok {
		return nil, status.Errorf(codes.NotFound, "dataset %s is not a provisioned volume of this driver", ds)
	}
	return v, nil
}

// ControllerGetVolume returns one volume.
func (e *Engine) ControllerGetVolume(ctx context.Context, req *csi.ControllerGetVolumeRequest) (*csi.ControllerGetVolumeResponse, error) {
	if req.GetVolumeId() == "" {
		return nil, status.Error(codes.InvalidArgument, "volume_id is required")
	}
	v, err := e.getVolume(ctx, req.GetVolumeId())
	if err != nil {
		return nil, err
	}
	return &csi.ControllerGetVolumeResponse{Volume: v, Status: &csi.ControllerGetVolumeResponse_VolumeStatus{}}, nil
}

// GetCapacity is the space available under datasetParentName (made first,
// like democratic-csi, so a fresh pool answers).
func (e *Engine) GetCapacity(ctx context.Context, req *csi.GetCapacityRequest) (*csi.GetCapacityResponse, error) {
	if caps := req.GetVolumeCapabilities(); len(caps) > 0 && e.checkCapabilities(caps) != "" {
		return &csi.GetCapacityResponse{}, nil
	}
	// The mountpoint comes along for free: it lets a new volume's share
	// path be known before the volume is made (oneshot.go).
	props, err := e.zfs.Get(ctx, e.cfg.parent, "available", "mountpoint")
	if zfs.IsNotExist(err) {
		if err := e.zfs.Create(ctx, e.cfg.parent, zfs.CreateOptions{Parents: true}); err != nil && !zfs.IsExists(err) {
			return nil, e.zfsErr(err, "creating "+e.cfg.parent)
		}
		props, err = e.zfs.Get(ctx, e.cfg.parent, "available", "mountpoint")
	}
	if err != nil {
		return nil, e.zfsErr(err, fmt.Sprintf("reading the space available in %s", e.cfg.parent))
	}
	e.parentSeen.Store(true)
	if mp, ok := props["mountpoint"]; ok && e.cfg.kind == filesystem {
		e.parentMnt.set(mp.Value)
	}
	return &csi.GetCapacityResponse{AvailableCapacity: max(props.Int("available"), 0)}, nil
}

// rollback removes a dataset this call created, with its own deadline: the
// request's context may be what failed.
func (e *Engine) rollback(ds string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var origin string
	if p, err := e.zfs.Get(ctx, ds, "origin"); err == nil {
		origin = p["origin"].Value
	}
	if err := e.share.Remove(ctx, ds, zfs.Properties{}); err != nil {
		// Destroying the dataset now would leave its share (a target, a
		// subsystem) behind with nothing to find it by. Left unfinished,
		// the dataset is completed or removed by the CO's retry.
		e.log.Warn("could not remove the share of a half-made volume; leaving it for the retry", "dataset", ds, "error", err)
		return
	}
	if err := e.destroy(ctx, ds); err != nil {
		e.log.Warn("could not remove a half-made volume", "dataset", ds, "error", err)
		return
	}
	// A clone of a volume came with a snapshot made for it alone.
	if strings.Contains(origin, "@"+cloneSnapshotPrefix) {
		if err := e.zfs.Destroy(ctx, origin, zfs.DestroyOptions{Defer: true}); err != nil && !zfs.IsNotExist(err) {
			e.log.Warn("could not remove the snapshot a half-made volume was cloned from", "snapshot", origin, "error", err)
		}
	}
}

// atLeastMinQuota raises a filesystem volume's size to the platform's
// smallest quota (CSI allows more than required_bytes), unless
// limit_bytes forbids it.
func (e *Engine) atLeastMinQuota(size int64, r *csi.CapacityRange) (int64, error) {
	least := e.plat.MinQuota()
	if e.cfg.kind == volume || !e.cfg.quotas || least == 0 || size >= least {
		return size, nil
	}
	if l := r.GetLimitBytes(); l > 0 && l < least {
		return 0, status.Errorf(codes.OutOfRange, "limit_bytes %d is below %d, the smallest quota %s accepts", l, least, e.cfg.driver)
	}
	return least, nil
}

// unlabelledClone reports whether ds is a clone without this driver's
// labels whose origin is exactly the snapshot this request clones: what a
// CreateVolume cut short between the clone and its labels leaves. Its name
// comes from the volume name under this connection's parent, and its
// origin from the request, so it is this volume.
func (e *Engine) unlabelledClone(ds string, props zfs.Properties, src *source) bool {
	if src == nil || props[propManaged].IsSet() || props[propVolumeName].IsSet() {
		return false
	}
	origin := props["origin"].Value
	if origin == "" || origin == "-" {
		return false
	}
	want := src.snap
	if src.temporary {
		want = src.of + "@" + cloneSnapshotPrefix + ds[strings.LastIndexByte(ds, '/')+1:]
	}
	return want != "" && origin == want
}
