package synology

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/switchyard-csi/switchyard/driver/backend"
	"github.com/switchyard-csi/switchyard/driver/echo"
	"github.com/switchyard-csi/switchyard/driver/synology/dsm"
	"github.com/switchyard-csi/switchyard/driver/volumecontext"
	"github.com/switchyard-csi/switchyard/driver/volumeid"
)

// maxIQN is the longest iSCSI name (RFC 3720).
const maxIQN = 223

// lunName is democratic-csi's iSCSI name of a volume id: namePrefix + id
// + nameSuffix, lower case. It is the LUN's and the target's name.
func (d *Driver) lunName(id string) string {
	return strings.ToLower(d.s.prefix + id + d.s.suffix)
}

// checkLunName says why a LUN name cannot be made ("" when it can).
func (d *Driver) checkLunName(name string) string {
	if len(name) > maxLunName {
		return fmt.Sprintf("the LUN name %s (iscsi.namePrefix + name + iscsi.nameSuffix) has %d characters; DSM allows %d: shorten the name or iscsi.namePrefix/nameSuffix",
			echo.Quote(name), len(name), maxLunName)
	}
	if !validName(name, false) {
		return fmt.Sprintf("the LUN name %s may hold only letters, digits, '.', '_' and '-' and must start with a letter or digit", echo.Quote(name))
	}
	if iqn := d.s.baseIQN + name; len(iqn) > maxIQN {
		return fmt.Sprintf("the target IQN (iscsi.baseiqn + LUN name) would have %d characters; iSCSI allows %d", len(iqn), maxIQN)
	}
	return ""
}

// idOf is the volume id of a LUN this config made ("" for other LUNs).
func (d *Driver) idOf(lunName string) string {
	p, s := strings.ToLower(d.s.prefix), strings.ToLower(d.s.suffix)
	if !strings.HasPrefix(lunName, p) || !strings.HasSuffix(lunName, s) || len(lunName) <= len(p)+len(s) {
		return ""
	}
	return lunName[len(p) : len(lunName)-len(s)]
}

// lunOf finds a volume's LUN: NOT_FOUND when it does not exist (or is
// being deleted).
func (d *Driver) lunOf(ctx context.Context, id string) (*dsm.LUN, error) {
	name := d.lunName(id)
	if d.checkLunName(name) != "" {
		return nil, status.Errorf(codes.NotFound, "volume %s does not exist (not a LUN name)", echo.Quote(id))
	}
	l, err := d.c.LUNByName(ctx, name)
	if err != nil {
		return nil, d.dsmErr(err, "listing LUNs")
	}
	if l == nil || l.Deleting() {
		return nil, status.Errorf(codes.NotFound, "volume %s does not exist: no LUN %s", echo.Quote(id), echo.Quote(name))
	}
	return l, nil
}

