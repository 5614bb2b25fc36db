package proxy

import (
	"context"
	"slices"
	"sync"
	"testing"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/driver/backend"
)

// groupFakeType is a backend with a group controller that records what
// the proxy forwards; with fake.noGroup it has none (like the TrueNAS API
// drivers).
const groupFakeType = "fake-group-test"

var groupCalls struct {
	sync.Mutex
	creates [][]string // source ids per CreateVolumeGroupSnapshot
	deletes []string
}

func init() {
	backend.Register(backend.Type{Name: groupFakeType, ConfigKey: "fake", MaxVolumeIDLen: 40, MaxSnapshotIDLen: 40,
		New: func(o backend.Options) (backend.Driver, error) {
			no, _, _ := o.Config.Bool("fake.noGroup")
			return &groupFake{noGroup: no}, nil
		}})
}

type groupFake struct {
	fakeDriver
	noGroup bool
}

func (f *groupFake) Close() error { return nil }

func (f *groupFake) GroupController() csipb.GroupControllerServer {
	if f.noGroup {
		return nil
	}
	return groupFakeService{}
}

func (f *groupFake) ControllerGetCapabilities(context.Context, *csipb.ControllerGetCapabilitiesRequest) (*csipb.ControllerGetCapabilitiesResponse, error) {
	if f.noGroup {
		return backend.Capabilities(csipb.ControllerServiceCapability_RPC_CREATE_DELETE_VOLUME), nil
	}
	return backend.Capabilities(csipb.ControllerServiceCapability_RPC_MODIFY_VOLUME), nil
}

type groupFakeService struct {
	csipb.UnimplementedGroupControllerServer
}

func (groupFakeService) CreateVolumeGroupSnapshot(_ context.Context, req *csipb.CreateVolumeGroupSnapshotRequest) (*csipb.CreateVolumeGroupSnapshotResponse, error) {
	groupCalls.Lock()
	groupCalls.creates = append(groupCalls.creates, slices.Clone(req.GetSourceVolumeIds()))
	groupCalls.Unlock()
	gs := &csipb.VolumeGroupSnapshot{GroupSnapshotId: req.GetName(), ReadyToUse: true}
	for _, v := range req.GetSourceVolumeIds() {
		gs.Snapshots = append(gs.Snapshots, &csipb.Snapshot{SnapshotId: v + "@" + req.GetName(), SourceVolumeId: v, GroupSnapshotId: req.GetName(), ReadyToUse: true})
	}
	return &csipb.CreateVolumeGroupSnapshotResponse{GroupSnapshot: gs}, nil
}

func (groupFakeService) GetVolumeGroupSnapshot(_ context.Context, req *csipb.GetVolumeGroupSnapshotRequest) (*csipb.GetVolumeGroupSnapshotResponse, error) {
	if req.GetGroupSnapshotId() != "gs1" {
		return nil, status.Error(codes.NotFound, "no such group")
	}
	if !slices.Equal(req.GetSnapshotIds(), []string{"a@gs1"}) && len(req.GetSnapshotIds()) > 0 {
		return nil, status.Errorf(codes.InvalidArgument, "mismatch %v", req.GetSnapshotIds())
	}
	return &csipb.GetVolumeGroupSnapshotResponse{GroupSnapshot: &csipb.VolumeGroupSnapshot{GroupSnapshotId: "gs1",
		Snapshots: []*csipb.Snapshot{{SnapshotId: "a@gs1", SourceVolumeId: "a", GroupSnapshotId: "gs1"}}}}, nil
}

func (groupFakeService) DeleteVolumeGroupSnapshot(_ context.Context, req *csipb.DeleteVolumeGroupSnapshotRequest) (*csipb.DeleteVolumeGroupSnapshotResponse, error) {
	groupCalls.Lock()
	groupCalls.deletes = append(groupCalls.deletes, req.GetGroupSnapshotId())
	groupCalls.Unlock()
	return &csipb.DeleteVolumeGroupSnapshotResponse{}, nil
}

