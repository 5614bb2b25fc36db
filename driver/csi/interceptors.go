package csi

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strings"
	"time"

	"github.com/kubernetes-csi/csi-lib-utils/protosanitizer"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/driver/echo"
	"github.com/switchyard-csi/switchyard/driver/keylock"
)

// recoverer runs next, the steps inside it (each step below calls the
// next one itself, which passes the handler h on; locker calls h), and
// turns a panic in them into INTERNAL, logging the stack: one bad request
// must never take the whole plugin (and every node's mounts) down.
func recoverer(log *slog.Logger, next grpc.UnaryServerInterceptor) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (resp any, err error) {
		defer func() {
			if p := recover(); p != nil {
				log.Error("panic in CSI call", "method", info.FullMethod, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
				resp, err = nil, status.Errorf(codes.Internal, "%s: internal error (panic: %v); this is a bug, please report it", shortMethod(info.FullMethod), p)
			}
		}()
		return next(ctx, req, info, h)
	}
}

// statusOnly guarantees that every error leaving next is a gRPC status
// chosen deliberately; anything else is a bug surfaced as INTERNAL.
func statusOnly(next grpc.UnaryServerInterceptor) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		resp, err := next(ctx, req, info, h)
		if err == nil {
			return resp, nil
		}
		if s, ok := status.FromError(err); ok {
			return nil, bounded(s)
		}
		if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
			return nil, status.FromContextError(err).Err()
		}
		return nil, bounded(status.New(codes.Internal, err.Error()))
	}
}

// bounded cuts an error message that echoes too much input (echo.Message):
// whatever a backend quoted, no answer repeats kilobytes of a request.
func bounded(s *status.Status) error {
	if len(s.Message()) <= echo.MaxMessage {
		return s.Err()
	}
	p := s.Proto()
	p.Message = echo.Message(p.Message)
	return status.ErrorProto(p)
}

// locker serialises calls that act on the same volume, name or snapshot;
// calls on other keys proceed in parallel. A waiter gives up with ABORTED
// when its call's context ends (the CO retries).
//
// This is the only per-volume lock layer, for controller and node calls
// alike (the node service used to lock each volume a second time). It is
// here rather than in the services because every call reaches a service
// through this server (driver/assembly serves the node service only via
// csi.Server), so one layer covers every RPC with one key scheme (lockKeys)
// and one ABORTED rule; a second layer only doubled the waiting and left two
// places to keep in agreement. Locks a service needs beyond one call's own
// keys stay in the service: the node host's per-target locks, which volumes
// sharing one iSCSI or NVMe-oF target take.
func locker(locks *keylock.Set) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		keys := lockKeys(req)
		if len(keys) == 0 {
			return h(ctx, req)
		}
		unlock, err := locks.Lock(ctx, keys...)
		if err != nil {
			return nil, status.Errorf(codes.Aborted, "%s: another operation on %s is still in progress", shortMethod(info.FullMethod), strings.Join(keys, ", "))
		}
		defer unlock()
		return h(ctx, req)
	}
}

// logger logs every call (next) with its outcome; request bodies only at
// debug level and always with CSI secrets stripped.
func logger(log *slog.Logger, next grpc.UnaryServerInterceptor) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		method := shortMethod(info.FullMethod)
		debug := log.Enabled(ctx, slog.LevelDebug)
		if debug {
			log.Debug("call", "method", method, "request", protosanitizer.StripSecrets(req).String())
		}
		start := time.Now()
		resp, err := next(ctx, req, info, h)
		took := time.Since(start)
		if err != nil {
			st, _ := status.FromError(err)
			level := slog.LevelWarn
			if st.Code() == codes.Internal || st.Code() == codes.Unknown {
				level = slog.LevelError
			}
			log.Log(ctx, level, "call failed", "method", method, "code", st.Code().String(), "error", st.Message(), "took", took)
			return resp, err
		}
		if debug {
			log.Debug("call done", "method", method, "took", took, "response", protosanitizer.StripSecrets(resp).String())
		} else if !quiet(method) {
			logDone(log, method, took)
		}
		return resp, nil
	}
}

// logDone writes a successful call's info line, as log.Info would, but
// hands the record to the handler itself: Logger.Info first unwinds the
// stack for the line's source position, a quarter of the line's CPU
// through gRPC's deep stacks (docs/performance.md, issue 16), which the
// driver's handler never prints (it has no AddSource).
func logDone(log *slog.Logger, method string, took time.Duration) {
	ctx := context.Background()
	h := log.Handler()
	if !h.Enabled(ctx, slog.LevelInfo) {
		return
	}
	r := slog.NewRecord(time.Now(), slog.LevelInfo, "call done", 0)
	r.AddAttrs(slog.String("method", method), slog.Duration("took", took))
	_ = h.Handle(ctx, r)
}

// quiet methods are logged at info level only when they fail. Most are
// polled constantly by sidecars (logging them would drown everything
// else); the rest only read (ValidateVolumeCapabilities, ControllerGetVolume,
// the listings): the info log is the record of what changed, and a line per
// read was a tenth of such a call's CPU (issue 16, BenchmarkValidateParallel).
func quiet(method string) bool {
	switch method {
	case "Probe", "GetPluginInfo", "GetPluginCapabilities", "ControllerGetCapabilities", "NodeGetCapabilities", "NodeGetVolumeStats", "GetCapacity",
		"ValidateVolumeCapabilities", "ControllerGetVolume", "ListVolumes", "ListSnapshots", "NodeGetInfo":
		return true
	}
	return false
}

func shortMethod(full string) string {
	if i := strings.LastIndexByte(full, '/'); i >= 0 {
		return full[i+1:]
	}
	return full
}