func (d *Driver) createLUN(ctx context.Context, req *csi.CreateVolumeRequest, size int64) (*csi.Volume, error) {
	id, err := volumeid.Volume(strings.ToLower(req.GetName()), d.s.idHash, maxVolumeID)
	if err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "%s: %v", d.s.driver, err)
	}
	name := d.lunName(id)
	if why := d.checkLunName(name); why != "" {
		return nil, status.Error(codes.InvalidArgument, why)
	}
	lunT, err := templates(d.s.lunTemplate, "lunTemplate", req.GetParameters(), req.GetSecrets())
	if err != nil {
		return nil, err
	}
	tgtT, err := templates(d.s.targetTemplate, "targetTemplate", req.GetParameters(), req.GetSecrets())
	if err != nil {
		return nil, err
	}
	if why := checkCHAP(tgtT); why != "" {
		return nil, status.Errorf(codes.InvalidArgument, "targetTemplate: %s", why)
	}
	desc, _ := lunT["description"].(string)
	if desc != "" {
		lunT["description"] = render(desc, req.GetName(), req.GetParameters())
		desc = lunT["description"].(string)
	}
	l, err := d.c.LUNByName(ctx, name)
	if err != nil {
		return nil, d.dsmErr(err, "listing LUNs")
	}
	switch {
	case l != nil && l.Deleting():
		return nil, status.Errorf(codes.Aborted, "LUN %s of volume %s is still being deleted by DSM; retry", echo.Quote(name), echo.Quote(id))
	case l != nil:
		if !backend.Fits(l.Size, req.GetCapacityRange()) {
			return nil, status.Errorf(codes.AlreadyExists, "volume %s already exists with %d bytes, which does not fit required_bytes %d / limit_bytes %d",
				echo.Quote(id), l.Size, req.GetCapacityRange().GetRequiredBytes(), req.GetCapacityRange().GetLimitBytes())
		}
	default:
		if l, err = d.makeLUN(ctx, req, name, size, lunT, desc); err != nil {
			return nil, err
		}
	}
	iqn := d.s.baseIQN + name
	index, err := d.exportLUN(ctx, l, name, iqn, tgtT)
	if err != nil {
		return nil, err
	}
	vc := volumecontext.Context{
		Attach:      volumecontext.ISCSI{Portal: d.s.portal, Portals: d.s.portals, Interface: d.s.iface, IQN: iqn, LUN: index},
		Provisioner: d.provisioner(),
	}
	return &csi.Volume{VolumeId: id, CapacityBytes: l.Size, VolumeContext: vc.Encode()}, nil
}

// makeLUN makes the LUN: empty, or a clone of a snapshot or a volume
// (grown to the size asked for).
func (d *Driver) makeLUN(ctx context.Context, req *csi.CreateVolumeRequest, name string, size int64, lunT dsm.Params, desc string) (*dsm.LUN, error) {
	src := req.GetVolumeContentSource()
	var err error
	switch {
	case src.GetSnapshot() != nil:
		sid := src.GetSnapshot().GetSnapshotId()
		lunUUID, snapUUID, ok := parseLunSnapID(sid)
		if !ok {
			return nil, status.Errorf(codes.NotFound, "snapshot %s does not exist (not a synology-iscsi snapshot id)", echo.Quote(sid))
		}
		snaps, lerr := d.c.ListSnapshots(ctx, lunUUID)
		if dsm.Is(lerr, 18990531) {
			return nil, status.Errorf(codes.NotFound, "snapshot %s does not exist: its LUN is gone", echo.Quote(sid))
		}
		if lerr != nil {
			return nil, d.dsmErr(lerr, "listing the snapshots of LUN "+lunUUID)
		}
		var snap *dsm.Snapshot
		for i := range snaps {
			if snaps[i].UUID == snapUUID {
				snap = &snaps[i]
			}
		}
		if snap == nil {
			return nil, status.Errorf(codes.NotFound, "snapshot %s does not exist", echo.Quote(sid))
		}
		if lim := req.GetCapacityRange().GetLimitBytes(); lim > 0 && snap.TotalSize > lim {
			return nil, status.Errorf(codes.OutOfRange, "snapshot %s has %d bytes, more than limit_bytes %d", echo.Quote(sid), snap.TotalSize, lim)
		}
		err = d.c.CloneSnapshot(ctx, lunUUID, snapUUID, name, desc)
	case src.GetVolume() != nil:
		vid := src.GetVolume().GetVolumeId()
		from, ferr := d.lunOf(ctx, vid)
		if ferr != nil {
			return nil, ferr
		}
		if lim := req.GetCapacityRange().GetLimitBytes(); lim > 0 && from.Size > lim {
			return nil, status.Errorf(codes.OutOfRange, "volume %s has %d bytes, more than limit_bytes %d", echo.Quote(vid), from.Size, lim)
		}
		err = d.c.CloneLUN(ctx, from.UUID, name, d.s.location, desc)
	default:
		_, err = d.c.CreateLUN(ctx, name, d.s.location, size, lunT)
	}
	if err != nil && !dsm.Is(err, 18990538) { // 18990538: made by an earlier call
		return nil, d.dsmErr(err, "creating LUN "+echo.Quote(name)+" on synology.volume "+echo.Quote(d.s.location))
	}
	l, err := d.c.LUNByName(ctx, name)
	if err != nil {
		return nil, d.dsmErr(err, "listing LUNs")
	}
	if l == nil {
		return nil, status.Errorf(codes.Internal, "DSM made LUN %s but does not list it", echo.Quote(name))
	}
	if l.Size < size {
		if err := d.c.ResizeLUN(ctx, l.UUID, size); err != nil {
			return nil, d.dsmErr(err, "growing LUN "+echo.Quote(name))
		}
		l.Size = size
	}
	return l, nil
}

