package csi

import (
	"context"
	"net"
	"path/filepath"
	"testing"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
)

type groupOnly struct {
	csipb.UnimplementedControllerServer
	g csipb.GroupControllerServer
}

func (c groupOnly) GroupController() csipb.GroupControllerServer { return c.g }

type panickyGroup struct {
	csipb.UnimplementedGroupControllerServer
}

func (panickyGroup) CreateVolumeGroupSnapshot(context.Context, *csipb.CreateVolumeGroupSnapshotRequest) (*csipb.CreateVolumeGroupSnapshotResponse, error) {
	panic("boom")
}

// A registered group service answers over gRPC behind the server's own
// interceptors (a panic is INTERNAL, not a dead plugin); a controller
// without one registers nothing, so calls are UNIMPLEMENTED.
func TestRegisterGroupController(t *testing.T) {
	for _, tc := range []struct {
		name string
		ctrl csipb.ControllerServer
		want codes.Code
	}{
		{"served", groupOnly{g: panickyGroup{}}, codes.Internal},
		{"nil group", groupOnly{}, codes.Unimplemented},
		{"no provider", &csipb.UnimplementedControllerServer{}, codes.Unimplemented},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := NewServer(Options{Identity: &Identity{Name: "x"}, Controller: tc.ctrl})
			registered := s.RegisterGroupController(GroupControllerOf(tc.ctrl))
			if registered != (tc.want == codes.Internal) {
				t.Errorf("registered = %v", registered)
			}
			sock := filepath.Join(t.TempDir(), "csi.sock")
			l, err := net.Listen("unix", sock)
			if err != nil {
				t.Fatal(err)
			}
			go func() { _ = s.Serve(l) }()
			defer s.Stop(context.Background())
			conn, err := grpc.NewClient("unix://"+sock, grpc.WithTransportCredentials(insecure.NewCredentials()))
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			_, err = csipb.NewGroupControllerClient(conn).CreateVolumeGroupSnapshot(context.Background(), &csipb.CreateVolumeGroupSnapshotRequest{Name: "g"})
			if status.Code(err) != tc.want {
				t.Errorf("CreateVolumeGroupSnapshot: %v, want %v", err, tc.want)
			}
		})
	}
}

func TestAdvertiseGroup(t *testing.T) {
	id := &Identity{}
	if g := AdvertiseGroup(id, groupOnly{}); g != nil || len(id.Capabilities) != 0 {
		t.Errorf("no group: %v %v", g, id.Capabilities)
	}
	for range 2 { // twice: advertised once
		if g := AdvertiseGroup(id, groupOnly{g: panickyGroup{}}); g == nil {
			t.Fatal("group not returned")
		}
	}
	if len(id.Capabilities) != 1 || id.Capabilities[0].GetService().GetType() != csipb.PluginCapability_Service_GROUP_CONTROLLER_SERVICE {
		t.Errorf("capabilities %v", id.Capabilities)
	}
}
