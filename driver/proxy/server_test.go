package proxy

import (
	"context"
	"net"
	"path/filepath"
	"sync"
	"testing"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	csisrv "github.com/switchyard-csi/switchyard/driver/csi"
)

// serve puts the rig's controller behind the real gRPC server (with its
// per-key locks) on a unix socket and returns a client.
func (r *rig) serve() csipb.ControllerClient {
	r.t.Helper()
	srv := csisrv.NewServer(csisrv.Options{Identity: &csisrv.Identity{Name: "test.csi"}, Controller: r.ctl, Logger: r.ctl.log})
	sock := filepath.Join(r.dir, "csi.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		r.t.Fatal(err)
	}
	go srv.Serve(l)
	r.t.Cleanup(func() { srv.Stop(context.Background()) })
	cc, err := grpc.NewClient("unix://"+sock, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		r.t.Fatal(err)
	}
	r.t.Cleanup(func() { cc.Close() })
	return csipb.NewControllerClient(cc)
}

// 64 concurrent CreateVolume calls with one name make exactly one volume
// (the fake backend's create is racy on purpose: only the server's per-name
// lock keeps the calls apart).
func TestConcurrentCreateOneName(t *testing.T) {
	r := newRig(t)
	label := r.fake("a")
	client := r.serve()
	var wg sync.WaitGroup
	ids := make([]string, 64)
	errs := make([]error, 64)
	for i := range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := client.CreateVolume(context.Background(), &csipb.CreateVolumeRequest{Name: "pvc-same", Parameters: map[string]string{"connection": "a"}})
			ids[i], errs[i] = resp.GetVolume().GetVolumeId(), err
		}()
	}
	wg.Wait()
	for i := range 64 {
		if errs[i] != nil || ids[i] != "v:a/pvc-same" {
			t.Fatalf("call %d: %q, %v", i, ids[i], errs[i])
		}
	}
	if vols := fakeVolumes(label); len(vols) != 1 || vols["pvc-same"] != 1 {
		t.Fatalf("backend holds %v; want pvc-same created once", vols)
	}
}
