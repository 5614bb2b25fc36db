package proxy

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/switchyard-csi/switchyard/driver/backend"
)

// candidate is a member that serves the request's topology.
type candidate struct {
	l    *Lease
	rank int   // index of the first preferred term it serves; len(preferred) when none
	free int64 // GetCapacity's answer (Unlimited when the backend cannot tell)
}

// createInSet makes a volume on one member of a connection set:
//
//  1. members serving the request's topology (perDriver.topology; a
//     member without it serves every segment, as a single connection does);
//  2. idempotency: each of those is asked whether it already holds the
//     volume of this name; if one does, the call completes there;
//  3. members with room (GetCapacity ≥ the size asked for);
//  4. the policy: the member serving the earliest preferred term, then the
//     most free space, then the order of the set.
//
// The whole sequence holds a per-name lock, so concurrent creates of one
// name in this process make one volume; a retry after a restart finds it
// in step 2.
func (p *Controller) createInSet(ctx context.Context, req *csipb.CreateVolumeRequest, spec setSpec) (*csipb.CreateVolumeResponse, error) {
	unlock, err := p.setLocks.Lock(ctx, "create:"+req.GetName())
	if err != nil {
		return nil, status.Errorf(codes.Aborted, "CreateVolume: another create of %s is still in progress", req.GetName())
	}
	defer unlock()
	set, err := p.resolveSet(ctx, "CreateVolume", spec)
	if err != nil {
		return nil, err
	}
	defer set.release()

	serving, refusals, err := p.serving(set.leases, req)
	if err != nil {
		return nil, err
	}
	if len(serving) == 0 {
		// RESOURCE_EXHAUSTED, not the single connection's INVALID_ARGUMENT:
		// with WaitForFirstConsumer the external-provisioner then lets the
		// scheduler pick a node in another zone.
		return nil, status.Errorf(codes.ResourceExhausted, "CreateVolume: no member of the connection set %s=%q serves the requested topology: %s%s",
			spec.key, spec.raw, strings.Join(refusals, "; "), describeSkipped(set.skipped))
	}
	// Each member is asked at once: with SSH backends every answer is a
	// round trip, and a set of 20 should cost one, not 20.
	type lookup struct {
		found bool
		err   error
	}
	looks := eachMember(serving, func(c candidate) lookup {
		found, err := p.holds(ctx, c.l, req)
		return lookup{found, err}
	})
	for i, c := range serving {
		if err := looks[i].err; err != nil {
			// Unknown is not absent: making the volume elsewhere could
			// leave two. The sidecar retries.
			return nil, status.Errorf(codes.Unavailable, "CreateVolume: connection %s: cannot tell whether it already holds volume %s: %s", c.l.Name, req.GetName(), status.Convert(err).Message())
		}
	}
	for i, c := range serving {
		if looks[i].found {
			p.log.Info("connection set: the volume exists already; completing it there", "name", req.GetName(), "connection", c.l.Name)
			return p.createOn(ctx, c.l, req)
		}
	}
	if src := req.GetVolumeContentSource(); src != nil {
		// A clone on its source's connection is a cheap backend clone:
		// prefer it. Otherwise the policy picks the target and the data
		// is copied across (createAcross).
		srcConn := sourceConnection(p, src)
		if i := slices.IndexFunc(serving, func(c candidate) bool { return c.l.Name == srcConn }); i >= 0 {
			return p.createOn(ctx, serving[i].l, req)
		}
	}
	need := requestedBytes(req.GetCapacityRange())
	var roomy []candidate
	var full []string
	type capacity struct {
		free int64
		err  error
	}
	caps := eachMember(serving, func(c candidate) capacity {
		free, err := p.freeBytes(ctx, c.l, req.GetParameters(), req.GetVolumeCapabilities(), nil)
		return capacity{free, err}
	})
	for i, c := range serving {
		free, err := caps[i].free, caps[i].err
		if err != nil {
			p.log.Warn("connection set member cannot report capacity; passing it over", "connection", c.l.Name, "error", status.Convert(err).Message())
			full = append(full, fmt.Sprintf("%s: %s", c.l.Name, status.Convert(err).Message()))
			continue
		}
		if free < need {
			full = append(full, fmt.Sprintf("%s has %d bytes free", c.l.Name, free))
			continue
		}
		c.free = free
		roomy = append(roomy, c)
	}
	if len(roomy) == 0 {
		return nil, status.Errorf(codes.ResourceExhausted, "CreateVolume: no member of the connection set %s=%q has room for %d bytes: %s%s",
			spec.key, spec.raw, need, strings.Join(full, "; "), describeSkipped(set.skipped))
	}
	slices.SortStableFunc(roomy, func(a, b candidate) int {
		if a.rank != b.rank {
			return a.rank - b.rank
		}
		if a.free != b.free {
			if a.free > b.free {
				return -1
			}
			return 1
		}
		return orderOf(set.leases, a.l.Name) - orderOf(set.leases, b.l.Name)
	})
	chosen := roomy[0]
	p.log.Info("connection set: chose a member", "name", req.GetName(), "connection", chosen.l.Name, "free", chosen.free, "preferredRank", chosen.rank)
	return p.createOn(ctx, chosen.l, req)
}

