package engine

// Volume group snapshots (CSI GroupController). One `zfs snapshot a@s b@s
// ...` takes every member in a single transaction group: all or none, at
// one instant, which is what a group snapshot promises. The members are
// ordinary snapshots (ids <volume>@<name>, same labels as CreateSnapshot's
// plus the group id), so each restores, lists and deletes like any other.
//
// Only the zfs command line can do this: the TrueNAS API snapshots one
// dataset (or one dataset recursively) per call, so a group through it
// would not be atomic, and the freenas-api-* drivers serve no group
// controller rather than a silently non-atomic one.

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/switchyard-csi/switchyard/driver/echo"
	"github.com/switchyard-csi/switchyard/driver/volumeid"
	"github.com/switchyard-csi/switchyard/driver/zfs"
)

// propGroup labels each member snapshot with its group id.
const propGroup = "switchyard:csi_group_snapshot_id"

// GroupService is the engine's CSI GroupController.
type GroupService struct {
	csi.UnimplementedGroupControllerServer
	e   *Engine
	cli *zfs.CLI
}

// GroupController returns the group snapshot service, or nil when the
// platform cannot snapshot several datasets atomically (no zfs command
// line: the TrueNAS API drivers).
func (e *Engine) GroupController() csi.GroupControllerServer {
	cli, ok := e.zfs.(*zfs.CLI)
	if !ok {
		return nil
	}
	return &GroupService{e: e, cli: cli}
}

// GroupControllerCapabilities is the one capability a group controller has.
func GroupControllerCapabilities() *csi.GroupControllerGetCapabilitiesResponse {
	return &csi.GroupControllerGetCapabilitiesResponse{Capabilities: []*csi.GroupControllerServiceCapability{{
		Type: &csi.GroupControllerServiceCapability_Rpc{Rpc: &csi.GroupControllerServiceCapability_RPC{
			Type: csi.GroupControllerServiceCapability_RPC_CREATE_DELETE_GET_VOLUME_GROUP_SNAPSHOT}}}}}
}

func (*GroupService) GroupControllerGetCapabilities(context.Context, *csi.GroupControllerGetCapabilitiesRequest) (*csi.GroupControllerGetCapabilitiesResponse, error) {
	return GroupControllerCapabilities(), nil
}

// groupIDOK: a group id is the zfs snapshot name its members share.
func groupIDOK(id string) bool {
	return id != "" && len(id) <= MaxSnapshotIDLen && volumeid.InvalidChars(id, volumeid.IsSnapshotChar) == "" && volumeid.IsAlnum(id[0])
}

// CreateVolumeGroupSnapshot snapshots every source volume at once.
func (g *GroupService) CreateVolumeGroupSnapshot(ctx context.Context, req *csi.CreateVolumeGroupSnapshotRequest) (*csi.CreateVolumeGroupSnapshotResponse, error) {
	e := g.e
	name, srcs := req.GetName(), req.GetSourceVolumeIds()
	if name == "" {
		return nil, status.Error(codes.InvalidArgument, "name is required")
	}
	if len(srcs) == 0 {
		return nil, status.Error(codes.InvalidArgument, "source_volume_ids is required")
	}
	if bad := volumeid.InvalidChars(name, volumeid.IsSnapshotChar); bad != "" {
		return nil, status.Errorf(codes.InvalidArgument, "group snapshot name %q contains invalid characters %q: only A-Z, a-z, 0-9, _, -, :, . and + are allowed", name, bad)
	}
	longest := 0
	seen := map[string]bool{}
	for _, s := range srcs {
		if seen[s] {
			return nil, status.Errorf(codes.InvalidArgument, "source_volume_ids names volume %s twice", echo.Quote(s))
		}
		seen[s] = true
		if !volumeIDOK(s) {
			return nil, status.Errorf(codes.NotFound, "source volume %s does not exist", echo.Quote(s))
		}
		longest = max(longest, len(s))
	}
	// Every member's id <volume>@<zname> stays within MaxSnapshotIDLen.
	zname := volumeid.Shorten(name, max(MaxSnapshotIDLen-longest-1, 34))
	if err := checkPools(srcs, g.e.cfg.datasetName); err != nil {
		return nil, err
	}
	existing, err := g.members(ctx, zname)
	if err != nil {
		return nil, err
	}
	if len(existing) > 0 {
		if !sameSources(existing, srcs) {
			return nil, status.Errorf(codes.AlreadyExists, "group snapshot %q already exists with other volumes (%s)", name, strings.Join(sources(existing), ", "))
		}
		return &csi.CreateVolumeGroupSnapshotResponse{GroupSnapshot: g.group(zname, existing)}, nil
	}
	snaps := make([]string, len(srcs))
	for i, s := range srcs {
		snaps[i] = e.cfg.datasetName(s) + "@" + zname
	}
	props := []zfs.Prop{{Name: propGroup, Value: zname}, {Name: propSnapshotName, Value: name}, {Name: propManaged, Value: "true"}}
	if err := g.snapshotAll(ctx, snaps, props); err != nil {
		return nil, err
	}
	// The source label differs per member, so it is set after the atomic
	// snapshot; a call cut short here is finished by its retry (members
	// without it are relabelled below).
	for i, s := range srcs {
		if err := e.zfs.Set(ctx, snaps[i], zfs.Prop{Name: propSnapshotSource, Value: s}); err != nil {
			return nil, e.zfsErr(err, "labelling "+snaps[i])
		}
	}
	made, err := g.members(ctx, zname)
	if err != nil {
		return nil, err
	}
	return &csi.CreateVolumeGroupSnapshotResponse{GroupSnapshot: g.group(zname, made)}, nil
}

