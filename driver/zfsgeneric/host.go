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

// cliMaxZvolName is Platform.MaxZvolName for hosts driven by the zfs
// command line: it depends on the host's kernel.
func (d *Driver) cliMaxZvolName(ctx context.Context) (int, string, error) {
	f, err := d.facts(ctx)
	if err != nil {
		return 0, "", err
	}
	return f.maxZvolName(), f.kernel + " " + f.release, nil
}

// cliSetPermissions applies datasetPermissions{Mode,User,Group,Acls} to a
// new filesystem's mountpoint, in one command (one ssh session).
func (d *Driver) cliSetPermissions(ctx context.Context, mountpoint string, p Permissions) error {
	var steps [][]string
	if p.Mode != "" {
		steps = append(steps, []string{"chmod", p.Mode, mountpoint})
	}
	if p.User != "" || p.Group != "" {
		steps = append(steps, []string{"chown", p.User + ":" + p.Group, mountpoint})
	}
	for _, acl := range p.ACLs {
		// An ACL entry may hold several words ("-m everyone@:full_set:allow"):
		// split on spaces like democratic-csi's command line did, but quote
		// each word so nothing else is interpreted.
		steps = append(steps, append(append([]string{p.ACLBinary}, strings.Fields(acl)...), mountpoint))
	}
	if len(steps) == 0 {
		return nil
	}
	f, err := d.facts(ctx)
	if err != nil {
		return err
	}
	lines := make([]string, len(steps))
	for i, s := range steps {
		if f.user != "root" {
			s = append([]string{d.sudoPath()}, s...)
		}
		lines[i] = zfs.Line(s...)
	}
	out, err := d.exec.Run(ctx, strings.Join(lines, " && "), zfs.RunOptions{})
	if err != nil {
		return d.transportErr(err)
	}
	if out.Code != 0 {
		return status.Errorf(codes.Internal, "%s: setting permissions on %s failed: %s", d.cfg.driver, mountpoint, strings.TrimSpace(out.Stderr+out.Stdout))
	}
	return nil
}
