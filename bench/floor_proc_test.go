package bench

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// floorChildEnv makes this test binary an empty CSI controller serving on
// the unix socket it names (TestMain): gRPC-Go's default server, no
// interceptors, a ValidateVolumeCapabilities that answers at once.
const floorChildEnv = "SWITCHYARD_BENCH_FLOOR_SOCKET"

// floorWorkersEnv gives the empty server 16 stream workers, as the driver has.
const floorWorkersEnv = "SWITCHYARD_BENCH_FLOOR_WORKERS"

// floorController answers without looking at anything; every method
// not below is unimplemented.
type floorController struct {
	csipb.UnimplementedControllerServer
	// fs, when set, makes CreateVolume and DeleteVolume do the file
	// system floor's system calls (fsFloorServer).
	fs *fsFloorServer
}

func (floorController) ValidateVolumeCapabilities(_ context.Context, req *csipb.ValidateVolumeCapabilitiesRequest) (*csipb.ValidateVolumeCapabilitiesResponse, error) {
	return &csipb.ValidateVolumeCapabilitiesResponse{Confirmed: &csipb.ValidateVolumeCapabilitiesResponse_Confirmed{VolumeCapabilities: req.VolumeCapabilities}}, nil
}

// CreateVolume and DeleteVolume answer at once: the gRPC floor of
// local-hostpath's create+delete pair (BenchmarkHostpathPairFloorProcess).
func (c floorController) CreateVolume(_ context.Context, req *csipb.CreateVolumeRequest) (*csipb.CreateVolumeResponse, error) {
	if c.fs != nil {
		if err := c.fs.create(req.GetName()); err != nil {
			return nil, err
		}
	}
	return &csipb.CreateVolumeResponse{Volume: &csipb.Volume{VolumeId: req.GetName()}}, nil
}

func (c floorController) DeleteVolume(_ context.Context, req *csipb.DeleteVolumeRequest) (*csipb.DeleteVolumeResponse, error) {
	if c.fs != nil {
		if err := c.fs.delete(req.GetVolumeId()); err != nil {
			return nil, err
		}
	}
	return &csipb.DeleteVolumeResponse{}, nil
}

// floorIdentity answers Probe (the client's WaitReady) as ready.
type floorIdentity struct {
	csipb.UnimplementedIdentityServer
}

func (floorIdentity) Probe(context.Context, *csipb.ProbeRequest) (*csipb.ProbeResponse, error) {
	return &csipb.ProbeResponse{Ready: wrapperspb.Bool(true)}, nil
}

func floorChild(sock string) int {
	l, err := net.Listen("unix", sock)
	if err != nil {
		return 1
	}
	var opts []grpc.ServerOption
	// The driver's one server option (driver/csi.NewServer): calls on
	// kept goroutines. Without it the floor pays stack growth per call.
	if os.Getenv(floorWorkersEnv) != "" {
		opts = append(opts, grpc.NumStreamWorkers(16))
	}
	s := grpc.NewServer(opts...)
	fsf, err := fsFloorFromEnv()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	csipb.RegisterControllerServer(s, floorController{fs: fsf})
	csipb.RegisterIdentityServer(s, floorIdentity{})
	if err := s.Serve(l); err != nil {
		return 1
	}
	return 0
}

// BenchmarkValidateFloorProcess is the floor beside BenchmarkValidateProcess:
// the same calls, callers and socket type against a process that is nothing
// but gRPC-Go's server and an empty handler. Its server-cpu-us/call is what
// a unary call costs in gRPC-Go, HTTP/2 and the kernel on this machine, the
// part no change to switchyard's own code can remove.
//
// server=default is gRPC-Go's defaults; server=workers adds the driver's
// NumStreamWorkers(16), the fair floor for switchyard's figure.
func BenchmarkValidateFloorProcess(b *testing.B) {
	skipUnlessLinux(b)
	b.Run("server=default", func(b *testing.B) { validateFloor(b, false) })
	b.Run("server=workers", func(b *testing.B) { validateFloor(b, true) })
}

func validateFloor(b *testing.B, workers bool) {
	for range b.N {
		validateBatch(b, startFloor(b, workers))
	}
}

// startFloor runs this test binary as the empty CSI server (floorChild),
// with env added to its environment.
func startFloor(b *testing.B, workers bool, env ...string) driverProc {
	b.Helper()
	sock := filepath.Join(b.TempDir(), "floor.sock")
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(append(os.Environ(), floorChildEnv+"="+sock), env...)
	if workers {
		cmd.Env = append(cmd.Env, floorWorkersEnv+"=1")
	}
	return startServing(b, cmd, sock)
}
