package engine

// Volume health on the controller side (CSI v1.13's ControllerGetVolumeHealth
// and ControllerListVolumeHealth, which replaced VOLUME_CONDITION): what the
// storage host knows about a volume that exists.
//   - the pool: DEGRADED (reason PoolDegraded), FAULTED/UNAVAIL/...
//     (INACCESSIBLE, PoolUnavailable), nearly full (DEGRADED, PoolFull),
//     unreadable (UNKNOWN_VOLUME_HEALTH_TYPE, PoolHealthUnknown);
//   - the share: a sharer that can check its target (ShareChecker) reports
//     the export, iSCSI target/LUN or NVMe namespace removed behind the
//     driver's back (INACCESSIBLE, ShareMissing).
// A volume whose dataset is gone is NOT_FOUND, naming the dataset.

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/driver/zfs"
)

// PoolFullPercent is the pool capacity from which volumes are reported
// abnormal: ZFS slows down sharply and writes start failing near 100%.
const PoolFullPercent = 95

// PoolHealth, on a Platform that does not run zpool (the TrueNAS API),
// reads a pool's health ("ONLINE", "DEGRADED", ...) and how full it is.
type PoolHealth interface {
	PoolHealth(ctx context.Context, pool string) (health string, capacityPercent int, err error)
}

// ShareChecker, on a Sharer, says what is wrong with a volume's share ("" if
// nothing): the NFS export, SMB share, iSCSI target/LUN or NVMe namespace
// removed behind the driver's back.
type ShareChecker interface {
	CheckShare(ctx context.Context, dataset string, props zfs.Properties) (problem string, err error)
}

// pool is the pool volumes live in.
func (e *Engine) pool() string {
	p, _, _ := strings.Cut(e.cfg.parent, "/")
	return p
}

// poolProblems reads the pool once. An error reading it is reported too:
// the state is unknown rather than healthy.
func (e *Engine) poolProblems(ctx context.Context) []problem {
	pool := e.pool()
	var health string
	var capacity int
	var err error
	switch {
	case e.zfsCLI() != nil:
		health, capacity, err = zpoolHealth(ctx, e.zfsCLI(), pool)
	default:
		ph, ok := e.plat.(PoolHealth)
		if !ok {
			return nil
		}
		health, capacity, err = ph.PoolHealth(ctx, pool)
	}
	if err != nil {
		return []problem{{csi.VolumeHealthErrorType_UNKNOWN_VOLUME_HEALTH_TYPE, "PoolHealthUnknown", fmt.Sprintf("the health of pool %s could not be read: %v", pool, err)}}
	}
	return poolProblems(pool, health, capacity)
}

func (e *Engine) zfsCLI() *zfs.CLI {
	c, _ := e.zfs.(*zfs.CLI)
	return c
}

// zpoolHealth runs `zpool list -Hp -o health,capacity <pool>`.
func zpoolHealth(ctx context.Context, c *zfs.CLI, pool string) (string, int, error) {
	prog := c.Paths.Zpool
	if prog == "" {
		prog = zfs.DefaultPaths.Zpool
	}
	argv := []string{prog, "list", "-Hp", "-o", "health,capacity", pool}
	if c.Sudo {
		sudo := c.Paths.Sudo
		if sudo == "" {
			sudo = zfs.DefaultPaths.Sudo
		}
		argv = append([]string{sudo}, argv...)
	}
	out, err := c.Do(ctx, "zpool list", argv, zfs.RunOptions{})
	if err != nil {
		return "", 0, err
	}
	f := strings.Fields(out.Stdout)
	if len(f) < 2 {
		return "", 0, fmt.Errorf("zpool list printed %q", strings.TrimSpace(out.Stdout))
	}
	capacity, err := strconv.Atoi(strings.TrimSuffix(f[1], "%"))
	if err != nil {
		return "", 0, fmt.Errorf("zpool list: capacity %q is not a number", f[1])
	}
	return f[0], capacity, nil
}

