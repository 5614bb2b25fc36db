package truenas

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/driver/truenas/api"
	"github.com/switchyard-csi/switchyard/driver/zfs"
)

// statusErr turns a failed API call into a CSI status: credentials, TLS
// and version problems are the configuration's (FAILED_PRECONDITION, no
// retry helps), an unreachable server or dropped connection is worth
// retrying (UNAVAILABLE), a validation error names the fields.
func (t *truenas) statusErr(err error, doing string) error {
	if err == nil {
		return nil
	}
	if s, ok := status.FromError(err); ok && s.Code() != codes.Unknown {
		return err
	}
	msg := fmt.Sprintf("%s: %s: %v", t.kind.name, doing, err)
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return status.Error(codes.DeadlineExceeded, msg)
	case errors.Is(err, context.Canceled):
		return status.Error(codes.Canceled, msg)
	case errors.Is(err, api.ErrAuth):
		// The client's errors name the keys to check; add a hint only
		// where they do not (a second, generic one reads as a contradiction).
		if !strings.Contains(msg, "httpConnection.") {
			msg += " (check httpConnection.apiKey, or username and password)"
		}
		return status.Error(codes.FailedPrecondition, msg)
	case errors.Is(err, api.ErrTLS), errors.Is(err, api.ErrPlaintextAPIKey), errors.Is(err, api.ErrUnsupported):
		return status.Error(codes.FailedPrecondition, msg)
	case errors.Is(err, api.ErrUnreachable), errors.Is(err, api.ErrConnectionLost):
		return status.Error(codes.Unavailable, msg)
	case api.IsValidation(err):
		return status.Error(codes.InvalidArgument, msg)
	case isOutOfSpace(err):
		return status.Error(codes.ResourceExhausted, msg)
	}
	return status.Error(codes.Internal, msg)
}

// datasetErr turns a failed dataset or snapshot call into what the zfs
// engine understands: a *zfs.Error with a Kind for server refusals, a
// status for transport problems.
func (t *truenas) datasetErr(err error, method string) error {
	if err == nil {
		return nil
	}
	var ae *api.Error
	if !errors.As(err, &ae) {
		return t.statusErr(err, method)
	}
	ze := &zfs.Error{Command: method, Stderr: ae.Error(), Code: 1}
	low := strings.ToLower(ae.Error())
	switch {
	case api.IsNotFound(err):
		ze.Kind = zfs.KindNotExist
	case api.IsExists(err):
		ze.Kind = zfs.KindExists
	case strings.Contains(low, "dependent clones"):
		ze.Kind = zfs.KindDependentClones
	case isOutOfSpace(err):
		ze.Kind = zfs.KindOutOfSpace
	case strings.Contains(low, "busy"), ae.Errno == 16:
		ze.Kind = zfs.KindBusy
	}
	return ze
}

func isOutOfSpace(err error) bool {
	var ae *api.Error
	if !errors.As(err, &ae) {
		return false
	}
	low := strings.ToLower(ae.Error())
	return ae.Errno == 28 || strings.Contains(low, "out of space") || strings.Contains(low, "quota exceeded") || strings.Contains(low, "exceeds quota")
}

func notExist(name string) error {
	return &zfs.Error{Command: "pool.dataset.query", Stderr: "cannot open '" + name + "': dataset does not exist", Code: 1, Kind: zfs.KindNotExist}
}
