package metrics

import (
	"context"
	"testing"
	"time"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/driver/metrics/roundtrip"
)

func info(method string) *grpc.UnaryServerInfo {
	return &grpc.UnaryServerInfo{FullMethod: "/csi.v1.Controller/" + method}
}

// Calls through the interceptor show up per connection and method: count,
// errors by code, latency, and the round trips the handler reported.
func TestInterceptorRecordsCalls(t *testing.T) {
	m := New()
	m.ConnectionState().ConnectionLoaded("nas", "/conns/nas.yaml", nil)
	ic := m.Interceptor(ProxyRouter(""))
	ctx := context.Background()

	ok := func(ctx context.Context, req any) (any, error) {
		roundtrip.Count(ctx, roundtrip.SSH)
		roundtrip.Count(ctx, roundtrip.SSH)
		roundtrip.Count(ctx, roundtrip.HTTP)
		return "done", nil
	}
	slow := func(ctx context.Context, req any) (any, error) { time.Sleep(30 * time.Millisecond); return nil, nil }
	notFound := func(ctx context.Context, req any) (any, error) { return nil, status.Error(codes.NotFound, "gone") }

	create := &csipb.CreateVolumeRequest{Name: "pvc-1", Parameters: map[string]string{"connection": "nas"}}
	for range 3 {
		resp, err := ic(ctx, create, info("CreateVolume"), ok)
		if err != nil || resp != "done" {
			t.Fatalf("the interceptor changed the answer: %v %v", resp, err)
		}
	}
	if _, err := ic(ctx, &csipb.DeleteVolumeRequest{VolumeId: "v:nas/pvc-1"}, info("DeleteVolume"), notFound); status.Code(err) != codes.NotFound {
		t.Fatalf("the interceptor changed the error: %v", err)
	}
	_, _ = ic(ctx, &csipb.ControllerExpandVolumeRequest{VolumeId: "v:nas/pvc-1"}, info("ControllerExpandVolume"), slow)
	_, _ = ic(ctx, &csipb.ProbeRequest{}, &grpc.UnaryServerInfo{FullMethod: "/csi.v1.Identity/Probe"}, ok)
	_, _ = ic(ctx, &csipb.ValidateVolumeCapabilitiesRequest{VolumeId: "v:ghost/x"}, info("ValidateVolumeCapabilities"), notFound)
	_, _ = ic(ctx, &csipb.NodeGetVolumeStatsRequest{VolumeId: "not-a-handle"}, info("NodeGetVolumeStats"), notFound)

	for _, c := range []struct {
		conn, method string
		want         float64
	}{{"nas", "CreateVolume", 3}, {"nas", "DeleteVolume", 1}, {"nas", "ControllerExpandVolume", 1}, {NoConnection, "Probe", 1},
		{UnknownConnection, "ValidateVolumeCapabilities", 1}, {UnknownConnection, "NodeGetVolumeStats", 1}} {
		if got := testutil.ToFloat64(m.calls.WithLabelValues(c.conn, c.method)); got != c.want {
			t.Errorf("calls{%s,%s} = %v, want %v", c.conn, c.method, got, c.want)
		}
	}
	errs := gather(t, m.reg, "switchyard_csi_call_errors_total")
	want := series{
		"code=NotFound,connection=nas,method=DeleteVolume":                    1,
		"code=NotFound,connection=_unknown,method=ValidateVolumeCapabilities": 1,
		"code=NotFound,connection=_unknown,method=NodeGetVolumeStats":         1,
	}
	if len(errs) != len(want) {
		t.Errorf("error series %v, want %v", errs, want)
	}
	for k, v := range want {
		if errs[k] != v {
			t.Errorf("errors{%s} = %v, want %v (all: %v)", k, errs[k], v, errs)
		}
	}
	// 3 creates × 2 SSH commands and 1 HTTP request; the Probe's trips are
	// the fixed connection's.
	trips := gather(t, m.reg, "switchyard_backend_round_trips_total")
	for k, v := range map[string]float64{"connection=nas,kind=ssh": 6, "connection=nas,kind=http": 3, "connection=nas,kind=websocket": 0,
		"connection=_none,kind=ssh": 2, "connection=_none,kind=http": 1} {
		if trips[k] != v {
			t.Errorf("round trips{%s} = %v, want %v (all: %v)", k, trips[k], v, trips)
		}
	}
	lat := gather(t, m.reg, "switchyard_csi_call_duration_seconds")
	if lat["connection=nas,method=CreateVolume"] != 3 {
		t.Errorf("latency samples %v", lat)
	}
	// The slow call's 30 ms land above the 25 ms bucket, inside 50 ms.
	mfs, err := m.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "switchyard_csi_call_duration_seconds" {
			continue
		}
		for _, s := range mf.GetMetric() {
			if !hasLabel(s.GetLabel(), "method", "ControllerExpandVolume") {
				continue
			}
			for _, b := range s.GetHistogram().GetBucket() {
				if b.GetUpperBound() == 0.025 && b.GetCumulativeCount() != 0 {
					t.Errorf("a 30 ms call counted in the 25 ms bucket")
				}
				if b.GetUpperBound() == 0.05 && b.GetCumulativeCount() != 1 {
					t.Errorf("a 30 ms call not in the 50 ms bucket: %d", b.GetCumulativeCount())
				}
			}
		}
	}
}