// checkPools refuses members in different pools: one zfs snapshot command
// is atomic only within a pool. One connection's volumes share its parent
// dataset today, so only a future layout (a parent per class) reaches the
// refusal; it is tested on its own.
func checkPools(srcs []string, dataset func(string) string) error {
	byPool := map[string][]string{}
	for _, s := range srcs {
		pool, _, _ := strings.Cut(dataset(s), "/")
		byPool[pool] = append(byPool[pool], s)
	}
	if len(byPool) < 2 {
		return nil
	}
	var parts []string
	for p, vs := range byPool {
		parts = append(parts, fmt.Sprintf("pool %s: %s", p, strings.Join(vs, ", ")))
	}
	sort.Strings(parts)
	return status.Errorf(codes.FailedPrecondition, "a group snapshot is atomic only within one pool; the volumes are in %d pools (%s)", len(byPool), strings.Join(parts, "; "))
}

// snapshotAll runs one `zfs snapshot -o ... a@s b@s ...`.
func (g *GroupService) snapshotAll(ctx context.Context, snaps []string, props []zfs.Prop) error {
	args := []string{"snapshot"}
	for _, p := range props {
		args = append(args, "-o", p.Name+"="+p.Value)
	}
	args = append(args, snaps...)
	_, err := g.cli.Do(ctx, "zfs snapshot", cliArgv(g.cli, args...), zfs.RunOptions{})
	switch {
	case err == nil:
		return nil
	case zfs.IsNotExist(err):
		return status.Errorf(codes.NotFound, "a source volume does not exist; no member was snapshotted: %v", err)
	case zfs.IsExists(err):
		return status.Errorf(codes.AlreadyExists, "a source volume already has a snapshot of this name (not of this group); no member was snapshotted: %v", err)
	}
	return g.e.zfsErr(err, "snapshotting "+strings.Join(snaps, " "))
}

// cliArgv is argv for the host's zfs, with sudo when configured, as
// zfs.CLI builds its own commands.
func cliArgv(c *zfs.CLI, args ...string) []string {
	prog := c.Paths.ZFS
	if prog == "" {
		prog = zfs.DefaultPaths.ZFS
	}
	argv := []string{prog}
	if c.Sudo {
		sudo := c.Paths.Sudo
		if sudo == "" {
			sudo = zfs.DefaultPaths.Sudo
		}
		argv = []string{sudo, prog}
	}
	return append(argv, args...)
}

// member is one snapshot of a group.
type member struct {
	id, source string
	props      zfs.Properties
}

// members reads the group's snapshots, sorted by id.
func (g *GroupService) members(ctx context.Context, gid string) ([]member, error) {
	e := g.e
	rows, err := e.zfs.List(ctx, e.cfg.parent, zfs.ListOptions{Depth: 2, Types: []string{"snapshot"}, Props: append([]string{propGroup, "defer_destroy"}, snapshotProps...)})
	if zfs.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, e.zfsErr(err, "listing snapshots under "+e.cfg.parent)
	}
	var out []member
	for _, r := range rows {
		// A member destroyed with -d while a restored volume still uses it
		// lingers until that clone goes; the group is deleted already.
		if r.Props[propGroup] != gid || r.Props[propManaged] != "true" || r.Props["defer_destroy"] == "on" {
			continue
		}
		id, ok := strings.CutPrefix(r.Name, e.cfg.parent+"/")
		if !ok {
			continue
		}
		ref, ok := e.parseSnapshotID(id)
		if !ok || ref.detached {
			continue
		}
		p := zfs.Properties{}
		for k, v := range r.Props {
			p[k] = zfs.Property{Value: v}
		}
		out = append(out, member{id: id, source: ref.volumeID, props: p})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out, nil
}

