package engine

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/driver/zfs"
)

// transportErr turns an executor error into a status: credentials are a
// configuration problem (no retry helps), an unreachable host or a dropped
// connection is worth retrying. Messages start with the driver name.
func transportErr(driver string, err error) error {
	if _, ok := status.FromError(err); ok && status.Code(err) != codes.Unknown {
		return err
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return status.Errorf(codes.DeadlineExceeded, "%s: %v", driver, err)
	case errors.Is(err, context.Canceled):
		return status.Errorf(codes.Canceled, "%s: %v", driver, err)
	case errors.Is(err, zfs.ErrHostKey):
		// The message says which key to pin; credentials are not the issue.
		return status.Errorf(codes.FailedPrecondition, "%s: %v", driver, err)
	case errors.Is(err, zfs.ErrAuth):
		return status.Errorf(codes.FailedPrecondition, "%s: %v (check sshConnection.username and password/privateKey)", driver, err)
	case errors.Is(err, zfs.ErrUnreachable), errors.Is(err, zfs.ErrConnectionLost):
		return status.Errorf(codes.Unavailable, "%s: %v", driver, err)
	}
	return status.Errorf(codes.Internal, "%s: %v", driver, err)
}

// zfsErr maps a failed command: transport problems as above, out of space
// as RESOURCE_EXHAUSTED, anything else as INTERNAL with zfs's own message.
func (e *Engine) zfsErr(err error, doing string) error {
	if err == nil {
		return nil
	}
	if _, ok := status.FromError(err); ok && status.Code(err) != codes.Unknown {
		return err
	}
	var ze *zfs.Error
	if !errors.As(err, &ze) {
		return transportErr(e.cfg.driver, fmt.Errorf("%s: %w", doing, err))
	}
	if zfs.IsOutOfSpace(err) {
		return status.Errorf(codes.ResourceExhausted, "%s: %s: %v", e.cfg.driver, doing, err)
	}
	return status.Errorf(codes.Internal, "%s: %s: %v", e.cfg.driver, doing, err)
}