// eachMember runs f for every candidate concurrently and returns the
// results in the candidates' order.
func eachMember[R any](cs []candidate, f func(candidate) R) []R {
	out := make([]R, len(cs))
	if len(cs) == 1 {
		out[0] = f(cs[0])
		return out
	}
	var wg sync.WaitGroup
	for i, c := range cs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i] = f(c)
		}()
	}
	wg.Wait()
	return out
}

// serving keeps the members whose topology serves the request, with the
// rank of the first preferred term each serves. A key error (no prefix)
// is the request's fault and fails the call.
func (p *Controller) serving(ls []*Lease, req *csipb.CreateVolumeRequest) ([]candidate, []string, error) {
	ar := req.GetAccessibilityRequirements()
	pref := ar.GetPreferred()
	var out []candidate
	var refusals []string
	for _, l := range ls {
		c := candidate{l: l, rank: len(pref)}
		if len(l.Topology) == 0 {
			c.rank = len(pref) // serves everything, prefers nothing
			out = append(out, c)
			continue
		}
		if _, err := checkTopology(l.Name, p.set.Topology.Prefix, l.Topology, ar); err != nil {
			if strings.Contains(err.Error(), "does not carry the prefix") {
				return nil, nil, status.Errorf(codes.InvalidArgument, "CreateVolume: %v", err)
			}
			refusals = append(refusals, err.Error())
			continue
		}
		for i, t := range pref {
			if slices.ContainsFunc(l.Topology, func(e TopologyEntry) bool { return e.satisfies(p.set.Topology.Prefix, t.GetSegments()) }) {
				c.rank = i
				break
			}
		}
		out = append(out, c)
	}
	return out, refusals, nil
}

// requestedBytes is the size a create asks for, as backends size it.
func requestedBytes(r *csipb.CapacityRange) int64 {
	switch {
	case r.GetRequiredBytes() > 0:
		return r.GetRequiredBytes()
	case r.GetLimitBytes() > 0:
		return r.GetLimitBytes()
	}
	return backend.DefaultCapacity
}

// freeBytes asks a member's backend for its capacity; Unlimited when it
// cannot tell.
func (p *Controller) freeBytes(ctx context.Context, l *Lease, params map[string]string, caps []*csipb.VolumeCapability, topo *csipb.Topology) (int64, error) {
	resp, err := l.Driver.GetCapacity(ctx, &csipb.GetCapacityRequest{Parameters: params, VolumeCapabilities: caps, AccessibleTopology: topo})
	if status.Code(err) == codes.Unimplemented {
		return Unlimited, nil
	}
	if err != nil {
		return 0, err
	}
	return resp.GetAvailableCapacity(), nil
}

// sourceConnection is the connection a content source's handle names ("" when it names none).
func sourceConnection(p *Controller, src *csipb.VolumeContentSource) string {
	if s := src.GetSnapshot(); s != nil {
		c, _, _ := p.snapshot(s.GetSnapshotId())
		return c
	}
	c, _, _ := p.volume(src.GetVolume().GetVolumeId())
	return c
}

// createOn makes (or completes) the volume on one connection: the
// single-connection path, shared by sets.
func (p *Controller) createOn(ctx context.Context, l *Lease, req *csipb.CreateVolumeRequest) (*csipb.CreateVolumeResponse, error) {
	// A VolumeAttributesClass sent to a connection that cannot modify
	// volumes is refused before anything is made (on a set, per member).
	if err := CheckMutableParameters(ctx, l, req); err != nil {
		return nil, err
	}
	fwd := proto.Clone(req).(*csipb.CreateVolumeRequest)
	srcConn := ""
	if src := req.GetVolumeContentSource(); src != nil {
		var err error
		if srcConn, err = p.realSource(fwd.GetVolumeContentSource()); err != nil {
			return nil, err
		}
	}
	var topo []*csipb.Topology
	var err error
	if len(l.Topology) > 0 {
		if topo, err = checkTopology(l.Name, p.set.Topology.Prefix, l.Topology, req.GetAccessibilityRequirements()); err != nil {
			return nil, status.Errorf(codes.InvalidArgument, "CreateVolume: %v", err)
		}
	}
	var resp *csipb.CreateVolumeResponse
	if srcConn != "" && srcConn != l.Name {
		resp, err = p.createAcross(ctx, l, srcConn, fwd)
		if err != nil {
			return nil, err
		}
		resp.Volume.ContentSource = proto.Clone(req.GetVolumeContentSource()).(*csipb.VolumeContentSource)
	} else if resp, err = l.Driver.CreateVolume(ctx, fwd); err != nil {
		return nil, backendErr(l, "CreateVolume", err)
	}
	v := resp.GetVolume()
	handle := Decorate(VolumePrefix, l.Name, v.GetVolumeId())
	if len(handle) > MaxHandleLen {
		return nil, p.undoTooLong(ctx, l, v.GetVolumeId(), handle)
	}
	v.VolumeId = handle
	if srcConn == "" || srcConn == l.Name {
		decorateSource(l.Name, v.GetContentSource())
	}
	if topo != nil {
		v.AccessibleTopology = topo
	}
	return resp, nil
}

// addCapacity sums capacities without overflowing: Unlimited stays Unlimited.
func addCapacity(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}
