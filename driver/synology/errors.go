package synology

import (
	"errors"
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/driver/synology/dsm"
)

// dsmErr turns a DSM failure into a gRPC status whose code is chosen per
// DSM code and whose message names the code's meaning and the config key
// to look at. doing says what the driver was doing.
func (d *Driver) dsmErr(err error, doing string) error {
	var te *dsm.TransportError
	if errors.As(err, &te) {
		return status.Errorf(codes.Unavailable, "%s: %s: cannot reach DSM (httpConnection.protocol, host, port): %v", d.s.driver, doing, err)
	}
	var e *dsm.Error
	if !errors.As(err, &e) {
		return status.Errorf(codes.Internal, "%s: %s: %v", d.s.driver, doing, err)
	}
	code, hint := codeOf(e)
	msg := fmt.Sprintf("%s: %s: %v", d.s.driver, doing, e)
	if hint != "" {
		msg += "; " + hint
	}
	return status.Error(code, msg)
}

// codeOf maps a DSM error code to a gRPC code and a hint naming what to
// change.
func codeOf(e *dsm.Error) (codes.Code, string) {
	if e.API == "SYNO.API.Auth" && e.Code >= 400 && e.Code <= 410 {
		return codes.Unauthenticated, "check httpConnection.username and httpConnection.password (the account needs administrator rights and no 2-step verification)"
	}
	switch e.Code {
	case 105:
		return codes.PermissionDenied, "httpConnection.username must be in DSM's administrators group"
	case 101, 102, 103, 104:
		return codes.FailedPrecondition, "this DSM does not offer the API switchyard needs (DSM 7 with the SAN Manager package)"
	case 106, 107, 119:
		return codes.Unavailable, "the DSM session was lost twice in a row (another client using httpConnection.session?)"
	case 100, 3328:
		return codes.Unavailable, ""
	case 18990002, 18990541, 18990542, 18990543, 3309:
		return codes.ResourceExhausted, ""
	case 18990531, 18990532, 18990710:
		return codes.NotFound, ""
	case 18990538, 18990744, 3301:
		return codes.AlreadyExists, ""
	case 18990500, 18990318:
		return codes.InvalidArgument, "set iscsi.lunTemplate.type to a type the volume's file system takes (btrfs: BLUN, BLUN_THICK; ext4: THIN, ADV, FILE)"
	case 18990635:
		return codes.InvalidArgument, "check iscsi.lunTemplate"
	case 18990708:
		return codes.InvalidArgument, "check iscsi.targetTemplate's auth_type, user, password, mutual_user, mutual_password"
	case 120:
		return codes.InvalidArgument, "DSM refused a parameter (a name over its limit, synology.volume not a volume of this NAS, ...)"
	}
	if e.API == "SYNO.Core.Share" || e.API == "SYNO.Core.Share.Snapshot" {
		switch e.Code {
		case 402:
			return codes.NotFound, ""
		case 403:
			return codes.InvalidArgument, "check synology.volume and the share name and quota"
		}
	}
	return codes.Internal, ""
}
