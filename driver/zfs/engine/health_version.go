package engine

import (
	"context"
	"errors"
	"strings"

	"github.com/switchyard-csi/switchyard/driver/zfs"
)

// VersionReporter is a Platform (or driver) that can say which release its
// backend runs; `switchyard connections` shows it.
type VersionReporter interface {
	BackendVersion(ctx context.Context) (string, error)
}

// BackendVersion is the backend's release: the platform's own answer when
// it has one (the TrueNAS API's system.version), else the first line of
// `zfs version` (OpenZFS 0.8 and later: "zfs-2.2.7-1").
func (e *Engine) BackendVersion(ctx context.Context) (string, error) {
	if vr, ok := e.plat.(VersionReporter); ok {
		return vr.BackendVersion(ctx)
	}
	c := e.zfsCLI()
	if c == nil {
		return "", errors.New("this backend does not report a version")
	}
	prog := c.Paths.ZFS
	if prog == "" {
		prog = zfs.DefaultPaths.ZFS
	}
	argv := []string{prog, "version"}
	if c.Sudo {
		sudo := c.Paths.Sudo
		if sudo == "" {
			sudo = zfs.DefaultPaths.Sudo
		}
		argv = append([]string{sudo}, argv...)
	}
	out, err := c.Do(ctx, "zfs version", argv, zfs.RunOptions{})
	if err != nil {
		return "", err
	}
	first, _, _ := strings.Cut(strings.TrimSpace(out.Stdout), "\n")
	if first == "" {
		return "", errors.New("zfs version printed nothing")
	}
	return first, nil
}
