package proxy

import (
	"context"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// setCapacity is GetCapacity for a connection set: the sum over the
// members that serve accessible_topology (every member when it is
// absent), so Kubernetes' storage-capacity tracking sees per segment what
// the set can still place there. A member serves a segment when one of
// its perDriver.topology entries agrees with it (a member without entries
// serves every segment). Each member is asked with the segment too, so a
// node-local backend answers for its own node only.
//
// Capacity is advice to the scheduler, not a promise: a member that
// cannot answer (broken file, backend error) is left out of the sum and
// logged rather than failing the answer for the whole set.
func (p *Controller) setCapacity(ctx context.Context, req *csipb.GetCapacityRequest, spec setSpec) (*csipb.GetCapacityResponse, error) {
	set, err := p.resolveSet(ctx, "GetCapacity", spec)
	if err != nil {
		if status.Code(err) == codes.FailedPrecondition {
			return &csipb.GetCapacityResponse{AvailableCapacity: 0}, nil // nothing usable: nothing can be placed
		}
		return nil, err
	}
	defer set.release()
	seg := req.GetAccessibleTopology()
	var sum, largest int64
	for _, l := range set.leases {
		if seg != nil && len(l.Topology) > 0 && !servesSegment(l, p.set.Topology.Prefix, seg) {
			continue
		}
		free, err := p.freeBytes(ctx, l, req.GetParameters(), req.GetVolumeCapabilities(), seg)
		if err != nil {
			p.log.Warn("GetCapacity: connection set member left out of the sum", "connection", l.Name, "error", status.Convert(err).Message())
			continue
		}
		sum = addCapacity(sum, free)
		largest = max(largest, free)
	}
	// A volume lives on one member: the largest volume that fits anywhere
	// is the largest member's free space, not the sum.
	resp := &csipb.GetCapacityResponse{AvailableCapacity: sum}
	if largest > 0 && largest < sum {
		resp.MaximumVolumeSize = wrapperspb.Int64(largest)
	}
	return resp, nil
}

// servesSegment reports whether one of l's topology entries agrees with seg.
func servesSegment(l *Lease, prefix string, seg *csipb.Topology) bool {
	for _, e := range l.Topology {
		if e.satisfies(prefix, seg.GetSegments()) {
			return true
		}
	}
	return false
}