func sources(ms []member) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.source
	}
	sort.Strings(out)
	return out
}

func sameSources(ms []member, srcs []string) bool {
	want := slices.Clone(srcs)
	sort.Strings(want)
	return slices.Equal(sources(ms), want)
}

// group builds the CSI answer; the creation time is the members' (one
// transaction group, so one time).
func (g *GroupService) group(gid string, ms []member) *csi.VolumeGroupSnapshot {
	gs := &csi.VolumeGroupSnapshot{GroupSnapshotId: gid, ReadyToUse: true}
	var created int64
	for _, m := range ms {
		s := g.e.snapshotFromProps(m.id, m.source, m.props)
		s.GroupSnapshotId = gid
		gs.Snapshots = append(gs.Snapshots, s)
		created = max(created, m.props.Int("creation"))
	}
	gs.CreationTime = timestamppb.New(unix(created))
	return gs
}

// checkIDs compares the CO's snapshot_ids with the group's members:
// INVALID_ARGUMENT on a mismatch, as the CSI spec asks.
func checkIDs(gid string, ms []member, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	have := make([]string, len(ms))
	for i, m := range ms {
		have[i] = m.id
	}
	want := slices.Clone(ids)
	sort.Strings(want)
	if !slices.Equal(have, want) {
		return status.Errorf(codes.InvalidArgument, "snapshot_ids do not match group snapshot %s: it holds %s", gid, strings.Join(have, ", "))
	}
	return nil
}

// GetVolumeGroupSnapshot reads a group's members.
func (g *GroupService) GetVolumeGroupSnapshot(ctx context.Context, req *csi.GetVolumeGroupSnapshotRequest) (*csi.GetVolumeGroupSnapshotResponse, error) {
	gid := req.GetGroupSnapshotId()
	if gid == "" {
		return nil, status.Error(codes.InvalidArgument, "group_snapshot_id is required")
	}
	if !groupIDOK(gid) {
		return nil, status.Errorf(codes.NotFound, "group snapshot %s does not exist", echo.Quote(gid))
	}
	ms, err := g.members(ctx, gid)
	if err != nil {
		return nil, err
	}
	if len(ms) == 0 {
		return nil, status.Errorf(codes.NotFound, "group snapshot %s does not exist", gid)
	}
	if err := checkIDs(gid, ms, req.GetSnapshotIds()); err != nil {
		return nil, err
	}
	return &csi.GetVolumeGroupSnapshotResponse{GroupSnapshot: g.group(gid, ms)}, nil
}

// DeleteVolumeGroupSnapshot destroys every member (deferred, like
// DeleteSnapshot, when volumes were restored from one).
func (g *GroupService) DeleteVolumeGroupSnapshot(ctx context.Context, req *csi.DeleteVolumeGroupSnapshotRequest) (*csi.DeleteVolumeGroupSnapshotResponse, error) {
	e := g.e
	gid := req.GetGroupSnapshotId()
	if gid == "" {
		return nil, status.Error(codes.InvalidArgument, "group_snapshot_id is required")
	}
	if !groupIDOK(gid) {
		return &csi.DeleteVolumeGroupSnapshotResponse{}, nil
	}
	ms, err := g.members(ctx, gid)
	if err != nil {
		return nil, err
	}
	if len(ms) == 0 {
		return &csi.DeleteVolumeGroupSnapshotResponse{}, nil
	}
	if err := checkIDs(gid, ms, req.GetSnapshotIds()); err != nil {
		return nil, err
	}
	for _, m := range ms {
		ds := e.cfg.datasetName(m.id)
		err := e.zfs.Destroy(ctx, ds, zfs.DestroyOptions{Defer: true})
		switch {
		case err == nil, zfs.IsNotExist(err):
		case zfs.HasDependentClones(err):
			return nil, status.Errorf(codes.FailedPrecondition, "group snapshot %s: member %s has dependent clones: delete the volumes made from it first", gid, m.id)
		default:
			return nil, e.zfsErr(err, "destroying "+ds)
		}
	}
	return &csi.DeleteVolumeGroupSnapshotResponse{}, nil
}
