package proxy

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// setMembers is a resolved connection set: the usable members (leased, in
// the set's order) and the members skipped with the reason.
type setMembers struct {
	leases  []*Lease
	skipped []string // "nas-b: <why>"
}

func (m *setMembers) release() {
	for _, l := range m.leases {
		l.Release()
	}
	m.leases = nil
}

func (m *setMembers) skip(name string, err error) {
	m.skipped = append(m.skipped, name+": "+status.Convert(err).Message())
}

// resolveSet leases the members a set names. A member with no file (a
// typo in the StorageClass) or of a type that can never be a connection
// is the user's mistake: INVALID_ARGUMENT naming it, so it cannot hide
// behind the others. A member whose file is broken or whose driver cannot
// start is skipped (logged, and named when nothing else can serve): the
// others still serve. Members of different families are refused.
func (p *Controller) resolveSet(ctx context.Context, method string, spec setSpec) (*setMembers, error) {
	out := &setMembers{}
	fail := func(err error) (*setMembers, error) {
		out.release()
		return nil, err
	}
	names := spec.members
	if spec.selector != nil {
		all, err := p.conns.Names()
		if err != nil {
			return fail(status.Errorf(codes.FailedPrecondition, "%s: reading the connections folder: %v", method, err))
		}
		names = all
	}
	for _, name := range names {
		l, err := p.conns.Acquire(ctx, name, spec.selector == nil)
		if err != nil {
			if status.Code(err) == codes.InvalidArgument {
				return fail(status.Errorf(codes.InvalidArgument, "%s: parameter %s: %s", method, spec.key, status.Convert(err).Message()))
			}
			if ctx.Err() != nil {
				return fail(status.Errorf(codes.Aborted, "%s: %v", method, ctx.Err()))
			}
			p.log.Warn("connection set member unusable; the others serve", "method", method, "connection", name, "error", status.Convert(err).Message())
			out.skip(name, err)
			continue
		}
		if spec.selector != nil && !selects(spec.selector, l.Labels) {
			l.Release()
			continue
		}
		out.leases = append(out.leases, l)
	}
	if len(out.leases) == 0 {
		if len(out.skipped) > 0 {
			return fail(status.Errorf(codes.FailedPrecondition, "%s: no member of the connection set %s=%q is usable: %s", method, spec.key, spec.raw, strings.Join(out.skipped, "; ")))
		}
		return fail(status.Errorf(codes.InvalidArgument, "%s: parameter %s %q selects no connection: no file in %s declares matching proxy.labels", method, spec.key, spec.raw, p.set.ConfigFolder))
	}
	members := make([]string, len(out.leases))
	types := make([]string, len(out.leases))
	for i, l := range out.leases {
		members[i], types[i] = l.Name, l.Type.Name
	}
	if err := checkFamilies(members, types); err != nil {
		return fail(status.Errorf(codes.InvalidArgument, "%s: parameter %s %q: %v", method, spec.key, spec.raw, err))
	}
	return out, nil
}

// orderOf is a lease's position in the set, the last tie-break.
func orderOf(ls []*Lease, name string) int {
	return slices.IndexFunc(ls, func(l *Lease) bool { return l.Name == name })
}

func describeSkipped(skipped []string) string {
	if len(skipped) == 0 {
		return ""
	}
	return fmt.Sprintf(" (skipped: %s)", strings.Join(skipped, "; "))
}
