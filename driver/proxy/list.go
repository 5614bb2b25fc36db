package proxy

import (
	"context"
	"encoding/base64"
	"slices"
	"strings"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/driver/echo"
)

// A page token names the connection to continue with and that backend's
// own token. It is opaque to the CO.
func encodeToken(conn, backendToken string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(conn + "\n" + backendToken))
}

func decodeToken(tok string) (conn, backendToken string, ok bool) {
	raw, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil {
		return "", "", false
	}
	conn, backendToken, ok = strings.Cut(string(raw), "\n")
	return conn, backendToken, ok && CheckConnectionName(conn) == nil
}

// page is one backend's answer to a list call.
type page[E any] struct {
	entries []E
	next    string
}

// listAcross lists over every connection in name order, continuing where a
// token says. A list is complete or an error: a connection that cannot be
// used (a broken file, a driver that cannot start) fails the call naming
// it, as an unreachable backend does, because a CO that reconciles against
// a partial list would take the missing volumes for gone. Only a connection
// whose driver does not list at all is passed over.
func listAcross[E any](ctx context.Context, p *Controller, method string, start string, maxEntries int32, list func(l *Lease, token string, maxEntries int32) (page[E], error)) ([]E, string, error) {
	names, err := p.conns.Names()
	if err != nil {
		return nil, "", status.Errorf(codes.FailedPrecondition, "%s: reading the connections folder: %v", method, err)
	}
	i, token := 0, ""
	if start != "" {
		conn, bt, ok := decodeToken(start)
		if !ok {
			return nil, "", status.Errorf(codes.Aborted, "%s: starting_token %s is not a token this driver issued", method, echo.Quote(start))
		}
		if i, ok = slices.BinarySearch(names, conn); !ok {
			return nil, "", status.Errorf(codes.Aborted, "%s: starting_token names connection %s, which no longer exists", method, conn)
		}
		token = bt
	}
	var out []E
	for ; i < len(names); i, token = i+1, "" {
		remaining := int32(0)
		if maxEntries > 0 {
			remaining = maxEntries - int32(len(out))
			if remaining == 0 {
				return out, encodeToken(names[i], ""), nil
			}
		}
		l, err := p.conns.Acquire(ctx, names[i], false)
		if err != nil {
			st := status.Convert(err)
			return nil, "", status.Errorf(st.Code(), "%s: %s", method, st.Message())
		}
		pg, err := list(l, token, remaining)
		l.Release()
		switch {
		case status.Code(err) == codes.Unimplemented:
			continue
		case status.Code(err) == codes.Aborted && token != "":
			return nil, "", status.Errorf(codes.Aborted, "%s: connection %s: %s", method, names[i], status.Convert(err).Message())
		case err != nil:
			return nil, "", backendErr(l, method, err)
		}
		out = append(out, pg.entries...)
		if pg.next != "" {
			return out, encodeToken(names[i], pg.next), nil
		}
	}
	return out, "", nil
}

func (p *Controller) ListVolumes(ctx context.Context, req *csipb.ListVolumesRequest) (*csipb.ListVolumesResponse, error) {
	if req.GetMaxEntries() < 0 {
		return nil, status.Error(codes.InvalidArgument, "ListVolumes: max_entries must not be negative")
	}
	entries, next, err := listAcross(ctx, p, "ListVolumes", req.GetStartingToken(), req.GetMaxEntries(),
		func(l *Lease, token string, maxEntries int32) (page[*csipb.ListVolumesResponse_Entry], error) {
			resp, err := l.Driver.ListVolumes(ctx, &csipb.ListVolumesRequest{MaxEntries: maxEntries, StartingToken: token})
			if err != nil {
				return page[*csipb.ListVolumesResponse_Entry]{}, err
			}
			entries := resp.GetEntries()[:0]
			for _, e := range resp.GetEntries() {
				e.Volume.VolumeId = Decorate(VolumePrefix, l.Name, e.GetVolume().GetVolumeId())
				decorateSource(l.Name, e.GetVolume().GetContentSource())
				if p.fits("ListVolumes", e.GetVolume().GetVolumeId()) {
					entries = append(entries, e)
				}
			}
			return page[*csipb.ListVolumesResponse_Entry]{entries, resp.GetNextToken()}, nil
		})
	if err != nil {
		return nil, err
	}
	return &csipb.ListVolumesResponse{Entries: entries, NextToken: next}, nil
}

