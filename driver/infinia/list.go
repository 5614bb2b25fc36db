package infinia

import (
	"context"
	"encoding/base64"
	"sort"
	"strings"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/driver/echo"
	"github.com/switchyard-csi/switchyard/driver/infinia/api"
)

// A page token is the position of the last volume returned: account,
// subtenant, service and volume name. Listing walks all four in name
// order, so a page continues after that position even when volumes were
// added or removed in between. Anything else is ABORTED, as CSI asks for a
// token the plugin did not issue.
const tokenVersion = "i1"

func encodeToken(h handle) string {
	raw := strings.Join([]string{tokenVersion, h.account, h.subtenant, h.service, h.volume}, "\x00")
	return base64.RawURLEncoding.EncodeToString([]byte(raw))
}

func decodeToken(tok string) (handle, error) {
	raw, err := base64.RawURLEncoding.DecodeString(tok)
	parts := strings.Split(string(raw), "\x00")
	if err != nil || len(parts) != 5 || parts[0] != tokenVersion {
		return handle{}, status.Errorf(codes.Aborted, "starting_token %s was not issued by this driver", echo.Quote(tok))
	}
	return handle{account: parts[1], subtenant: parts[2], service: parts[3], volume: parts[4]}, nil
}

// ListVolumes lists the volumes of every block service of every subtenant
// of every configured account. A list is complete or an error: an account
// that cannot be listed fails the call naming it (docs/proxy.md,
// "Listing"), since a CO reconciling against a partial list would take the
// missing volumes for gone.
func (d *Driver) ListVolumes(ctx context.Context, req *csi.ListVolumesRequest) (*csi.ListVolumesResponse, error) {
	maxEntries := int(req.GetMaxEntries())
	if maxEntries < 0 {
		return nil, status.Error(codes.InvalidArgument, "max_entries must not be negative")
	}
	var pos *handle
	if tok := req.GetStartingToken(); tok != "" {
		h, err := decodeToken(tok)
		if err != nil {
			return nil, err
		}
		pos = &h
	}
	l := &lister{d: d, ctx: ctx, max: maxEntries, pos: pos}
	set := d.accounts.Load()
	for _, key := range set.keys {
		if pos != nil && key < pos.account {
			continue
		}
		if err := l.account(set.byKey[key]); err != nil {
			return nil, err
		}
		if l.full() {
			break
		}
	}
	return &csi.ListVolumesResponse{Entries: l.out, NextToken: l.next}, nil
}

// lister collects one page.
type lister struct {
	d    *Driver
	ctx  context.Context
	max  int
	pos  *handle // resume after this volume; nil from the start
	out  []*csi.ListVolumesResponse_Entry
	next string
}

func (l *lister) full() bool { return l.max > 0 && len(l.out) >= l.max }

// at reports whether the walk is still on the resume position's path at
// this level (so names before the position's are skipped).
func (l *lister) at(h handle, level int) bool {
	if l.pos == nil {
		return false
	}
	same := h.account == l.pos.account
	if level >= 1 {
		same = same && h.subtenant == l.pos.subtenant
	}
	if level >= 2 {
		same = same && h.service == l.pos.service
	}
	return same
}

func (l *lister) account(a *account) error {
	c, err := l.d.client(a, nil)
	if err != nil {
		return err
	}
	subs, err := c.ListSubtenants(l.ctx)
	if err != nil {
		return apiErr(err, a, "listing subtenants")
	}
	sort.Slice(subs, func(i, j int) bool { return subs[i].Name < subs[j].Name })
	for _, s := range subs {
		h := handle{account: a.key, subtenant: s.Name}
		if l.at(h, 0) && s.Name < l.pos.subtenant {
			continue
		}
		if err := l.subtenant(a, c, h); err != nil {
			return err
		}
		if l.full() {
			return nil
		}
	}
	return nil
}

func (l *lister) subtenant(a *account, c *api.Client, h handle) error {
	services, err := c.ListServices(l.ctx, h.subtenant)
	if err != nil {
		return apiErr(err, a, "listing the services of subtenant "+h.subtenant)
	}
	sort.Slice(services, func(i, j int) bool { return services[i].Name < services[j].Name })
	var subsystems map[string]*api.Subsystem // read once, when a volume needs it
	for _, svc := range services {
		if svc.Type != "" && svc.Type != "block" {
			continue
		}
		h.service = svc.Name
		if l.at(h, 1) && svc.Name < l.pos.service {
			continue
		}
		after := ""
		if l.at(h, 2) {
			after = l.pos.volume
		}
		for {
			limit := 0
			if l.max > 0 {
				limit = l.max - len(l.out)
			}
			vols, err := c.ListVolumes(l.ctx, h.subtenant, svc.DatasetName(), limit, after)
			if err != nil {
				return apiErr(err, a, "listing the volumes of service "+h.subtenant+"/"+svc.Name)
			}
			if len(vols) > 0 && subsystems == nil {
				if subsystems, err = l.subsystems(a, c, h.subtenant); err != nil {
					return err
				}
			}
			for i := range vols {
				h.volume = vols[i].Name
				l.add(a, h, &vols[i], subsystems)
				if l.full() {
					l.next = encodeToken(h)
					return nil
				}
			}
			if limit == 0 || len(vols) < limit {
				break
			}
			after = vols[len(vols)-1].Name
		}
	}
	return nil
}

func (l *lister) subsystems(a *account, c *api.Client, sub string) (map[string]*api.Subsystem, error) {
	list, err := c.ListSubsystems(l.ctx, sub)
	if err != nil {
		return nil, apiErr(err, a, "listing the subsystems of subtenant "+sub)
	}
	m := make(map[string]*api.Subsystem, len(list))
	for i := range list {
		m[list[i].Name] = &list[i]
	}
	return m, nil
}

func (l *lister) add(a *account, h handle, v *api.Volume, subsystems map[string]*api.Subsystem) {
	vol := &csi.Volume{VolumeId: h.String(), CapacityBytes: v.Size(), AccessibleTopology: topology(a)}
	if s := subsystems[v.Subsystem]; s != nil {
		// A volume that is not (yet) reachable is listed without a context.
		vol.VolumeContext, _ = volumeContext(v, s, ownershipOf(a, v), a.dataPort)
	}
	l.out = append(l.out, &csi.ListVolumesResponse_Entry{Volume: vol})
}