// exportLUN makes the LUN's target and maps the LUN into it; the answer
// is the LUN's number in the target.
func (d *Driver) exportLUN(ctx context.Context, l *dsm.LUN, name, iqn string, tgtT dsm.Params) (int, error) {
	t, err := d.c.TargetByIQN(ctx, iqn)
	if err != nil {
		return 0, d.dsmErr(err, "listing iSCSI targets")
	}
	if t == nil {
		if _, err := d.c.CreateTarget(ctx, name, iqn, tgtT); err != nil && !dsm.Is(err, 18990744) {
			return 0, d.dsmErr(err, "creating iSCSI target "+echo.Quote(iqn))
		}
		if t, err = d.c.TargetByIQN(ctx, iqn); err != nil {
			return 0, d.dsmErr(err, "listing iSCSI targets")
		}
		if t == nil {
			return 0, status.Errorf(codes.FailedPrecondition, "iSCSI target %s is not listed after creating it: another target may be named %s", echo.Quote(iqn), echo.Quote(name))
		}
	}
	for _, m := range t.MappedLuns {
		if m.LunUUID == l.UUID {
			return m.MappingIndex, nil
		}
	}
	if err := d.c.MapLUN(ctx, l.UUID, t.ID); err != nil {
		return 0, d.dsmErr(err, "mapping LUN "+echo.Quote(name)+" into target "+echo.Quote(iqn))
	}
	if t, err = d.c.TargetByIQN(ctx, iqn); err != nil {
		return 0, d.dsmErr(err, "listing iSCSI targets")
	}
	for _, m := range t.MappedLuns {
		if m.LunUUID == l.UUID {
			return m.MappingIndex, nil
		}
	}
	return 0, status.Errorf(codes.Internal, "DSM mapped LUN %s into target %s but does not list the mapping", echo.Quote(name), echo.Quote(iqn))
}

// deleteWait bounds the wait for DSM's background LUN deletion.
var deleteWait = 60 * time.Second

// deleteLUN removes the target and the LUN, then waits until DSM's
// background deletion is done (so the space is free and the name usable).
func (d *Driver) deleteLUN(ctx context.Context, id string) error {
	name := d.lunName(id)
	if d.checkLunName(name) != "" {
		return nil // no such LUN can exist
	}
	t, err := d.c.TargetByIQN(ctx, d.s.baseIQN+name)
	if err != nil {
		return d.dsmErr(err, "listing iSCSI targets")
	}
	if t != nil {
		if err := d.c.DeleteTarget(ctx, t.ID); err != nil && !dsm.Is(err, 18990710) {
			return d.dsmErr(err, "deleting iSCSI target "+echo.Quote(t.IQN))
		}
	}
	l, err := d.c.LUNByName(ctx, name)
	if err != nil {
		return d.dsmErr(err, "listing LUNs")
	}
	if l == nil {
		return nil
	}
	if !l.Deleting() {
		if err := d.c.DeleteLUN(ctx, l.UUID); err != nil && !dsm.Is(err, 18990531) {
			return d.dsmErr(err, "deleting LUN "+echo.Quote(name))
		}
	}
	deadline := time.Now().Add(deleteWait)
	for wait := 50 * time.Millisecond; ; wait = min(wait*2, 2*time.Second) {
		l, err := d.c.LUNByName(ctx, name)
		if err != nil {
			return d.dsmErr(err, "listing LUNs")
		}
		if l == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return status.Errorf(codes.Unavailable, "DSM is still deleting LUN %s after %s; retry", echo.Quote(name), deleteWait)
		}
		select {
		case <-ctx.Done():
			return status.FromContextError(ctx.Err()).Err()
		case <-time.After(wait):
		}
	}
}