func (p *Controller) ListSnapshots(ctx context.Context, req *csipb.ListSnapshotsRequest) (*csipb.ListSnapshotsResponse, error) {
	if req.GetMaxEntries() < 0 {
		return nil, status.Error(codes.InvalidArgument, "ListSnapshots: max_entries must not be negative")
	}
	// A filter names one object, so one connection answers.
	if req.GetSnapshotId() != "" || req.GetSourceVolumeId() != "" {
		return p.listSnapshotsFiltered(ctx, req)
	}
	entries, next, err := listAcross(ctx, p, "ListSnapshots", req.GetStartingToken(), req.GetMaxEntries(),
		func(l *Lease, token string, maxEntries int32) (page[*csipb.ListSnapshotsResponse_Entry], error) {
			resp, err := l.Driver.ListSnapshots(ctx, &csipb.ListSnapshotsRequest{MaxEntries: maxEntries, StartingToken: token, Secrets: req.GetSecrets()})
			if err != nil {
				return page[*csipb.ListSnapshotsResponse_Entry]{}, err
			}
			return page[*csipb.ListSnapshotsResponse_Entry]{p.decorateSnapshots(l.Name, resp.GetEntries()), resp.GetNextToken()}, nil
		})
	if err != nil {
		return nil, err
	}
	return &csipb.ListSnapshotsResponse{Entries: entries, NextToken: next}, nil
}

func (p *Controller) listSnapshotsFiltered(ctx context.Context, req *csipb.ListSnapshotsRequest) (*csipb.ListSnapshotsResponse, error) {
	fwd := &csipb.ListSnapshotsRequest{MaxEntries: req.GetMaxEntries(), StartingToken: req.GetStartingToken(), Secrets: req.GetSecrets()}
	conn := ""
	if h := req.GetSnapshotId(); h != "" {
		c, id, ok := p.snapshot(h)
		if !ok {
			return &csipb.ListSnapshotsResponse{}, nil // names no snapshot: nothing matches
		}
		conn, fwd.SnapshotId = c, id
	}
	if h := req.GetSourceVolumeId(); h != "" {
		c, id, ok := p.volume(h)
		if !ok || (conn != "" && c != conn) {
			return &csipb.ListSnapshotsResponse{}, nil
		}
		conn, fwd.SourceVolumeId = c, id
	}
	l, err := p.conns.Acquire(ctx, conn, false)
	if err != nil {
		return nil, err
	}
	defer l.Release()
	resp, err := l.Driver.ListSnapshots(ctx, fwd)
	if err != nil {
		return nil, backendErr(l, "ListSnapshots", err)
	}
	resp.Entries = p.decorateSnapshots(l.Name, resp.GetEntries())
	return resp, nil
}

func (p *Controller) decorateSnapshots(conn string, es []*csipb.ListSnapshotsResponse_Entry) []*csipb.ListSnapshotsResponse_Entry {
	out := es[:0]
	for _, e := range es {
		decorateSnapshot(conn, e.GetSnapshot())
		if p.fits("ListSnapshots", e.GetSnapshot().GetSnapshotId()) {
			out = append(out, e)
		}
	}
	return out
}

// fits reports whether a listed handle is within CSI's limit. An object
// made before the proxy (democratic-csi's long snapshot ids) can exceed it
// once decorated; it is left out of the list, with a warning, rather than
// sent in a shape CSI forbids.
func (p *Controller) fits(method, handle string) bool {
	if len(handle) <= MaxHandleLen {
		return true
	}
	p.log.Warn(method+": leaving out an object whose proxy handle would exceed CSI's limit", "handle", handle, "bytes", len(handle), "limit", MaxHandleLen)
	return false
}
