package engine

import (
	"context"
	"sort"
	"strings"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/driver/echo"
	"github.com/switchyard-csi/switchyard/driver/zfs"
)

func unix(sec int64) time.Time { return time.Unix(sec, 0) }

// Page tokens are "after:<id>": the listing is sorted by id and a page
// starts after the last id of the previous one, so deletions and additions
// between pages never make a page skip or repeat an entry. Anything else
// is ABORTED, as CSI asks for a token the plugin did not issue.
const tokenPrefix = "after:"

func parseToken(tok string) (string, error) {
	if tok == "" {
		return "", nil
	}
	if !strings.HasPrefix(tok, tokenPrefix) || len(tok) == len(tokenPrefix) {
		return "", status.Errorf(codes.Aborted, "starting_token %s was not issued by this driver", echo.Quote(tok))
	}
	return tok[len(tokenPrefix):], nil
}

// page cuts a sorted list of n entries (keyed by key(i)) after `after`.
func page(n int, key func(int) string, after string, maxEntries int32) (from, to int, next string) {
	from = sort.Search(n, func(i int) bool { return key(i) > after })
	to = n
	if maxEntries > 0 && from+int(maxEntries) < n {
		to = from + int(maxEntries)
		next = tokenPrefix + key(to-1)
	}
	return from, to, next
}

// ListVolumes lists the provisioned volumes under datasetParentName.
func (e *Engine) ListVolumes(ctx context.Context, req *csi.ListVolumesRequest) (*csi.ListVolumesResponse, error) {
	if req.GetMaxEntries() < 0 {
		return nil, status.Error(codes.InvalidArgument, "max_entries must not be negative")
	}
	after, err := parseToken(req.GetStartingToken())
	if err != nil {
		return nil, err
	}
	rows, err := e.zfs.List(ctx, e.cfg.parent, zfs.ListOptions{Depth: 1, Types: []string{e.cfg.kind.String()}, Props: e.volumeProps()})
	if zfs.IsNotExist(err) {
		return &csi.ListVolumesResponse{}, nil
	}
	if err != nil {
		return nil, e.zfsErr(err, "listing "+e.cfg.parent)
	}
	var vols []*csi.Volume
	for _, r := range rows {
		id, ok := strings.CutPrefix(r.Name, e.cfg.parent+"/")
		if !ok || strings.Contains(id, "/") {
			continue
		}
		props := zfs.Properties{}
		for k, v := range r.Props {
			props[k] = zfs.Property{Value: v}
		}
		if props[propSuccess].Value != "true" {
			continue // half-made, or not ours
		}
		if v, ok := e.volumeFromProps(id, props); ok {
			vols = append(vols, v)
		}
	}
	sort.Slice(vols, func(i, j int) bool { return vols[i].VolumeId < vols[j].VolumeId })
	from, to, next := page(len(vols), func(i int) string { return vols[i].VolumeId }, after, req.GetMaxEntries())
	resp := &csi.ListVolumesResponse{NextToken: next}
	for _, v := range vols[from:to] {
		resp.Entries = append(resp.Entries, &csi.ListVolumesResponse_Entry{Volume: v})
	}
	return resp, nil
}

// ListSnapshots lists snapshots (attached and detached), optionally of one
// source volume or one snapshot id.
func (e *Engine) ListSnapshots(ctx context.Context, req *csi.ListSnapshotsRequest) (*csi.ListSnapshotsResponse, error) {
	if req.GetMaxEntries() < 0 {
		return nil, status.Error(codes.InvalidArgument, "max_entries must not be negative")
	}
	after, err := parseToken(req.GetStartingToken())
	if err != nil {
		return nil, err
	}
	snaps, err := e.listSnapshots(ctx, req.GetSnapshotId(), req.GetSourceVolumeId())
	if err != nil {
		return nil, err
	}
	sort.Slice(snaps, func(i, j int) bool { return snaps[i].SnapshotId < snaps[j].SnapshotId })
	from, to, next := page(len(snaps), func(i int) string { return snaps[i].SnapshotId }, after, req.GetMaxEntries())
	resp := &csi.ListSnapshotsResponse{NextToken: next}
	for _, s := range snaps[from:to] {
		resp.Entries = append(resp.Entries, &csi.ListSnapshotsResponse_Entry{Snapshot: s})
	}
	return resp, nil
}

