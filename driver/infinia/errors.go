package infinia

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/driver/infinia/api"
)

// apiErr turns a REST failure into a status whose message names the
// account and what was being done. Callers handle the answers their flow
// expects (404 on delete, 409 on create) before calling it.
func apiErr(err error, acct *account, doing string) error {
	if err == nil {
		return nil
	}
	if s, ok := status.FromError(err); ok && s.Code() != codes.Unknown {
		return err
	}
	prefix := fmt.Sprintf("%s account %s: %s", DriverName, acct.key, doing)
	var se *api.StatusError
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return status.Errorf(codes.DeadlineExceeded, "%s: %v", prefix, err)
	case errors.Is(err, context.Canceled):
		return status.Errorf(codes.Canceled, "%s: %v", prefix, err)
	case errors.Is(err, api.ErrTLS):
		return status.Errorf(codes.FailedPrecondition, "%s: %v", prefix, err)
	case errors.Is(err, api.ErrUnreachable):
		return status.Errorf(codes.Unavailable, "%s: %v", prefix, err)
	case !errors.As(err, &se):
		return status.Errorf(codes.Internal, "%s: %v", prefix, err)
	}
	switch se.Code {
	case http.StatusUnauthorized:
		return status.Errorf(codes.FailedPrecondition,
			"%s: %s refused the credentials of account %s (%s): check accounts.%s.password (or the password secret of the StorageClass) and that the account exists at level %s/%s",
			prefix, se.Endpoint, acct.key, se.Title, acct.key, acct.cluster, acct.tenant)
	case http.StatusForbidden:
		return status.Errorf(codes.PermissionDenied, "%s: %v (the account may only use tenant %s/%s)", prefix, err, acct.cluster, acct.tenant)
	case http.StatusNotFound:
		return status.Errorf(codes.NotFound, "%s: %v", prefix, err)
	case http.StatusBadRequest:
		return status.Errorf(codes.InvalidArgument, "%s: Infinia refused the request: %s", prefix, se.Title)
	case http.StatusConflict:
		return status.Errorf(codes.FailedPrecondition, "%s: %v", prefix, err)
	case http.StatusInsufficientStorage:
		return status.Errorf(codes.ResourceExhausted, "%s: %v", prefix, err)
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return status.Errorf(codes.Unavailable, "%s: %v", prefix, err)
	}
	return status.Errorf(codes.Internal, "%s: %v", prefix, err)
}
