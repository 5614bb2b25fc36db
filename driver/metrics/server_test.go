package metrics

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	csisrv "github.com/switchyard-csi/switchyard/driver/csi"
)

// panicky is a controller whose CreateVolume panics and whose DeleteVolume
// returns a plain (non-status) error.
type panicky struct {
	csipb.UnimplementedControllerServer
}

func (panicky) CreateVolume(context.Context, *csipb.CreateVolumeRequest) (*csipb.CreateVolumeResponse, error) {
	panic("boom")
}

func (panicky) DeleteVolume(context.Context, *csipb.DeleteVolumeRequest) (*csipb.DeleteVolumeResponse, error) {
	return nil, io.ErrUnexpectedEOF
}

// Outermost in the real server's chain, the interceptor counts the code
// the CO gets: a panic and a bare error both as Internal, an unregistered
// method never (gRPC answers it before any interceptor).
func TestServerChainRecordsFinalCodes(t *testing.T) {
	m := New()
	srv := csisrv.NewServer(csisrv.Options{Identity: &csisrv.Identity{Name: "t", Version: "1"}, Controller: panicky{},
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Outer: []grpc.UnaryServerInterceptor{m.Interceptor(ProxyRouter(""))}})
	l, err := csisrv.Listen(filepath.Join(t.TempDir(), "csi.sock"))
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Stop(ctx)
	})
	cc, err := grpc.NewClient("unix://"+l.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ctl := csipb.NewControllerClient(cc)
	if _, err := ctl.CreateVolume(ctx, &csipb.CreateVolumeRequest{Name: "pvc"}); status.Code(err) != codes.Internal {
		t.Fatalf("panic: %v", err)
	}
	if _, err := ctl.DeleteVolume(ctx, &csipb.DeleteVolumeRequest{VolumeId: "v:x/y"}); status.Code(err) != codes.Internal {
		t.Fatalf("bare error: %v", err)
	}
	if _, err := csipb.NewNodeClient(cc).NodeGetInfo(ctx, &csipb.NodeGetInfoRequest{}); status.Code(err) != codes.Unimplemented {
		t.Fatalf("unregistered service: %v", err)
	}
	errs := gather(t, m.reg, "switchyard_csi_call_errors_total")
	want := series{"code=Internal,connection=_none,method=CreateVolume": 1, "code=Internal,connection=_unknown,method=DeleteVolume": 1}
	if len(errs) != len(want) {
		t.Fatalf("errors %v, want %v", errs, want)
	}
	for k, v := range want {
		if errs[k] != v {
			t.Fatalf("errors %v, want %v", errs, want)
		}
	}
}