// GetSnapshot returns one snapshot.
func (e *Engine) GetSnapshot(ctx context.Context, req *csi.GetSnapshotRequest) (*csi.GetSnapshotResponse, error) {
	if req.GetSnapshotId() == "" {
		return nil, status.Error(codes.InvalidArgument, "snapshot_id is required")
	}
	snaps, err := e.listSnapshots(ctx, req.GetSnapshotId(), "")
	if err != nil {
		return nil, err
	}
	if len(snaps) == 0 {
		return nil, status.Errorf(codes.NotFound, "snapshot %s does not exist", echo.Quote(req.GetSnapshotId()))
	}
	return &csi.GetSnapshotResponse{Snapshot: snaps[0]}, nil
}

// listSnapshots reads managed snapshots. With snapshotID only that one is
// read; with sourceID only that volume's.
func (e *Engine) listSnapshots(ctx context.Context, snapshotID, sourceID string) ([]*csi.Snapshot, error) {
	type query struct {
		root     string
		opts     zfs.ListOptions
		detached bool
	}
	var qs []query
	switch {
	case snapshotID != "":
		ref, ok := e.parseSnapshotID(snapshotID)
		if !ok {
			return nil, nil
		}
		t := "snapshot"
		if ref.detached {
			t = e.cfg.kind.String()
		}
		qs = append(qs, query{root: ref.dataset, opts: zfs.ListOptions{Types: []string{t}}, detached: ref.detached})
	case sourceID != "":
		if !volumeIDOK(sourceID) {
			return nil, nil
		}
		qs = append(qs, query{root: e.cfg.datasetName(sourceID), opts: zfs.ListOptions{Depth: 1, Types: []string{"snapshot"}}})
		if e.cfg.snapshot != "" {
			qs = append(qs, query{root: e.cfg.snapshot + "/" + sourceID, opts: zfs.ListOptions{Depth: 1, Types: []string{e.cfg.kind.String()}}, detached: true})
		}
	default:
		qs = append(qs, query{root: e.cfg.parent, opts: zfs.ListOptions{Depth: 2, Types: []string{"snapshot"}}})
		if e.cfg.snapshot != "" {
			qs = append(qs, query{root: e.cfg.snapshot, opts: zfs.ListOptions{Depth: 2, Types: []string{e.cfg.kind.String()}}, detached: true})
		}
	}
	var out []*csi.Snapshot
	for _, q := range qs {
		q.opts.Props = snapshotProps
		rows, err := e.zfs.List(ctx, q.root, q.opts)
		if zfs.IsNotExist(err) {
			continue
		}
		if err != nil {
			return nil, e.zfsErr(err, "listing snapshots under "+q.root)
		}
		base := e.cfg.parent + "/"
		if q.detached {
			base = e.cfg.snapshot + "/"
		}
		for _, r := range rows {
			if r.Props[propManaged] != "true" || r.Props[propSnapshotName] == "" || r.Props[propSnapshotName] == "-" {
				continue
			}
			id, ok := strings.CutPrefix(r.Name, base)
			if !ok {
				continue
			}
			ref, ok := e.parseSnapshotID(id)
			if !ok || ref.detached != q.detached {
				continue
			}
			props := zfs.Properties{}
			for k, v := range r.Props {
				props[k] = zfs.Property{Value: v}
			}
			out = append(out, e.snapshotFromProps(id, ref.volumeID, props))
		}
	}
	return out, nil
}
