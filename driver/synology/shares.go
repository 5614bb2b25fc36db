package synology

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
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
)

// shareMarker starts the description of every share this driver makes,
// so ListVolumes never lists a user's own shares.
const shareMarker = "switchyard "

// shareName is a volume's shared folder name: namePrefix + name +
// nameSuffix when that fits DSM's 32 characters and its character set;
// otherwise the name is cut and a hash of the whole name appended, so
// that the same name always gives the same share.
func (d *Driver) shareName(name string) string {
	clean := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-' {
			return r
		}
		return '-'
	}, name)
	full := d.s.prefix + clean + d.s.suffix
	if clean == name && len(full) <= maxShareName && validName(full, false) {
		return full
	}
	sum := sha256.Sum256([]byte(name))
	room := maxShareName - len(d.s.prefix) - len(d.s.suffix) - 11
	if room > len(clean) {
		room = len(clean)
	}
	return d.s.prefix + clean[:room] + "-" + hex.EncodeToString(sum[:])[:10] + d.s.suffix
}

// ownShare reports a share name this config could have made.
func (d *Driver) ownShare(name string) bool {
	return len(name) <= maxShareName && validName(name, false) && strings.HasPrefix(name, d.s.prefix) &&
		strings.HasSuffix(name, d.s.suffix) && len(name) > len(d.s.prefix)+len(d.s.suffix)
}

// shareOf reads a volume's share (NOT_FOUND when there is none).
func (d *Driver) shareOf(ctx context.Context, id string) (*dsm.Share, error) {
	if !d.ownShare(id) {
		return nil, status.Errorf(codes.NotFound, "volume %s does not exist (not a share name of this config)", echo.Quote(id))
	}
	sh, err := d.c.GetShare(ctx, id)
	if dsm.Is(err, 402) {
		return nil, status.Errorf(codes.NotFound, "volume %s does not exist: no shared folder %s", echo.Quote(id), echo.Quote(id))
	}
	if err != nil {
		return nil, d.dsmErr(err, "reading shared folder "+echo.Quote(id))
	}
	return sh, nil
}

func mb(size int64) int64 { return (size + sizeUnit - 1) / sizeUnit }

// shareContext is the node's volume_context of a share.
func (d *Driver) shareContext(sh *dsm.Share) map[string]string {
	vc := volumecontext.Context{Provisioner: d.provisioner()}
	if d.s.driver == DriverNFS {
		vol := sh.VolPath
		if vol == "" {
			vol = d.s.location
		}
		vc.Attach = volumecontext.NFS{Server: d.s.shareHost, Share: vol + "/" + sh.Name}
	} else {
		vc.Attach = volumecontext.SMB{Server: d.s.shareHost, Share: sh.Name}
	}
	return vc.Encode()
}

func (d *Driver) createShare(ctx context.Context, req *csi.CreateVolumeRequest, size int64) (*csi.Volume, error) {
	name := d.shareName(req.GetName())
	sh, err := d.c.GetShare(ctx, name)
	switch {
	case err == nil:
		if !backend.Fits(sh.QuotaMB*sizeUnit, req.GetCapacityRange()) {
			return nil, status.Errorf(codes.AlreadyExists, "volume %s already exists with a %d MB quota, which does not fit required_bytes %d / limit_bytes %d",
				echo.Quote(name), sh.QuotaMB, req.GetCapacityRange().GetRequiredBytes(), req.GetCapacityRange().GetLimitBytes())
		}
	case dsm.Is(err, 402):
		if sh, err = d.makeShare(ctx, req, name, size); err != nil {
			return nil, err
		}
	default:
		return nil, d.dsmErr(err, "reading shared folder "+echo.Quote(name))
	}
	if err := d.exportShare(ctx, name); err != nil {
		return nil, err
	}
	return &csi.Volume{VolumeId: name, CapacityBytes: sh.QuotaMB * sizeUnit, VolumeContext: d.shareContext(sh)}, nil
}

