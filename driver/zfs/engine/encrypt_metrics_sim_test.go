package engine_test

// The key in no metric: the driver's Prometheus metrics are recorded by a
// gRPC interceptor around every call (driver/metrics), with the request,
// its error and its code at hand. Calls that carry a key (an encrypted
// CreateVolume, a refused malformed key, a wrong key at
// ControllerPublishVolume after the host lost it) go through that
// interceptor here, and every metric family's name, help, label names
// and values are then searched for the keys.

import (
	"context"
	"strings"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/driver/metrics"
	"github.com/switchyard-csi/switchyard/driver/zfs/engine"
)

func TestSimEncryptionKeyNotInMetrics(t *testing.T) {
	s := newEncSim(t, "zfs-generic-nfs")
	m := metrics.New()
	m.ConnectionState().ConnectionLoaded("enc", "/conns/enc.yaml", nil)
	ic := m.Interceptor(metrics.ProxyRouter("enc"))
	call := func(method string, req any, h func(context.Context, any) (any, error)) error {
		_, err := ic(ctx, req, &grpc.UnaryServerInfo{FullMethod: "/csi.v1.Controller/" + method}, h)
		return err
	}
	create := func(ctx context.Context, r any) (any, error) {
		return s.CreateVolume(ctx, r.(*csi.CreateVolumeRequest))
	}
	publish := func(ctx context.Context, r any) (any, error) {
		return s.ControllerPublishVolume(ctx, r.(*csi.ControllerPublishVolumeRequest))
	}
	params := map[string]string{engine.ParamEncryption: "true"}
	createReq := func(name, key string) *csi.CreateVolumeRequest {
		return &csi.CreateVolumeRequest{Name: name, CapacityRange: &csi.CapacityRange{RequiredBytes: mib},
			VolumeCapabilities: []*csi.VolumeCapability{capability(sngw, s.block, "")}, Parameters: params,
			Secrets: map[string]string{engine.SecretEncryptionKey: key}}
	}
	const (
		good      = "metrics-good-passphrase-4f1c"
		malformed = "short7!"
		wrong     = "metrics-wrong-passphrase-9b2e"
	)

	if err := call("CreateVolume", createReq("pvc-m", good), create); err != nil {
		t.Fatalf("encrypted CreateVolume: %v", err)
	}
	if err := call("CreateVolume", createReq("pvc-bad", malformed), create); status.Code(err) != codes.InvalidArgument {
		t.Fatalf("malformed key: %v, want INVALID_ARGUMENT", err)
	}
	ds := s.parent + "/pvc-m"
	zfsLines(t, s.host, "unload-key", ds) // the storage host's reboot
	pub := &csi.ControllerPublishVolumeRequest{VolumeId: "pvc-m", NodeId: "n=node-a",
		VolumeCapability: capability(sngw, s.block, ""), Secrets: map[string]string{engine.SecretEncryptionKey: wrong}}
	if err := call("ControllerPublishVolume", pub, publish); status.Code(err) != codes.FailedPrecondition || !strings.Contains(err.Error(), "Incorrect key") {
		t.Fatalf("publish with a wrong key: %v, want FAILED_PRECONDITION with zfs's reason", err)
	}

	fams, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, f := range fams {
		b.WriteString(f.GetName() + " " + f.GetHelp() + "\n")
		for _, mt := range f.GetMetric() {
			for _, l := range mt.GetLabel() {
				b.WriteString(l.GetName() + "=" + l.GetValue() + "\n")
			}
		}
	}
	text := b.String()
	// The calls above must be in the metrics, or the search proves nothing.
	for _, want := range []string{"method=CreateVolume", "method=ControllerPublishVolume", "code=InvalidArgument", "code=FailedPrecondition"} {
		if !strings.Contains(text, want) {
			t.Fatalf("the metrics do not show %q; the search would prove nothing:\n%s", want, text)
		}
	}
	for _, k := range []string{good, malformed, wrong} {
		if strings.Contains(text, k) {
			t.Errorf("the key %q is in the metrics", k)
		}
	}
	s.noKeyAnywhere(t, good, malformed, wrong)
}