func TestProxyGroupSnapshot(t *testing.T) {
	r := newRig(t)
	r.write("east", "driver: "+groupFakeType+"\n")
	r.write("west", "driver: "+groupFakeType+"\n")
	r.write("api", "driver: "+groupFakeType+"\nfake:\n  noGroup: true\n")
	g := r.ctl.GroupController()
	bg := context.Background()

	resp, err := g.CreateVolumeGroupSnapshot(bg, &csipb.CreateVolumeGroupSnapshotRequest{Name: "gs1", SourceVolumeIds: []string{"v:east/a", "v:east/b"}})
	if err != nil {
		t.Fatal(err)
	}
	groupCalls.Lock()
	last := groupCalls.creates[len(groupCalls.creates)-1]
	groupCalls.Unlock()
	if !slices.Equal(last, []string{"a", "b"}) {
		t.Errorf("backend got sources %v, want the real ids [a b]", last)
	}
	gs := resp.GetGroupSnapshot()
	if gs.GetGroupSnapshotId() != "g:east/gs1" {
		t.Errorf("group handle %q", gs.GetGroupSnapshotId())
	}
	for i, s := range gs.GetSnapshots() {
		want := []string{"s:east/a@gs1", "s:east/b@gs1"}[i]
		if s.GetSnapshotId() != want || s.GetGroupSnapshotId() != "g:east/gs1" || s.GetSourceVolumeId() != []string{"v:east/a", "v:east/b"}[i] {
			t.Errorf("member %d = %v", i, s)
		}
	}

	// Bad input: members on two connections, a connection without atomic
	// groups, a foreign handle, no name.
	_, err = g.CreateVolumeGroupSnapshot(bg, &csipb.CreateVolumeGroupSnapshotRequest{Name: "x", SourceVolumeIds: []string{"v:east/a", "v:west/c", "v:east/b"}})
	wantCode(t, "across connections", err, codes.FailedPrecondition, "connection east: v:east/a, v:east/b", "connection west: v:west/c")
	_, err = g.CreateVolumeGroupSnapshot(bg, &csipb.CreateVolumeGroupSnapshotRequest{Name: "x", SourceVolumeIds: []string{"v:api/a"}})
	wantCode(t, "no group controller", err, codes.InvalidArgument, "connection api", "does not support volume group snapshots")
	_, err = g.CreateVolumeGroupSnapshot(bg, &csipb.CreateVolumeGroupSnapshotRequest{Name: "x", SourceVolumeIds: []string{"pvc-foreign"}})
	wantCode(t, "foreign handle", err, codes.NotFound)
	_, err = g.CreateVolumeGroupSnapshot(bg, &csipb.CreateVolumeGroupSnapshotRequest{SourceVolumeIds: []string{"v:east/a"}})
	wantCode(t, "no name", err, codes.InvalidArgument)
	_, err = g.CreateVolumeGroupSnapshot(bg, &csipb.CreateVolumeGroupSnapshotRequest{Name: "x", SourceVolumeIds: []string{"v:nofile/a"}})
	wantCode(t, "unknown connection", err, codes.FailedPrecondition)

	// Get: routed by the group handle, members translated both ways.
	got, err := g.GetVolumeGroupSnapshot(bg, &csipb.GetVolumeGroupSnapshotRequest{GroupSnapshotId: "g:east/gs1", SnapshotIds: []string{"s:east/a@gs1"}})
	if err != nil || got.GetGroupSnapshot().GetSnapshots()[0].GetSnapshotId() != "s:east/a@gs1" {
		t.Errorf("get: %v %v", got, err)
	}
	_, err = g.GetVolumeGroupSnapshot(bg, &csipb.GetVolumeGroupSnapshotRequest{GroupSnapshotId: "g:east/gs1", SnapshotIds: []string{"s:west/a@gs1"}})
	wantCode(t, "member on another connection", err, codes.InvalidArgument, "s:west/a@gs1")
	_, err = g.GetVolumeGroupSnapshot(bg, &csipb.GetVolumeGroupSnapshotRequest{GroupSnapshotId: "v:east/a"})
	wantCode(t, "not a group handle", err, codes.NotFound)
	_, err = g.GetVolumeGroupSnapshot(bg, &csipb.GetVolumeGroupSnapshotRequest{})
	wantCode(t, "no group id", err, codes.InvalidArgument)

	// Delete: an invalid handle is OK (csi-sanity), a real one reaches the
	// backend with its own id.
	if _, err := g.DeleteVolumeGroupSnapshot(bg, &csipb.DeleteVolumeGroupSnapshotRequest{GroupSnapshotId: "garbage"}); err != nil {
		t.Errorf("delete of a foreign handle: %v", err)
	}
	if _, err := g.DeleteVolumeGroupSnapshot(bg, &csipb.DeleteVolumeGroupSnapshotRequest{GroupSnapshotId: "g:east/gs1", SnapshotIds: []string{"s:east/a@gs1", "s:east/b@gs1"}}); err != nil {
		t.Fatal(err)
	}
	groupCalls.Lock()
	if n := len(groupCalls.deletes); n == 0 || groupCalls.deletes[n-1] != "gs1" {
		t.Errorf("backend deletes %v", groupCalls.deletes)
	}
	groupCalls.Unlock()
	_, err = g.DeleteVolumeGroupSnapshot(bg, &csipb.DeleteVolumeGroupSnapshotRequest{})
	wantCode(t, "delete without id", err, codes.InvalidArgument)
}

