package zfsgeneric

// Health of an iSCSI or NVMe-oF share (engine.ShareChecker): the objects
// the sharer made for a zvol must still be on the host. For iSCSI the
// target <basename>:<asset> with a LUN 0 (deleting the backstore deletes
// its LUNs too); for NVMe-oF the subsystem <basename>:<asset>, its
// namespace 1 and its link to every configured port. An administrator's
// `targetcli /iscsi delete …` or `nvmetcli` removing one of them cuts the
// volume off behind the driver's back: ShareMissing, naming the object.
//
// Cost: the check reads one listing of the host's targets (`ls /iscsi 4`,
// or `ls /subsystems 3` and `ls /ports 3`) and keeps it for
// targetListingTTL, so checking every volume of a list page (ListVolumes
// with the CSI 1.12 condition asks once per volume, ControllerList-
// VolumeHealth once per entry) costs one targetcli or nvmetcli run, not
// one per volume. A cached listing only ever says "present": before an
// object is reported missing it is listed again by a run started after
// the check began, so a target made after the cached listing (a new
// volume) is never reported gone, and a removal shows at most
// targetListingTTL late.
//
// A listing that cannot be read (the host unreachable, the tool failing,
// nvmet's saved config not restored yet) is an error, never a missing
// object: the engine reports it as UNKNOWN_VOLUME_HEALTH_TYPE/ShareUnknown,
// as it does when the NFS share property cannot be read.

import (
	"context"
	"fmt"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/driver/zfs"
	"github.com/switchyard-csi/switchyard/driver/zfs/engine"
)

var (
	_ engine.ShareChecker = iscsiShare{}
	_ engine.ShareChecker = nvmeofShare{}
)

// targetListingTTL is how long one listing of the host's targets serves
// health checks that find their objects in it.
var targetListingTTL = 10 * time.Second

func (s iscsiShare) CheckShare(ctx context.Context, dataset string, props zfs.Properties) (string, error) {
	iqn := s.targetIQN(dataset, props)
	asset := s.d.storedAsset(dataset, props, propISCSIAssets)
	return s.listing.check(ctx, s.list, func(paths map[string]bool) string {
		target := "/iscsi/" + iqn
		if !paths[target] {
			return fmt.Sprintf("the iSCSI target %s of %s is gone (targetcli lists no such target)", iqn, dataset)
		}
		for p := range paths {
			if tpg, ok := strings.CutPrefix(p, target+"/"); ok && strings.HasSuffix(tpg, "/luns/lun0") && strings.Count(tpg, "/") == 2 {
				return ""
			}
		}
		return fmt.Sprintf("the iSCSI target %s of %s has no LUN 0 (its LUN or its backstore block/%s was deleted)", iqn, dataset, asset)
	})
}

// list is targetcli's tree of iSCSI targets down to their LUNs.
func (s iscsiShare) list(ctx context.Context) (map[string]bool, error) {
	out, err := s.d.runCLI(ctx, []string{"targetcli"}, "ls /iscsi 4\n", nil)
	if err != nil {
		return nil, err
	}
	paths, complete := configshellTree(out.Stdout+"\n"+out.Stderr, "/iscsi")
	if out.Code != 0 || !complete {
		return nil, cliFailed(s.d, "listing the iSCSI targets with targetcli", out, nil)
	}
	return paths, nil
}

func (s nvmeofShare) CheckShare(ctx context.Context, dataset string, props zfs.Properties) (string, error) {
	nqn := s.d.cfg.share.basename + ":" + s.d.storedAsset(dataset, props, propNVMeoFAssets)
	return s.listing.check(ctx, s.list, func(paths map[string]bool) string {
		sub := "/subsystems/" + nqn
		if !paths[sub] {
			return fmt.Sprintf("the NVMe-oF subsystem %s of %s is gone (nvmetcli lists no such subsystem)", nqn, dataset)
		}
		var problems []string
		if !paths[fmt.Sprintf("%s/namespaces/%d", sub, nsid)] {
			problems = append(problems, fmt.Sprintf("has no namespace %d", nsid))
		}
		for _, p := range s.d.cfg.share.ports {
			if !paths["/ports/"+p+"/subsystems/"+nqn] {
				problems = append(problems, "is not linked to port "+p)
			}
		}
		if len(problems) == 0 {
			return ""
		}
		return fmt.Sprintf("the NVMe-oF subsystem %s of %s %s", nqn, dataset, strings.Join(problems, " and "))
	})
}

// list is nvmetcli's tree of subsystems down to their namespaces and of
// ports down to their subsystem links, in one run, after the readiness
// check (until the host restored its saved config, every subsystem would
// look gone).
func (s nvmeofShare) list(ctx context.Context) (map[string]bool, error) {
	sh := s.d.cfg.share
	script, roots := "ls /subsystems 3\n", []string{"/subsystems"}
	if len(sh.ports) > 0 {
		script, roots = script+"ls /ports 3\n", append(roots, "/ports")
	}
	out, err := s.d.runCLIWhen(ctx, sh.importedFlag, s.cli(), script, nil)
	if err != nil {
		return nil, err
	}
	if sh.importedFlag != "" && out.Code == notReadyExit {
		return nil, s.notReady()
	}
	paths, complete := configshellTree(out.Stdout+"\n"+out.Stderr, roots...)
	if out.Code != 0 || !complete {
		return nil, cliFailed(s.d, "listing the NVMe-oF subsystems and ports with nvmetcli", out, nil)
	}
	return paths, nil
}

// targetListing is one listing of the host's targets.
type targetListing struct {
	started time.Time // when the run that made it began
	paths   map[string]bool
}

// listingCache keeps a sharer's latest listing. Its lock is a channel so
// that a check waiting behind another's listing gives up with its context.
type listingCache struct {
	lock chan struct{}
	last *targetListing
}

func newListingCache() *listingCache { return &listingCache{lock: make(chan struct{}, 1)} }

// check runs verdict on a listing: a cached one younger than
// targetListingTTL first, and, when verdict finds a problem there, one
// started after this check began. A nil cache lists every time.
func (c *listingCache) check(ctx context.Context, list func(context.Context) (map[string]bool, error), verdict func(map[string]bool) string) (string, error) {
	began := time.Now()
	l, err := c.listing(ctx, began.Add(-targetListingTTL), list)
	if err != nil {
		return "", err
	}
	problem := verdict(l.paths)
	if problem == "" || !l.started.Before(began) {
		return problem, nil
	}
	if l, err = c.listing(ctx, began, list); err != nil {
		return "", err
	}
	return verdict(l.paths), nil
}

// listing returns the cached listing if it was started at notBefore or
// later, else lists afresh (one run, shared by the checks waiting for it).
func (c *listingCache) listing(ctx context.Context, notBefore time.Time, list func(context.Context) (map[string]bool, error)) (*targetListing, error) {
	if c == nil {
		started := time.Now()
		paths, err := list(ctx)
		if err != nil {
			return nil, err
		}
		return &targetListing{started: started, paths: paths}, nil
	}
	select {
	case c.lock <- struct{}{}:
	case <-ctx.Done():
		return nil, status.Errorf(codes.Aborted, "another health check's listing of the storage host's targets is still running (%v)", ctx.Err())
	}
	defer func() { <-c.lock }()
	if c.last != nil && !c.last.started.Before(notBefore) {
		return c.last, nil
	}
	started := time.Now()
	paths, err := list(ctx)
	if err != nil {
		return nil, err
	}
	c.last = &targetListing{started: started, paths: paths}
	return c.last, nil
}
