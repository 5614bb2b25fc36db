package truenas

import (
	"context"
	"strconv"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/driver/zfs/engine"
)

// setPermissions applies zfs.datasetPermissions* through the API's
// filesystem jobs: setperm for the mode, chown for the owner (the API
// takes numeric ids). ACL entries (setfacl arguments) have no API
// equivalent; they are reported once in the log and skipped.
func (t *truenas) setPermissions(ctx context.Context, mountpoint string, p engine.Permissions) error {
	if p.Mode != "" {
		mode := strings.TrimPrefix(strings.TrimPrefix(p.Mode, "0o"), "0")
		if mode == "" {
			mode = "0"
		}
		req := map[string]any{"path": mountpoint, "mode": mode, "options": map[string]any{"stripacl": true}}
		if _, err := t.api.CallJob(ctx, "filesystem.setperm", req); err != nil {
			return t.statusErr(err, "setting mode "+p.Mode+" on "+mountpoint)
		}
	}
	if p.User != "" || p.Group != "" {
		req := map[string]any{"path": mountpoint}
		for key, v := range map[string]string{"uid": p.User, "gid": p.Group} {
			if v == "" {
				continue
			}
			n, err := strconv.Atoi(v)
			if err != nil {
				return status.Errorf(codes.InvalidArgument, "%s: zfs.datasetPermissions%s must be a numeric id with the TrueNAS API drivers, got %q", t.kind.name, map[string]string{"uid": "User", "gid": "Group"}[key], v)
			}
			req[key] = n
		}
		if _, err := t.api.CallJob(ctx, "filesystem.chown", req); err != nil {
			return t.statusErr(err, "changing the owner of "+mountpoint)
		}
	}
	if len(p.ACLs) > 0 {
		t.log.Warn("zfs.datasetPermissionsAcls is not applied by the TrueNAS API drivers (no setfacl through the API)", "path", mountpoint)
	}
	return nil
}
