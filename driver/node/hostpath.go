package node

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/driver/volumecontext"
)

// HostPath is the "hostpath" attacher: the volume is a directory that
// already exists on this node, staged by bind-mounting it.
type HostPath struct{}

// Name implements Attacher.
func (HostPath) Name() string { return "hostpath" }

// Validate implements Attacher: a directory cannot be a block device, and
// the directory must be named by an absolute path.
func (HostPath) Validate(v *Volume) error {
	if v.IsBlock() {
		return status.Errorf(codes.InvalidArgument,
			"volume %s: node_attach_driver hostpath serves directories; access type block is not supported (use access type mount)", v.ID)
	}
	var c volumecontext.HostPath
	if err := c.Decode(v.Context); err != nil {
		return invalidContext(v, err)
	}
	return nil
}

// Stage implements Attacher: bind-mount the directory onto the staging path.
func (HostPath) Stage(_ context.Context, h *Host, v *Volume) error {
	var c volumecontext.HostPath
	_ = c.Decode(v.Context) // validated before
	src := filepath.Clean(c.Path)
	fi, err := os.Stat(src)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return status.Errorf(codes.NotFound,
			"volume %s: hostpath directory %s (volume_context %q) does not exist on this node", v.ID, src, volumecontext.KeyPath)
	case err != nil:
		return status.Errorf(codes.Internal, "volume %s: hostpath directory %s: %v", v.ID, src, err)
	case !fi.IsDir():
		return status.Errorf(codes.FailedPrecondition,
			"volume %s: hostpath %s (volume_context %q) is not a directory", v.ID, src, volumecontext.KeyPath)
	}

	mounted, err := isMountPoint(h.Mounter, v.StagingPath)
	if err != nil {
		return status.Errorf(codes.Internal, "volume %s: staging path %s: %v", v.ID, v.StagingPath, err)
	}
	if mounted {
		// A bind mount shows the source directory itself at the mount
		// point, so the same inode means this volume is already staged
		// (e.g. a retry after the record was lost).
		if sameFile(src, v.StagingPath) {
			return nil
		}
		return status.Errorf(codes.AlreadyExists,
			"volume %s: staging path %s already has a mount that is not %s", v.ID, v.StagingPath, src)
	}
	if err := h.Mounter.Mount(src, v.StagingPath, "", []string{"bind"}); err != nil {
		return status.Errorf(codes.Internal, "volume %s: bind-mount %s on %s: %v", v.ID, src, v.StagingPath, err)
	}
	return nil
}

// Unstage implements Attacher: the bind mount, already removed by the
// Service, was all Stage made.
func (HostPath) Unstage(context.Context, *Host, *Volume) error { return nil }
