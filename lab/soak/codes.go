package soak

import (
	"strings"

	"google.golang.org/grpc/codes"
)

// documented are the codes the documentation lists for each call the
// soak makes: docs/proxy.md "Errors" (INVALID_ARGUMENT, FAILED_PRECONDITION,
// NOT_FOUND, ABORTED for a busy object) and the backend pages' error
// tables (docs/backends/zfs-generic.md "Behaviour", truenas.md,
// infinia.md and local-hostpath.md "Errors": PERMISSION_DENIED,
// UNAVAILABLE, DEADLINE_EXCEEDED, INTERNAL; RESOURCE_EXHAUSTED for
// CreateVolume, OUT_OF_RANGE for ControllerExpandVolume and a rounded
// size, ALREADY_EXISTS for a name reused). DeleteVolume, DeleteSnapshot
// and ControllerUnpublishVolume answer OK for an object that is gone,
// never NOT_FOUND. Anything else (UNKNOWN, CANCELED from the driver,
// UNIMPLEMENTED, UNAUTHENTICATED, DATA_LOSS) is undocumented.
var documented = map[string][]codes.Code{
	"CreateVolume": {codes.OK, codes.InvalidArgument, codes.FailedPrecondition, codes.NotFound, codes.AlreadyExists,
		codes.ResourceExhausted, codes.OutOfRange, codes.PermissionDenied, codes.Unavailable, codes.DeadlineExceeded,
		codes.Internal, codes.Aborted},
	"CreateSnapshot": {codes.OK, codes.InvalidArgument, codes.FailedPrecondition, codes.NotFound, codes.AlreadyExists,
		codes.PermissionDenied, codes.Unavailable, codes.DeadlineExceeded, codes.Internal, codes.Aborted},
	"ControllerExpandVolume": {codes.OK, codes.InvalidArgument, codes.FailedPrecondition, codes.NotFound, codes.OutOfRange,
		codes.PermissionDenied, codes.Unavailable, codes.DeadlineExceeded, codes.Internal, codes.Aborted},
	"ControllerPublishVolume": {codes.OK, codes.InvalidArgument, codes.FailedPrecondition, codes.NotFound,
		codes.PermissionDenied, codes.Unavailable, codes.DeadlineExceeded, codes.Internal, codes.Aborted},
	"ControllerUnpublishVolume": {codes.OK, codes.InvalidArgument, codes.FailedPrecondition,
		codes.PermissionDenied, codes.Unavailable, codes.DeadlineExceeded, codes.Internal, codes.Aborted},
	"DeleteVolume": {codes.OK, codes.FailedPrecondition, codes.PermissionDenied, codes.Unavailable,
		codes.DeadlineExceeded, codes.Internal, codes.Aborted},
	"DeleteSnapshot": {codes.OK, codes.FailedPrecondition, codes.PermissionDenied, codes.Unavailable,
		codes.DeadlineExceeded, codes.Internal, codes.Aborted},
}

func isDocumented(call string, c codes.Code) bool {
	for _, d := range documented[call] {
		if d == c {
			return true
		}
	}
	return false
}

// terminal codes end the retries, as the external-provisioner's "final"
// errors do for a request that cannot succeed as sent. A valid request
// the soak sends should never get one: each is reported.
func terminal(c codes.Code) bool {
	switch c {
	case codes.InvalidArgument, codes.NotFound, codes.AlreadyExists, codes.OutOfRange, codes.PermissionDenied,
		codes.Unimplemented, codes.Unauthenticated, codes.DataLoss:
		return true
	}
	return false
}

// transportError reports whether an error was made by the gRPC client
// (the driver process died or restarts), not returned by the driver.
func transportError(c codes.Code, msg string) bool {
	if c != codes.Unavailable && c != codes.Canceled {
		return false
	}
	for _, p := range []string{"connection error:", "error reading from server", "transport is closing",
		"the client connection is closing", "closing transport", "connection reset by peer", "broken pipe"} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}

// cause names the fault an error most likely came from, from its message.
func cause(msg string) string {
	m := strings.ToLower(msg)
	switch {
	case strings.Contains(m, "injected fault"):
		return "injected-error"
	case strings.Contains(m, "another operation on"):
		return "busy"
	case strings.Contains(m, "deadline") || strings.Contains(m, "timed out") || strings.Contains(m, "timeout"):
		return "deadline"
	case strings.Contains(m, "connection") || strings.Contains(m, "eof") || strings.Contains(m, "closed") ||
		strings.Contains(m, "refused") || strings.Contains(m, "reset") || strings.Contains(m, "unreachable"):
		return "connection"
	}
	return "other"
}