func TestProxyCheckMutableParameters(t *testing.T) {
	r := newRig(t)
	r.write("zfs", "driver: "+groupFakeType+"\n")
	r.write("api", "driver: "+groupFakeType+"\nfake:\n  noGroup: true\n")
	bg := context.Background()
	for _, tc := range []struct {
		conn   string
		params map[string]string
		want   codes.Code
	}{
		{"zfs", map[string]string{"compression": "lz4"}, codes.OK},
		{"api", nil, codes.OK},
		{"api", map[string]string{"compression": "lz4"}, codes.InvalidArgument},
	} {
		l, err := r.conns.Acquire(bg, tc.conn, true)
		if err != nil {
			t.Fatal(err)
		}
		err = CheckMutableParameters(bg, l, &csipb.CreateVolumeRequest{Name: "v", MutableParameters: tc.params})
		l.Release()
		if status.Code(err) != tc.want {
			t.Errorf("%s %v: %v, want %v", tc.conn, tc.params, err, tc.want)
		}
	}
}

func TestProxyModifyVolume(t *testing.T) {
	r := newRig(t)
	r.write("api", "driver: "+groupFakeType+"\nfake:\n  noGroup: true\n")
	bg := context.Background()
	// No parameters, no mutable backend: nothing to change, OK.
	if _, err := r.ctl.modifyVolume(bg, &csipb.ControllerModifyVolumeRequest{VolumeId: "v:api/a"}); err != nil {
		t.Errorf("empty modify: %v", err)
	}
	_, err := r.ctl.modifyVolume(bg, &csipb.ControllerModifyVolumeRequest{VolumeId: "v:api/a", MutableParameters: map[string]string{"compression": "lz4"}})
	wantCode(t, "modify on a backend without it", err, codes.InvalidArgument, "connection api", "does not support ControllerModifyVolume")
	_, err = r.ctl.modifyVolume(bg, &csipb.ControllerModifyVolumeRequest{VolumeId: "non-existing-volume-id"})
	wantCode(t, "foreign handle", err, codes.NotFound)
	_, err = r.ctl.modifyVolume(bg, &csipb.ControllerModifyVolumeRequest{})
	wantCode(t, "no volume id", err, codes.InvalidArgument)
}

func (f *groupFake) ControllerGetVolumeHealth(_ context.Context, req *csipb.ControllerGetVolumeHealthRequest) (*csipb.ControllerGetVolumeHealthResponse, error) {
	if f.noGroup {
		return nil, status.Error(codes.Unimplemented, "no health")
	}
	return &csipb.ControllerGetVolumeHealthResponse{VolumeHealth: &csipb.VolumeHealth{VolumeId: req.GetVolumeId(),
		HealthStatuses: []*csipb.VolumeHealth_VolumeHealthEntry{{Status: csipb.VolumeHealthErrorType_DEGRADED, Reason: "PoolDegraded"}}}}, nil
}

func (f *groupFake) ControllerGetVolume(_ context.Context, req *csipb.ControllerGetVolumeRequest) (*csipb.ControllerGetVolumeResponse, error) {
	if req.GetVolumeId() == "gone" {
		return nil, status.Error(codes.NotFound, "volume gone")
	}
	return &csipb.ControllerGetVolumeResponse{Volume: &csipb.Volume{VolumeId: req.GetVolumeId()}}, nil
}

func TestProxyVolumeHealth(t *testing.T) {
	r := newRig(t)
	r.write("zfs", "driver: "+groupFakeType+"\n")
	r.write("api", "driver: "+groupFakeType+"\nfake:\n  noGroup: true\n")
	bg := context.Background()
	resp, err := r.ctl.ControllerGetVolumeHealth(bg, &csipb.ControllerGetVolumeHealthRequest{VolumeId: "v:zfs/pvc-1"})
	if err != nil || resp.GetVolumeHealth().GetVolumeId() != "v:zfs/pvc-1" || resp.GetVolumeHealth().GetHealthStatuses()[0].GetReason() != "PoolDegraded" {
		t.Errorf("health: %v %v", resp, err)
	}
	// A backend without health checks: existence only, by its
	// ControllerGetVolume; no adverse condition known is an empty list.
	resp, err = r.ctl.ControllerGetVolumeHealth(bg, &csipb.ControllerGetVolumeHealthRequest{VolumeId: "v:api/pvc-1"})
	if err != nil || resp.GetVolumeHealth().GetVolumeId() != "v:api/pvc-1" || len(resp.GetVolumeHealth().GetHealthStatuses()) != 0 {
		t.Errorf("backend without health: %v %v", resp, err)
	}
	_, err = r.ctl.ControllerGetVolumeHealth(bg, &csipb.ControllerGetVolumeHealthRequest{VolumeId: "v:api/gone"})
	wantCode(t, "backend without health, volume gone", err, codes.NotFound)
	_, err = r.ctl.ControllerGetVolumeHealth(bg, &csipb.ControllerGetVolumeHealthRequest{VolumeId: "foreign"})
	wantCode(t, "foreign handle", err, codes.NotFound)
	_, err = r.ctl.ControllerGetVolumeHealth(bg, &csipb.ControllerGetVolumeHealthRequest{})
	wantCode(t, "no id", err, codes.InvalidArgument)
}