// makeShare makes the share: empty, or a clone of a share or of one of
// its snapshots, with the quota asked for.
func (d *Driver) makeShare(ctx context.Context, req *csi.CreateVolumeRequest, name string, size int64) (*dsm.Share, error) {
	desc := shareMarker + d.s.driver
	src := req.GetVolumeContentSource()
	var err error
	switch {
	case src.GetSnapshot() != nil:
		sid := src.GetSnapshot().GetSnapshotId()
		from, snap, ok := parseShareSnapID(sid)
		if !ok || !d.ownShare(from) {
			return nil, status.Errorf(codes.NotFound, "snapshot %s does not exist (not a %s snapshot id)", echo.Quote(sid), d.s.driver)
		}
		snaps, lerr := d.c.ListShareSnapshots(ctx, from)
		if dsm.Is(lerr, 402) {
			return nil, status.Errorf(codes.NotFound, "snapshot %s does not exist: its shared folder is gone", echo.Quote(sid))
		}
		if lerr != nil {
			return nil, d.dsmErr(lerr, "listing the snapshots of shared folder "+echo.Quote(from))
		}
		found := false
		for _, s := range snaps {
			found = found || s.Time == snap
		}
		if !found {
			return nil, status.Errorf(codes.NotFound, "snapshot %s does not exist", echo.Quote(sid))
		}
		err = d.c.CloneShare(ctx, name, from, snap, d.s.location, desc, mb(size))
	case src.GetVolume() != nil:
		from, ferr := d.shareOf(ctx, src.GetVolume().GetVolumeId())
		if ferr != nil {
			return nil, ferr
		}
		err = d.c.CloneShare(ctx, name, from.Name, "", d.s.location, desc, mb(size))
	default:
		err = d.c.CreateShare(ctx, name, d.s.location, desc, mb(size))
	}
	if err != nil && !dsm.Is(err, 3301) { // 3301: made by an earlier call
		return nil, d.dsmErr(err, "creating shared folder "+echo.Quote(name)+" on synology.volume "+echo.Quote(d.s.location))
	}
	sh, err := d.c.GetShare(ctx, name)
	if err != nil {
		return nil, d.dsmErr(err, "reading shared folder "+echo.Quote(name))
	}
	if sh.QuotaMB != mb(size) {
		// A clone keeps its source's quota on some DSM models.
		if err := d.c.SetShareQuota(ctx, name, sh.VolPath, mb(size)); err != nil {
			return nil, d.dsmErr(err, "setting the quota of shared folder "+echo.Quote(name))
		}
		sh.QuotaMB = mb(size)
	}
	return sh, nil
}

// exportShare gives the configured clients access: NFS rules, or SMB
// read/write permissions for smb.shareUsers.
func (d *Driver) exportShare(ctx context.Context, name string) error {
	if d.s.driver == DriverNFS {
		var rules []dsm.NFSRule
		for _, c := range d.s.clients {
			rules = append(rules, dsm.NFSRule{Client: c, Privilege: "rw", RootSquash: d.s.rootSquash, Async: false, Crossmnt: true, Insecure: true})
		}
		if err := d.c.SaveNFSRules(ctx, name, rules); err != nil {
			return d.dsmErr(err, "saving the NFS rules of shared folder "+echo.Quote(name)+" (nfs.shareAllowedHosts, nfs.shareAllowedNetworks)")
		}
		return nil
	}
	if len(d.s.smbUsers) > 0 {
		if err := d.c.SetSharePermissions(ctx, name, d.s.smbUsers); err != nil {
			return d.dsmErr(err, "giving smb.shareUsers access to shared folder "+echo.Quote(name))
		}
	}
	return nil
}

func (d *Driver) deleteShare(ctx context.Context, id string) error {
	if !d.ownShare(id) {
		return nil // no share of this config can have that name
	}
	if err := d.c.DeleteShare(ctx, id); err != nil && !dsm.Is(err, 402) {
		return d.dsmErr(err, "deleting shared folder "+echo.Quote(id))
	}
	return nil
}

func (d *Driver) expandShare(ctx context.Context, id string, size int64) (*csi.ControllerExpandVolumeResponse, error) {
	sh, err := d.shareOf(ctx, id)
	if err != nil {
		return nil, err
	}
	if sh.QuotaMB < mb(size) {
		if err := d.c.SetShareQuota(ctx, sh.Name, sh.VolPath, mb(size)); err != nil {
			return nil, d.dsmErr(err, "growing the quota of shared folder "+echo.Quote(sh.Name))
		}
		sh.QuotaMB = mb(size)
	}
	return &csi.ControllerExpandVolumeResponse{CapacityBytes: sh.QuotaMB * sizeUnit}, nil
}

func (d *Driver) listShares(ctx context.Context) ([]*csi.ListVolumesResponse_Entry, error) {
	shares, err := d.c.ListShares(ctx)
	if err != nil {
		return nil, d.dsmErr(err, "listing shared folders")
	}
	var out []*csi.ListVolumesResponse_Entry
	for i := range shares {
		sh := &shares[i]
		if !d.ownShare(sh.Name) || sh.Desc != shareMarker+d.s.driver {
			continue
		}
		out = append(out, &csi.ListVolumesResponse_Entry{Volume: &csi.Volume{VolumeId: sh.Name, CapacityBytes: sh.QuotaMB * sizeUnit, VolumeContext: d.shareContext(sh)}})
	}
	return out, nil
}

// Share snapshot ids are /share/<share>/<snapshot name (its GMT time)>.
func shareSnapID(share, snap string) string { return "/share/" + share + "/" + snap }