// shareProblems asks the sharer, when it can check.
func (e *Engine) shareProblems(ctx context.Context, id string) []problem {
	sc, ok := e.share.(ShareChecker)
	if !ok {
		return nil
	}
	ds := e.cfg.datasetName(id)
	props, err := e.zfs.Get(ctx, ds, e.volumeProps()...)
	if err != nil {
		return []problem{{csi.VolumeHealthErrorType_UNKNOWN_VOLUME_HEALTH_TYPE, "ShareUnknown", fmt.Sprintf("reading %s failed: %v", ds, err)}}
	}
	missing, err := sc.CheckShare(ctx, ds, props)
	switch {
	case err != nil:
		return []problem{{csi.VolumeHealthErrorType_UNKNOWN_VOLUME_HEALTH_TYPE, "ShareUnknown", fmt.Sprintf("checking the share of %s failed: %v", ds, err)}}
	case missing != "":
		return []problem{{csi.VolumeHealthErrorType_INACCESSIBLE, "ShareMissing", missing}}
	}
	return nil
}

type problem struct {
	status  csi.VolumeHealthErrorType
	reason  string
	message string
}

// poolProblems turns zpool's health and capacity into health entries.
func poolProblems(pool, health string, capacity int) []problem {
	var out []problem
	switch h := strings.ToUpper(health); h {
	case "ONLINE":
	case "DEGRADED":
		out = append(out, problem{csi.VolumeHealthErrorType_DEGRADED, "PoolDegraded", fmt.Sprintf("pool %s is DEGRADED: a device failed, redundancy is reduced", pool)})
	default:
		out = append(out, problem{csi.VolumeHealthErrorType_INACCESSIBLE, "PoolUnavailable", fmt.Sprintf("pool %s is %s", pool, h)})
	}
	if capacity >= PoolFullPercent {
		out = append(out, problem{csi.VolumeHealthErrorType_DEGRADED, "PoolFull", fmt.Sprintf("pool %s is %d%% full", pool, capacity)})
	}
	return out
}

func health(id string, ps ...[]problem) *csi.VolumeHealth {
	h := &csi.VolumeHealth{VolumeId: id}
	for _, l := range ps {
		for _, p := range l {
			h.HealthStatuses = append(h.HealthStatuses, &csi.VolumeHealth_VolumeHealthEntry{Status: p.status, Reason: p.reason, Message: p.message})
		}
	}
	return h
}

// ControllerGetVolumeHealth reports one volume's pool and share problems.
func (e *Engine) ControllerGetVolumeHealth(ctx context.Context, req *csi.ControllerGetVolumeHealthRequest) (*csi.ControllerGetVolumeHealthResponse, error) {
	id := req.GetVolumeId()
	if id == "" {
		return nil, status.Error(codes.InvalidArgument, "volume_id is required")
	}
	if _, err := e.existingDataset(ctx, id); err != nil {
		return nil, err
	}
	return &csi.ControllerGetVolumeHealthResponse{VolumeHealth: health(id, e.poolProblems(ctx), e.shareProblems(ctx, id))}, nil
}

// ControllerListVolumeHealth pages like ListVolumes (same tokens) and reads
// the pool once per page.
func (e *Engine) ControllerListVolumeHealth(ctx context.Context, req *csi.ControllerListVolumeHealthRequest) (*csi.ControllerListVolumeHealthResponse, error) {
	list, err := e.ListVolumes(ctx, &csi.ListVolumesRequest{MaxEntries: req.GetMaxEntries(), StartingToken: req.GetStartingToken()})
	if err != nil {
		return nil, err
	}
	resp := &csi.ControllerListVolumeHealthResponse{NextToken: list.GetNextToken()}
	if len(list.GetEntries()) == 0 {
		return resp, nil
	}
	pool := e.poolProblems(ctx)
	for _, en := range list.GetEntries() {
		id := en.GetVolume().GetVolumeId()
		resp.Entries = append(resp.Entries, health(id, pool, e.shareProblems(ctx, id)))
	}
	return resp, nil
}

// HealthCapabilities are the controller capabilities this file serves
// (the hook in ControllerGetCapabilities appends them).
var HealthCapabilities = []csi.ControllerServiceCapability_RPC_Type{
	csi.ControllerServiceCapability_RPC_GET_VOLUME_HEALTH,
	csi.ControllerServiceCapability_RPC_LIST_VOLUME_HEALTH,
}
