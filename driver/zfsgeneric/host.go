package zfsgeneric

import (
	"context"
	"strconv"
	"strings"
	"sync"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/driver/zfs"
)

// hostInfo is what the driver learns about the storage host once: its login
// shell, the user it runs as (non-root users need sudo for chmod/chown) and
// the longest zvol device name it supports.
type hostInfo struct {
	mu     sync.Mutex
	loaded bool
	facts  hostFacts
}

type hostFacts struct {
	shell   string
	user    string
	kernel  string
	release string
}

// maxZvolName is the longest "zvol/<dataset>" device name: 255 on Linux
// and FreeBSD 13+, 63 on older FreeBSD (devfs).
func (f hostFacts) maxZvolName() int {
	if strings.EqualFold(f.kernel, "FreeBSD") {
		if major, err := strconv.Atoi(strings.SplitN(f.release, ".", 2)[0]); err == nil && major < 13 {
			return 63
		}
	}
	return 255
}

// facts returns the host facts, asking the host once (one command, one
// session) and caching the answer for the driver's life.
func (d *Driver) facts(ctx context.Context) (hostFacts, error) {
	h := d.host
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.loaded {
		return h.facts, nil
	}
	// $0 is expanded by the host's shell on purpose: democratic-csi refuses
	// csh, whose quoting rules differ from sh's.
	out, err := d.exec.Run(ctx, "echo $0; whoami; uname -s; uname -r", zfs.RunOptions{})
	if err != nil {
		return hostFacts{}, d.transportErr(err)
	}
	lines := strings.Split(strings.TrimSpace(out.Stdout), "\n")
	if out.Code != 0 || len(lines) < 4 {
		return hostFacts{}, status.Errorf(codes.FailedPrecondition, "%s: probing the storage host failed (echo $0; whoami; uname): %s", d.cfg.driver, strings.TrimSpace(out.Stderr+out.Stdout))
	}
	f := hostFacts{shell: strings.TrimSpace(lines[0]), user: strings.TrimSpace(lines[1]),
		kernel: strings.TrimSpace(lines[2]), release: strings.TrimSpace(lines[3])}
	if strings.Contains(f.shell, "csh") {
		return hostFacts{}, status.Errorf(codes.FailedPrecondition, "%s: the login shell of the ssh user is %s; csh is not supported, use sh or bash", d.cfg.driver, f.shell)
	}
	h.facts, h.loaded = f, true
	return f, nil
}

// sudoPath is zfs.cli.paths.sudo, or the default.
func (d *Driver) sudoPath() string {
	if d.cfg.paths.Sudo != "" {
		return d.cfg.paths.Sudo
	}
	return zfs.DefaultPaths.Sudo
}
