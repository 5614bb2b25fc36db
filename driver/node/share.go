package node

import (
	"path/filepath"
	"slices"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// share is what nfs, smb and lustre have in common: a network filesystem
// named server+share, mounted on the staging path, with nothing to release
// but the mount.
type share struct {
	name string
	// fsTypes are the capability fs_type values accepted; the first is the
	// default and the others are equivalent names (nfs4 for nfs).
	fsTypes []string
	// source builds the mount source from the server and the share.
	source func(server, share string) string
	// decode reads server and share through the kind's volumecontext type.
	decode func(vc map[string]string) (server, share string, err error)
}

func (s share) validate(v *Volume) error {
	if v.IsBlock() {
		return status.Errorf(codes.InvalidArgument,
			"volume %s: node_attach_driver %s mounts a shared filesystem; access type block is not supported (use access type mount)", v.ID, s.name)
	}
	if fs := v.Capability.GetMount().GetFsType(); fs != "" && !slices.Contains(s.fsTypes, fs) {
		return status.Errorf(codes.InvalidArgument,
			"volume %s: node_attach_driver %s mounts fs_type %s, not %q", v.ID, s.name, strings.Join(s.fsTypes, " or "), fs)
	}
	if _, _, err := s.decode(v.Context); err != nil {
		return invalidContext(v, err)
	}
	return nil
}

func (s share) fsType(v *Volume) string {
	if fs := v.Capability.GetMount().GetFsType(); fs != "" {
		return fs
	}
	return s.fsTypes[0]
}

func (s share) device(v *Volume) string {
	server, share, _ := s.decode(v.Context) // validated before
	return s.source(server, share)
}

// mount mounts source on the staging path. It is idempotent: the same
// share already mounted there is success; anything else is ALREADY_EXISTS.
func (s share) mount(h *Host, v *Volume, source, fstype string, plain, sensitive []string) error {
	mounted, err := isMountPoint(h.Mounter, v.StagingPath)
	if err != nil {
		return status.Errorf(codes.Internal, "volume %s: staging path %s: %v", v.ID, v.StagingPath, err)
	}
	if mounted {
		dev, typ, err := mountedSource(h, v.StagingPath)
		if err != nil {
			return status.Errorf(codes.Internal, "volume %s: staging path %s: %v", v.ID, v.StagingPath, err)
		}
		if sameShare(dev, source) && (typ == "" || slices.Contains(s.fsTypes, typ) || typ == fstype) {
			return nil
		}
		return status.Errorf(codes.AlreadyExists,
			"volume %s: staging path %s already has %s (%s) mounted, not %s", v.ID, v.StagingPath, dev, typ, source)
	}
	if err := h.Mounter.MountSensitive(source, v.StagingPath, fstype, plain, sensitive); err != nil {
		return status.Errorf(codes.Internal, "volume %s: mount -t %s %s on %s: %v", v.ID, fstype, source, v.StagingPath, err)
	}
	return nil
}

// mountedSource is the source and type of the topmost mount at path.
func mountedSource(h *Host, path string) (source, fstype string, err error) {
	mps, err := h.Mounter.List()
	if err != nil {
		return "", "", err
	}
	if p, err := filepath.EvalSymlinks(path); err == nil {
		path = p
	}
	for _, mp := range mps { // later entries are mounted on top
		if mp.Path == path {
			source, fstype = mp.Device, mp.Type
		}
	}
	return source, fstype, nil
}

// sameShare compares mount sources, ignoring a trailing slash the kernel
// may add or drop.
func sameShare(a, b string) bool {
	return strings.TrimRight(a, "/") == strings.TrimRight(b, "/")
}