func parseShareSnapID(id string) (share, snap string, ok bool) {
	p := strings.Split(id, "/")
	if len(p) != 4 || p[0] != "" || p[1] != "share" || p[2] == "" || p[3] == "" {
		return "", "", false
	}
	return p[2], p[3], true
}

// snapTime reads DSM's snapshot name "GMT+08-2022.01.14-19.18.29".
func snapTime(name string) time.Time {
	if len(name) < 7 {
		return time.Time{}
	}
	t, err := time.Parse("2006.01.02-15.04.05", name[7:])
	if err != nil {
		return time.Time{}
	}
	if off, err := time.Parse("-07", name[3:6]); err == nil {
		_, secs := off.Zone()
		t = t.Add(-time.Duration(secs) * time.Second)
	}
	return t
}

func (d *Driver) snapshotShare(ctx context.Context, req *csi.CreateSnapshotRequest) (*csi.Snapshot, error) {
	sh, err := d.shareOf(ctx, req.GetSourceVolumeId())
	if err != nil {
		return nil, err
	}
	all, err := d.shareSnapEntries(ctx, "", "")
	if err != nil {
		return nil, err
	}
	for _, e := range all {
		if e.desc != req.GetName() {
			continue
		}
		if e.GetSnapshot().GetSourceVolumeId() != sh.Name {
			return nil, status.Errorf(codes.AlreadyExists, "snapshot name %s is already used by a snapshot of volume %s", echo.Quote(req.GetName()), echo.Quote(e.GetSnapshot().GetSourceVolumeId()))
		}
		return e.GetSnapshot(), nil
	}
	t, err := d.c.SnapshotShare(ctx, sh.Name, req.GetName())
	if err != nil {
		return nil, d.dsmErr(err, "snapshotting shared folder "+echo.Quote(sh.Name))
	}
	return &csi.Snapshot{SnapshotId: shareSnapID(sh.Name, t), SourceVolumeId: sh.Name, SizeBytes: sh.QuotaMB * sizeUnit,
		CreationTime: timestamppb.New(snapTime(t)), ReadyToUse: true}, nil
}

func (d *Driver) deleteShareSnapshot(ctx context.Context, id string) error {
	share, snap, ok := parseShareSnapID(id)
	if !ok || !d.ownShare(share) {
		return nil
	}
	snaps, err := d.c.ListShareSnapshots(ctx, share)
	if dsm.Is(err, 402) {
		return nil
	}
	if err != nil {
		return d.dsmErr(err, "listing the snapshots of shared folder "+echo.Quote(share))
	}
	for _, s := range snaps {
		if s.Time == snap {
			if err := d.c.DeleteShareSnapshot(ctx, share, snap); err != nil {
				return d.dsmErr(err, "deleting snapshot "+echo.Quote(id))
			}
		}
	}
	return nil
}

type shareSnapEntry struct {
	*csi.ListSnapshotsResponse_Entry
	desc string
}

func (d *Driver) shareSnapEntries(ctx context.Context, snapID, sourceID string) ([]shareSnapEntry, error) {
	wantShare, wantSnap := sourceID, ""
	if snapID != "" {
		var ok bool
		if wantShare, wantSnap, ok = parseShareSnapID(snapID); !ok {
			return nil, nil
		}
		if sourceID != "" && sourceID != wantShare {
			return nil, nil
		}
	}
	shares, err := d.c.ListShares(ctx)
	if err != nil {
		return nil, d.dsmErr(err, "listing shared folders")
	}
	var out []shareSnapEntry
	for _, sh := range shares {
		if !d.ownShare(sh.Name) || sh.Desc != shareMarker+d.s.driver || wantShare != "" && sh.Name != wantShare {
			continue
		}
		snaps, err := d.c.ListShareSnapshots(ctx, sh.Name)
		if dsm.Is(err, 402) {
			continue
		}
		if err != nil {
			return nil, d.dsmErr(err, "listing the snapshots of shared folder "+echo.Quote(sh.Name))
		}
		for _, s := range snaps {
			if wantSnap != "" && s.Time != wantSnap {
				continue
			}
			out = append(out, shareSnapEntry{&csi.ListSnapshotsResponse_Entry{Snapshot: &csi.Snapshot{SnapshotId: shareSnapID(sh.Name, s.Time),
				SourceVolumeId: sh.Name, SizeBytes: sh.QuotaMB * sizeUnit, CreationTime: timestamppb.New(snapTime(s.Time)), ReadyToUse: true}}, s.Desc})
		}
	}
	return out, nil
}

func (d *Driver) listShareSnapshots(ctx context.Context, snapID, sourceID string) ([]*csi.ListSnapshotsResponse_Entry, error) {
	es, err := d.shareSnapEntries(ctx, snapID, sourceID)
	out := make([]*csi.ListSnapshotsResponse_Entry, 0, len(es))
	for _, e := range es {
		out = append(out, e.ListSnapshotsResponse_Entry)
	}
	return out, err
}