func (d *Driver) expandLUN(ctx context.Context, id string, size int64) (*csi.ControllerExpandVolumeResponse, error) {
	l, err := d.lunOf(ctx, id)
	if err != nil {
		return nil, err
	}
	if l.Size < size {
		if err := d.c.ResizeLUN(ctx, l.UUID, size); err != nil {
			return nil, d.dsmErr(err, "growing LUN "+echo.Quote(l.Name))
		}
		l.Size = size
	}
	return &csi.ControllerExpandVolumeResponse{CapacityBytes: l.Size, NodeExpansionRequired: true}, nil
}

// listLUNs lists this config's LUNs with their volume_context.
func (d *Driver) listLUNs(ctx context.Context) ([]*csi.ListVolumesResponse_Entry, error) {
	luns, err := d.c.ListLUNs(ctx)
	if err != nil {
		return nil, d.dsmErr(err, "listing LUNs")
	}
	targets, err := d.c.ListTargets(ctx)
	if err != nil {
		return nil, d.dsmErr(err, "listing iSCSI targets")
	}
	var out []*csi.ListVolumesResponse_Entry
	for _, l := range luns {
		id := d.idOf(l.Name)
		if id == "" || l.Deleting() {
			continue
		}
		iqn := d.s.baseIQN + l.Name
		for _, t := range targets {
			if !strings.EqualFold(t.IQN, iqn) {
				continue
			}
			for _, m := range t.MappedLuns {
				if m.LunUUID == l.UUID {
					vc := volumecontext.Context{Attach: volumecontext.ISCSI{Portal: d.s.portal, Portals: d.s.portals, Interface: d.s.iface, IQN: iqn, LUN: m.MappingIndex},
						Provisioner: d.provisioner()}
					out = append(out, &csi.ListVolumesResponse_Entry{Volume: &csi.Volume{VolumeId: id, CapacityBytes: l.Size, VolumeContext: vc.Encode()}})
				}
			}
		}
	}
	return out, nil
}

// LUN snapshot ids are democratic-csi's /lun/<lun uuid>/<snapshot uuid>.
func lunSnapID(lunUUID, snapUUID string) string { return "/lun/" + lunUUID + "/" + snapUUID }

func parseLunSnapID(id string) (lunUUID, snapUUID string, ok bool) {
	p := strings.Split(id, "/")
	if len(p) != 4 || p[0] != "" || p[1] != "lun" || p[2] == "" || p[3] == "" {
		return "", "", false
	}
	return p[2], p[3], true
}

func (d *Driver) snapshotLUN(ctx context.Context, req *csi.CreateSnapshotRequest) (*csi.Snapshot, error) {
	l, err := d.lunOf(ctx, req.GetSourceVolumeId())
	if err != nil {
		return nil, err
	}
	tmpl, err := templates(d.s.lunSnapshotTemplate, "lunSnapshotTemplate", req.GetParameters(), req.GetSecrets())
	if err != nil {
		return nil, err
	}
	// A snapshot name is unique across volumes.
	all, err := d.listLUNSnapshotEntries(ctx, "", "")
	if err != nil {
		return nil, err
	}
	for _, e := range all {
		if e.desc == req.GetName() && e.lunUUID != l.UUID {
			return nil, status.Errorf(codes.AlreadyExists, "snapshot name %s is already used by a snapshot of volume %s", echo.Quote(req.GetName()), echo.Quote(e.GetSnapshot().GetSourceVolumeId()))
		}
	}
	find := func() (*csi.Snapshot, error) {
		snaps, err := d.c.ListSnapshots(ctx, l.UUID)
		if err != nil {
			return nil, d.dsmErr(err, "listing the snapshots of LUN "+echo.Quote(l.Name))
		}
		for _, s := range snaps {
			if s.Description == req.GetName() {
				return d.lunSnapshot(s, req.GetSourceVolumeId()), nil
			}
		}
		return nil, nil
	}
	if s, err := find(); s != nil || err != nil {
		return s, err
	}
	if err := d.c.TakeSnapshot(ctx, l.UUID, req.GetName(), tmpl); err != nil {
		return nil, d.dsmErr(err, "snapshotting LUN "+echo.Quote(l.Name))
	}
	s, err := find()
	if err == nil && s == nil {
		err = status.Errorf(codes.Internal, "DSM took snapshot %s of LUN %s but does not list it", echo.Quote(req.GetName()), echo.Quote(l.Name))
	}
	return s, err
}

