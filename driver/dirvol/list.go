package dirvol

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/driver/echo"
)

// tokenPrefix starts every page token; the rest is the directory name the
// next page starts at. Names, unlike indexes, stay valid when entries
// before them are deleted between pages.
const tokenPrefix = "from:"

// parseToken returns the name a page starts at ("" for the first page);
// a token this driver did not hand out is ABORTED, as CSI asks.
func parseToken(call, token string) (string, error) {
	if token == "" {
		return "", nil
	}
	name, ok := strings.CutPrefix(token, tokenPrefix)
	if !ok || !safeComponent(name) {
		return "", status.Errorf(codes.Aborted, "%s: starting_token %s was not returned by this driver; list again from the start", call, echo.Quote(token))
	}
	return name, nil
}

// paginate returns the page of sorted names starting at start, at most limit
// long (0: all), and the token of the next page ("" at the end).
func paginate(names []string, start string, limit int32) (page []string, next string) {
	i := sort.SearchStrings(names, start)
	end := len(names)
	if limit > 0 && end-i > int(limit) {
		end = i + int(limit)
		next = tokenPrefix + names[end]
	}
	return names[i:end], next
}

// listDirs returns the sorted names of the volume or snapshot directories
// in parent, skipping temporary entries and anything that is not a
// directory; a missing parent is an empty list. The slice may be the
// listing cache's: callers must not change it.
func (d *Controller) listDirs(parent string) ([]string, error) {
	if d.lists != nil {
		return d.lists.list(parent, func() ([]string, error) { return d.readDirs(parent) })
	}
	return d.readDirs(parent)
}

// readDirs is listDirs without the cache.
func (d *Controller) readDirs(parent string) ([]string, error) {
	entries, err := os.ReadDir(parent) // sorted by name
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, d.fsError("listing "+parent, err)
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		if e.IsDir() && !isTemporary(e.Name()) && safeComponent(e.Name()) {
			names = append(names, e.Name())
		}
	}
	return names, nil
}

func checkMaxEntries(call string, limit int32) error {
	if limit < 0 {
		return status.Errorf(codes.InvalidArgument, "%s: max_entries must not be negative, got %d", call, limit)
	}
	return nil
}

// ListVolumes lists volume directories in name order.
func (d *Controller) ListVolumes(ctx context.Context, req *csi.ListVolumesRequest) (*csi.ListVolumesResponse, error) {
	if err := checkMaxEntries("ListVolumes", req.GetMaxEntries()); err != nil {
		return nil, err
	}
	start, err := parseToken("ListVolumes", req.GetStartingToken())
	if err != nil {
		return nil, err
	}
	if err := d.be.Ready("ListVolumes"); err != nil {
		return nil, err
	}
	names, err := d.listDirs(filepath.Join(d.store.base, volumesDir))
	if err != nil {
		return nil, err
	}
	page, next := paginate(names, start, req.GetMaxEntries())
	resp := &csi.ListVolumesResponse{NextToken: next, Entries: make([]*csi.ListVolumesResponse_Entry, 0, len(page))}
	for _, id := range page {
		m, err := d.store.readVolumeMeta(id)
		if err != nil { // one unreadable file must not hide every volume
			d.log.Warn("ListVolumes: listing a volume without its metadata", "volume_id", id, "error", err)
			m = nil
		}
		resp.Entries = append(resp.Entries, &csi.ListVolumesResponse_Entry{Volume: d.volume(id, m)})
	}
	return resp, nil
}

// ListSnapshots lists snapshots in directory name order, optionally only
// the one named by snapshot_id or those of source_volume_id (an unknown id
// is an empty list, not an error).
func (d *Controller) ListSnapshots(ctx context.Context, req *csi.ListSnapshotsRequest) (*csi.ListSnapshotsResponse, error) {
	if err := checkMaxEntries("ListSnapshots", req.GetMaxEntries()); err != nil {
		return nil, err
	}
	start, err := parseToken("ListSnapshots", req.GetStartingToken())
	if err != nil {
		return nil, err
	}
	srcFilter := req.GetSourceVolumeId()
	if err := d.be.Ready("ListSnapshots"); err != nil {
		return nil, err
	}
	if id := req.GetSnapshotId(); id != "" {
		snap, err := d.snapshotByID(id)
		if err != nil {
			return nil, err
		}
		if snap == nil || srcFilter != "" && snap.GetSourceVolumeId() != srcFilter {
			return &csi.ListSnapshotsResponse{}, nil
		}
		return &csi.ListSnapshotsResponse{Entries: []*csi.ListSnapshotsResponse_Entry{{Snapshot: snap}}}, nil
	}

	names, err := d.listDirs(filepath.Join(d.store.base, snapshotsDir))
	if err != nil {
		return nil, err
	}
	// With a source filter every snapshot's metadata is read to filter
	// before paginating; without one only the page's.
	infos := map[string]*csi.Snapshot{}
	if srcFilter != "" {
		kept := make([]string, 0, len(names)) // names may be shared
		for _, dir := range names {
			snap := d.listedSnapshot(dir)
			if snap != nil && snap.GetSourceVolumeId() == srcFilter {
				kept = append(kept, dir)
				infos[dir] = snap
			}
		}
		names = kept
	}
	page, next := paginate(names, start, req.GetMaxEntries())
	resp := &csi.ListSnapshotsResponse{NextToken: next, Entries: make([]*csi.ListSnapshotsResponse_Entry, 0, len(page))}
	for _, dir := range page {
		snap := infos[dir]
		if snap == nil {
			snap = d.listedSnapshot(dir)
		}
		if snap != nil { // nil: removed since the directory was listed
			resp.Entries = append(resp.Entries, &csi.ListSnapshotsResponse_Entry{Snapshot: snap})
		}
	}
	return resp, nil
}

// listedSnapshot is snapshotInfo for listings: a snapshot whose metadata
// cannot be read is left out with a warning rather than failing the list.
func (d *Controller) listedSnapshot(dir string) *csi.Snapshot {
	snap, err := d.snapshotInfo(dir)
	if err != nil {
		d.log.Warn("ListSnapshots: leaving out a snapshot", "dir", dir, "error", err)
		return nil
	}
	return snap
}
