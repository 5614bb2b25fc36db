package proxy

import (
	"context"
	"strings"
	"testing"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// healthFake is a controller with fixed capabilities and health answers.
type healthFake struct {
	csipb.UnimplementedControllerServer
	caps   []csipb.ControllerServiceCapability_RPC_Type
	health map[string][]*csipb.VolumeHealth_VolumeHealthEntry // absent: NOT_FOUND
}

func (h *healthFake) ControllerGetCapabilities(context.Context, *csipb.ControllerGetCapabilitiesRequest) (*csipb.ControllerGetCapabilitiesResponse, error) {
	var caps []*csipb.ControllerServiceCapability
	for _, t := range h.caps {
		caps = append(caps, rpcCap(t))
	}
	return &csipb.ControllerGetCapabilitiesResponse{Capabilities: caps}, nil
}

func (h *healthFake) ControllerGetVolumeHealth(_ context.Context, req *csipb.ControllerGetVolumeHealthRequest) (*csipb.ControllerGetVolumeHealthResponse, error) {
	e, ok := h.health[req.GetVolumeId()]
	if !ok {
		return nil, status.Error(codes.NotFound, "no volume "+req.GetVolumeId())
	}
	return &csipb.ControllerGetVolumeHealthResponse{VolumeHealth: &csipb.VolumeHealth{VolumeId: req.GetVolumeId(), HealthStatuses: e}}, nil
}

func newHealthFake(caps ...csipb.ControllerServiceCapability_RPC_Type) *healthFake {
	return &healthFake{caps: caps, health: map[string][]*csipb.VolumeHealth_VolumeHealthEntry{
		"v:a/ok": nil,
		"v:a/unshared": {{Status: csipb.VolumeHealthErrorType_INACCESSIBLE, Reason: "ShareMissing", Message: "the NFS share of tank/k8s/unshared is gone"},
			{Status: csipb.VolumeHealthErrorType_DEGRADED, Reason: "PoolFull", Message: "pool tank is 97% full"}},
	}}
}

// call runs resp through the interceptor as the server would.
func call(t *testing.T, c csipb.ControllerServer, resp any) any {
	t.Helper()
	out, err := LegacyVolumeCondition(c)(context.Background(), nil, &grpc.UnaryServerInfo{}, func(context.Context, any) (any, error) { return resp, nil })
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// legacyCondition reads field 2 of a VolumeStatus as a CSI 1.12 reader
// would, after a trip over the wire (marshal, unmarshal) of its message.
func legacyCondition(t *testing.T, unknown []byte) (found, abnormal bool, msg string, copies int) {
	t.Helper()
	c, err := ReadLegacyCondition(unknown)
	if err != nil {
		t.Fatal(err)
	}
	return c.Found, c.Abnormal, c.Message, c.Copies
}

func TestLegacyCapabilityNextToHealth(t *testing.T) {
	get := func(c csipb.ControllerServer) []csipb.ControllerServiceCapability_RPC_Type {
		r, _ := c.ControllerGetCapabilities(context.Background(), nil)
		var types []csipb.ControllerServiceCapability_RPC_Type
		for _, cp := range call(t, c, r).(*csipb.ControllerGetCapabilitiesResponse).GetCapabilities() {
			types = append(types, cp.GetRpc().GetType())
		}
		return types
	}
	with := get(newHealthFake(csipb.ControllerServiceCapability_RPC_LIST_VOLUMES, csipb.ControllerServiceCapability_RPC_GET_VOLUME_HEALTH))
	if len(with) != 3 || with[2] != 11 {
		t.Errorf("capabilities %v; want LIST_VOLUMES, GET_VOLUME_HEALTH and 11 (CSI 1.12's VOLUME_CONDITION)", with)
	}
	without := get(newHealthFake(csipb.ControllerServiceCapability_RPC_LIST_VOLUMES))
	if len(without) != 1 {
		t.Errorf("capabilities %v; a controller without health must not claim the condition", without)
	}
}

func TestLegacyConditionInListVolumes(t *testing.T) {
	c := newHealthFake(csipb.ControllerServiceCapability_RPC_LIST_VOLUMES, csipb.ControllerServiceCapability_RPC_GET_VOLUME_HEALTH)
	resp := &csipb.ListVolumesResponse{Entries: []*csipb.ListVolumesResponse_Entry{
		{Volume: &csipb.Volume{VolumeId: "v:a/ok"}},
		{Volume: &csipb.Volume{VolumeId: "v:a/unshared"}, Status: &csipb.ListVolumesResponse_VolumeStatus{PublishedNodeIds: []string{"n1"}}},
		{Volume: &csipb.Volume{VolumeId: "v:a/vanished"}},
	}}
	out := call(t, c, resp).(*csipb.ListVolumesResponse)
	// Twice: the field must not be doubled.
	out = call(t, c, out).(*csipb.ListVolumesResponse)
	wire, err := proto.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	var got csipb.ListVolumesResponse
	if err := proto.Unmarshal(wire, &got); err != nil {
		t.Fatal(err)
	}
	e := got.GetEntries()
	if f, ab, msg, n := legacyCondition(t, e[0].GetStatus().ProtoReflect().GetUnknown()); !f || ab || msg != "" || n != 1 {
		t.Errorf("healthy volume: condition found=%v abnormal=%v msg=%q copies=%d; want one normal condition", f, ab, msg, n)
	}
	f, ab, msg, n := legacyCondition(t, e[1].GetStatus().ProtoReflect().GetUnknown())
	if !f || !ab || n != 1 || !strings.Contains(msg, "INACCESSIBLE/ShareMissing: the NFS share of tank/k8s/unshared is gone") || !strings.Contains(msg, "DEGRADED/PoolFull: pool tank is 97% full") {
		t.Errorf("unshared volume: found=%v abnormal=%v copies=%d msg=%q; want one abnormal condition naming both entries", f, ab, n, msg)
	}
	if ids := e[1].GetStatus().GetPublishedNodeIds(); len(ids) != 1 || ids[0] != "n1" {
		t.Errorf("published nodes %v; the status's own fields must stay", ids)
	}
	if f, _, _, _ := legacyCondition(t, e[2].GetStatus().ProtoReflect().GetUnknown()); f {
		t.Error("a volume whose health is unknown (NOT_FOUND) got a condition")
	}
}

func TestLegacyConditionInGetVolume(t *testing.T) {
	c := newHealthFake(csipb.ControllerServiceCapability_RPC_GET_VOLUME, csipb.ControllerServiceCapability_RPC_GET_VOLUME_HEALTH)
	out := call(t, c, &csipb.ControllerGetVolumeResponse{Volume: &csipb.Volume{VolumeId: "v:a/unshared"}}).(*csipb.ControllerGetVolumeResponse)
	if f, ab, msg, _ := legacyCondition(t, out.GetStatus().ProtoReflect().GetUnknown()); !f || !ab || !strings.Contains(msg, "ShareMissing") {
		t.Errorf("found=%v abnormal=%v msg=%q; want the abnormal condition", f, ab, msg)
	}

	noHealth := newHealthFake(csipb.ControllerServiceCapability_RPC_GET_VOLUME)
	out = call(t, noHealth, &csipb.ControllerGetVolumeResponse{Volume: &csipb.Volume{VolumeId: "v:a/unshared"}}).(*csipb.ControllerGetVolumeResponse)
	if out.GetStatus() != nil {
		t.Errorf("a controller without GET_VOLUME_HEALTH got a status %v", out.GetStatus())
	}
}

func TestLegacyConditionPassesErrorsAndNodeOnly(t *testing.T) {
	icpt := LegacyVolumeCondition(nil)
	resp := &csipb.ListVolumesResponse{Entries: []*csipb.ListVolumesResponse_Entry{{Volume: &csipb.Volume{VolumeId: "x"}}}}
	out, err := icpt(context.Background(), nil, &grpc.UnaryServerInfo{}, func(context.Context, any) (any, error) { return resp, nil })
	if err != nil || out.(*csipb.ListVolumesResponse).GetEntries()[0].GetStatus() != nil {
		t.Errorf("node-only plugin: %v %v; want the answer unchanged", out, err)
	}
	want := status.Error(codes.Unavailable, "backend down")
	c := newHealthFake(csipb.ControllerServiceCapability_RPC_GET_VOLUME_HEALTH)
	if _, err := LegacyVolumeCondition(c)(context.Background(), nil, &grpc.UnaryServerInfo{}, func(context.Context, any) (any, error) { return nil, want }); err != want {
		t.Errorf("error %v; want the handler's own", err)
	}
}
