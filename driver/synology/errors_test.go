package synology

import (
	"errors"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/driver/synology/dsm"
)

// TestDSMCodesToGRPC: each DSM error code becomes the gRPC code a CO acts
// on, and the message names the code, its meaning from Synology's Web API
// guides, and what to change where there is something to change.
func TestDSMCodesToGRPC(t *testing.T) {
	d := &Driver{s: &settings{driver: DriverISCSI}}
	for _, c := range []struct {
		api     string
		code    int
		want    codes.Code
		mention []string
	}{
		{"SYNO.API.Auth", 400, codes.Unauthenticated, []string{"no such account or incorrect password", "httpConnection.username"}},
		{"SYNO.API.Auth", 403, codes.Unauthenticated, []string{"2-step verification code required"}},
		{"SYNO.API.Auth", 407, codes.Unauthenticated, []string{"IP address is blocked"}},
		{"SYNO.Core.ISCSI.LUN", 105, codes.PermissionDenied, []string{"does not have permission", "administrators group"}},
		{"SYNO.Core.ISCSI.LUN", 102, codes.FailedPrecondition, []string{"API does not exist", "SAN Manager"}},
		{"SYNO.Core.ISCSI.LUN", 106, codes.Unavailable, []string{"session timeout", "lost twice"}},
		{"SYNO.Core.ISCSI.LUN", 119, codes.Unavailable, []string{"SID not found"}},
		{"SYNO.Core.ISCSI.LUN", 18990002, codes.ResourceExhausted, []string{"out of disk space"}},
		{"SYNO.Core.ISCSI.LUN", 18990531, codes.NotFound, []string{"no such LUN"}},
		{"SYNO.Core.ISCSI.LUN", 18990538, codes.AlreadyExists, []string{"already exists"}},
		{"SYNO.Core.ISCSI.LUN", 18990318, codes.InvalidArgument, []string{"file system", "iscsi.lunTemplate.type"}},
		{"SYNO.Core.ISCSI.Target", 18990708, codes.InvalidArgument, []string{"iscsi.targetTemplate"}},
		{"SYNO.Core.ISCSI.LUN", 120, codes.InvalidArgument, []string{"invalid parameter", "over its limit"}},
		{"SYNO.Core.Share", 402, codes.NotFound, []string{"no such shared folder"}},
		{"SYNO.Core.Share", 3309, codes.ResourceExhausted, []string{"maximum number of shared folders"}},
		{"SYNO.Core.Share", 3328, codes.Unavailable, []string{"busy"}},
		{"SYNO.Core.ISCSI.LUN", 4242, codes.Internal, []string{"error 4242"}},
	} {
		err := d.dsmErr(&dsm.Error{API: c.api, Method: "create", Code: c.code}, "creating LUN \"pvc-1\"")
		st := status.Convert(err)
		if st.Code() != c.want {
			t.Errorf("%s %d: %v, want %v", c.api, c.code, st.Code(), c.want)
		}
		for _, m := range append([]string{"synology-iscsi", "creating LUN", c.api}, c.mention...) {
			if !strings.Contains(st.Message(), m) {
				t.Errorf("%s %d: message %q does not mention %q", c.api, c.code, st.Message(), m)
			}
		}
	}
	if st := status.Convert(d.dsmErr(errors.New("boom"), "listing LUNs")); st.Code() != codes.Internal {
		t.Errorf("a non-DSM error: %v", st)
	}
}
