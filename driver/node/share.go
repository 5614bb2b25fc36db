package node

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// share is what nfs, smb and lustre have in common: a network filesystem
// named server+share, mounted on the staging path, with nothing to release
// but the mount. zfs-local's legacy datasets borrow its mount (no decode:
// a local file system).
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
func (s share) mount(ctx context.Context, h *Host, v *Volume, source, fstype string, plain, sensitive []string) error {
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
	if s.decode == nil {
		// A local file system (zfs-local's legacy datasets): no server to
		// wait for, so mount-utils mounts it as before.
		if err := h.Mounter.MountSensitive(source, v.StagingPath, fstype, plain, sensitive); err != nil {
			return status.Errorf(codes.Internal, "volume %s: mount -t %s %s on %s: %v", v.ID, fstype, source, v.StagingPath, err)
		}
		return nil
	}
	return s.runMount(ctx, h, v, source, fstype, append(slices.Clone(plain), sensitive...), sensitive)
}

// runMount runs mount(8) through the exec seam within the call's deadline.
//
// A network mount can hang for minutes (mount.nfs retries an unanswering
// server for two), far past the CO's deadline, holding the volume's lock.
// Killing mount(8) alone is not enough: it forks the file system's helper
// (mount.nfs, mount.cifs), which would go on and could mount after the call
// has failed. So mount runs under coreutils' timeout, which puts itself and
// its children in a process group of their own and signals the whole group:
// SIGTERM when the budget is spent, SIGKILL after a grace period. The exec
// seam's context is the last resort behind it.
func (s share) runMount(ctx context.Context, h *Host, v *Volume, source, fstype string, options, sensitive []string) error {
	limit, budget, grace, isDeadline := mountBudget(ctx, h.Exec.timeout)
	if budget <= 0 {
		return status.Errorf(codes.DeadlineExceeded, "volume %s: no time left before the call's deadline to mount %s", v.ID, s.subject(v))
	}
	args := []string{"-k", seconds(grace), seconds(budget), "mount", "-t", fstype}
	if len(options) > 0 {
		args = append(args, "-o", strings.Join(options, ","))
	}
	args = append(args, source, v.StagingPath)
	_, err := h.Exec.Run(ctx, Command{Name: "timeout", Args: args, Sensitive: sensitive, Timeout: budget + 2*grace})
	if err == nil {
		return nil
	}
	code, exited := ExitCode(err)
	timedOut := exited && (code == 124 || code == 137) // timeout's TERM and KILL
	switch {
	case errors.Is(ctx.Err(), context.Canceled):
		return status.Errorf(codes.Canceled, "volume %s: mounting %s: the call was cancelled; the mount was stopped", v.ID, s.subject(v))
	case timedOut || ctx.Err() != nil:
		why, code := "the node's command timeout", codes.Unavailable
		if isDeadline {
			why, code = "the call's deadline", codes.DeadlineExceeded
		}
		return status.Errorf(code, "volume %s: mount -t %s %s on %s did not finish within %s (%s): no answer in time for %s; the mount was stopped",
			v.ID, fstype, source, v.StagingPath, limit.Round(time.Millisecond), why, s.subject(v))
	case !exited:
		return status.Errorf(codes.Internal, "volume %s: mount -t %s %s on %s: %v (the node needs util-linux's mount and coreutils' timeout)",
			v.ID, fstype, source, v.StagingPath, err)
	}
	return status.Errorf(codes.Internal, "volume %s: mount -t %s %s on %s: %v", v.ID, fstype, source, v.StagingPath, err)
}

// subject names what is being mounted for messages: server and share.
func (s share) subject(v *Volume) string {
	server, name, _ := s.decode(v.Context) // validated before
	return "the " + s.name + " share " + name + " of server " + server
}

// mountBudget splits the time a mount may take: limit is what is left
// before the call's deadline (isDeadline), or the node's command timeout
// when that is sooner or there is no deadline. The mount gets budget, then
// grace before SIGKILL, then grace again for the call to return in time.
func mountBudget(ctx context.Context, commandTimeout time.Duration) (limit, budget, grace time.Duration, isDeadline bool) {
	if commandTimeout <= 0 {
		commandTimeout = DefaultCommandTimeout
	}
	limit = commandTimeout
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) <= commandTimeout {
		limit, isDeadline = time.Until(dl), true
	}
	grace = min(max(limit/10, 50*time.Millisecond), time.Second)
	return limit, limit - 2*grace, grace, isDeadline
}

// seconds formats d for timeout(1), which takes fractional seconds.
func seconds(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', 3, 64) }

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
