// Package csi is switchyard's gRPC front: the CSI server with its
// interceptors (panic recovery, status-only errors, per-key locking, logging
// without secrets) and the identity service.
package csi

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"

	"github.com/switchyard-csi/switchyard/driver/keylock"
)

// Options configure a Server. Controller and Node may be nil (a plugin
// started with --csi-mode node serves no controller).
type Options struct {
	Identity   csipb.IdentityServer
	Controller csipb.ControllerServer
	Node       csipb.NodeServer
	Logger     *slog.Logger
	// Outer interceptors run before all of the server's own, outermost
	// first: metrics go here, so they see every call's final code.
	Outer []grpc.UnaryServerInterceptor
}

// Server is a CSI gRPC server.
type Server struct {
	grpc  *grpc.Server
	locks *keylock.Set
	log   *slog.Logger
}

// NewServer registers the services behind the interceptor chain. The order
// matters: recovery is outermost so a panic anywhere (even in logging) is
// caught; locking is innermost so a waiter's time shows in the call log.
func NewServer(o Options) *Server {
	log := o.Logger
	if log == nil {
		log = slog.Default()
	}
	s := &Server{locks: &keylock.Set{}, log: log}
	// The server's own steps call each other directly, each made once
	// here: as separate interceptors gRPC-Go's chain built a closure per
	// step for every call (issue 16: a call's own allocations).
	own := recoverer(log, statusOnly(logger(log, locker(s.locks))))
	chain := append(append([]grpc.UnaryServerInterceptor{}, o.Outer...), own)
	// Stream workers: each call runs on a goroutine kept from earlier calls
	// rather than a new one whose stack grows again from 8 KiB (a tenth of
	// a cheap call's CPU in the profile of BenchmarkValidateParallel); when
	// all are busy gRPC starts a goroutine as before, so nothing queues.
	// Sixteen cover a CO's usual concurrency (sidecars' worker pools hit
	// one socket); a worker costs nothing until its first call.
	//
	// No other server option: SharedWriteBuffer, smaller read/write
	// buffers, WriteBufferSize(0), static or larger flow-control windows
	// (no BDP pings) were measured against this and none cut the CPU per
	// call beyond the run-to-run noise (docs/performance.md, "The gRPC
	// path, per call"); the call costs what gRPC-Go's empty handler does
	// (BenchmarkValidateFloorProcess) plus ~2 µs of ours.
	s.grpc = grpc.NewServer(grpc.ChainUnaryInterceptor(chain...),
		grpc.NumStreamWorkers(uint32(max(16, runtime.GOMAXPROCS(0)))))
	csipb.RegisterIdentityServer(s.grpc, o.Identity)
	if o.Controller != nil {
		csipb.RegisterControllerServer(s.grpc, o.Controller)
	}
	if o.Node != nil {
		csipb.RegisterNodeServer(s.grpc, o.Node)
	}
	return s
}

// Listen opens an endpoint: "unix:///path", "unix:path", a bare path, or
// "tcp://host:port". A stale unix socket file is removed first.
func Listen(endpoint string) (net.Listener, error) {
	network, addr := "unix", endpoint
	switch {
	case strings.HasPrefix(endpoint, "unix://"):
		addr = strings.TrimPrefix(endpoint, "unix://")
	case strings.HasPrefix(endpoint, "unix:"):
		addr = strings.TrimPrefix(endpoint, "unix:")
	case strings.HasPrefix(endpoint, "tcp://"):
		network, addr = "tcp", strings.TrimPrefix(endpoint, "tcp://")
	}
	if addr == "" {
		return nil, fmt.Errorf("endpoint %q names no socket path or address", endpoint)
	}
	if network == "unix" {
		if err := os.MkdirAll(filepath.Dir(addr), 0o755); err != nil {
			return nil, fmt.Errorf("socket %s: %w", addr, err)
		}
		if err := os.Remove(addr); err != nil && !os.IsNotExist(err) {
			return nil, fmt.Errorf("socket %s: removing the stale socket: %w", addr, err)
		}
	}
	l, err := net.Listen(network, addr)
	if err != nil {
		return nil, fmt.Errorf("listening on %s: %w", endpoint, err)
	}
	return l, nil
}

// Serve answers calls on l until Stop.
func (s *Server) Serve(l net.Listener) error { return s.grpc.Serve(l) }

// Stop stops accepting calls and waits for in-flight calls to finish; when
// ctx ends first the remaining calls are cut off.
func (s *Server) Stop(ctx context.Context) {
	done := make(chan struct{})
	go func() {
		s.grpc.GracefulStop()
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
		s.log.Warn("in-flight calls did not finish in time; stopping hard")
		s.grpc.Stop()
		<-done
	}
}