func (d *Driver) lunSnapshot(s dsm.Snapshot, sourceID string) *csi.Snapshot {
	return &csi.Snapshot{SnapshotId: lunSnapID(s.ParentUUID, s.UUID), SourceVolumeId: sourceID, SizeBytes: s.TotalSize,
		CreationTime: timestamppb.New(time.Unix(s.Time, 0)), ReadyToUse: true}
}

func (d *Driver) deleteLUNSnapshot(ctx context.Context, id string) error {
	lunUUID, snapUUID, ok := parseLunSnapID(id)
	if !ok {
		return nil // democratic-csi too treats a malformed id as deleted
	}
	snaps, err := d.c.ListSnapshots(ctx, lunUUID)
	if dsm.Is(err, 18990531) {
		return nil // the LUN is gone, and its snapshots with it
	}
	if err != nil {
		return d.dsmErr(err, "listing the snapshots of LUN "+lunUUID)
	}
	for _, s := range snaps {
		if s.UUID == snapUUID {
			if err := d.c.DeleteSnapshot(ctx, snapUUID); err != nil && !dsm.Is(err, 18990532) {
				return d.dsmErr(err, "deleting snapshot "+echo.Quote(id))
			}
		}
	}
	return nil
}

// lunSnapEntry is a listed snapshot with what CreateSnapshot checks.
type lunSnapEntry struct {
	*csi.ListSnapshotsResponse_Entry
	desc, lunUUID string
}

func (d *Driver) listLUNSnapshotEntries(ctx context.Context, snapID, sourceID string) ([]lunSnapEntry, error) {
	luns, err := d.c.ListLUNs(ctx)
	if err != nil {
		return nil, d.dsmErr(err, "listing LUNs")
	}
	wantLun, wantSnap := "", ""
	if snapID != "" {
		var ok bool
		if wantLun, wantSnap, ok = parseLunSnapID(snapID); !ok {
			return nil, nil
		}
	}
	var out []lunSnapEntry
	for _, l := range luns {
		id := d.idOf(l.Name)
		if id == "" || l.Deleting() || wantLun != "" && l.UUID != wantLun || sourceID != "" && id != sourceID {
			continue
		}
		snaps, err := d.c.ListSnapshots(ctx, l.UUID)
		if dsm.Is(err, 18990531) {
			continue
		}
		if err != nil {
			return nil, d.dsmErr(err, "listing the snapshots of LUN "+echo.Quote(l.Name))
		}
		for _, s := range snaps {
			if wantSnap != "" && s.UUID != wantSnap {
				continue
			}
			out = append(out, lunSnapEntry{&csi.ListSnapshotsResponse_Entry{Snapshot: d.lunSnapshot(s, id)}, s.Description, l.UUID})
		}
	}
	return out, nil
}

func (d *Driver) listLUNSnapshots(ctx context.Context, snapID, sourceID string) ([]*csi.ListSnapshotsResponse_Entry, error) {
	es, err := d.listLUNSnapshotEntries(ctx, snapID, sourceID)
	out := make([]*csi.ListSnapshotsResponse_Entry, 0, len(es))
	for _, e := range es {
		out = append(out, e.ListSnapshotsResponse_Entry)
	}
	return out, err
}
