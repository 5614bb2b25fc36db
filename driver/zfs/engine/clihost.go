package engine

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/driver/backend"
	"github.com/switchyard-csi/switchyard/driver/zfs"
)

// CLIHost is a storage host driven by the zfs command line, over SSH or
// locally: its datasets, the facts learnt about it once (login shell,
// user, kernel) and the commands that depend on them. It provides every
// Platform method but Sharer and MinQuota; the backends that use it
// (zfs-generic-*, freenas-* over SSH) embed it in their Platform.
type CLIHost struct {
	driver string
	cfg    CLIConfig
	exec   zfs.Executor
	zfs    *zfs.CLI
	host   hostInfo
}

// NewCLIHost prepares the connection to the host of a backend named
// driver. Nothing is contacted until the first command.
func NewCLIHost(opts backend.Options, driver string, c CLIConfig) (*CLIHost, error) {
	log := Logger(opts, driver)
	var exec zfs.Executor
	if c.SSH != nil {
		// One connection per host and login for the whole process: a
		// rebuilt driver (its connection file changed) and other
		// connection files naming the same host share it and its
		// session limit.
		ssh, err := zfs.SharedSSH(*c.SSH, log)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", opts.File, err)
		}
		exec = ssh
	} else {
		exec = zfs.NewLocal("", log)
	}
	h := &CLIHost{driver: driver, cfg: c, exec: exec}
	h.zfs = &zfs.CLI{Exec: exec, Paths: c.Paths, Sudo: c.Sudo}
	if c.SSH != nil {
		h.zfs.Exec = shellChecked{h}
	}
	return h, nil
}

// shellChecked runs the zfs command line's commands once the host has been
// probed (facts, one exec per host for the driver's life): the commands and
// one-exec programs are quoted for a POSIX shell, so a login shell that is
// not one is refused, naming it, before anything is sent to it.
type shellChecked struct{ h *CLIHost }

func (s shellChecked) Run(ctx context.Context, line string, o zfs.RunOptions) (zfs.Output, error) {
	if _, err := s.h.facts(ctx); err != nil {
		return zfs.Output{Code: -1}, err
	}
	return s.h.exec.Run(ctx, line, o)
}

func (s shellChecked) Close() error { return s.h.exec.Close() }

// Datasets runs zfs on the host.
func (h *CLIHost) Datasets() zfs.Datasets { return h.zfs }

// Close closes the connection to the host.
func (h *CLIHost) Close() error { return h.exec.Close() }

// Run runs one command line on the host. A command that could not be run
// is a gRPC status (credentials: FAILED_PRECONDITION, an unreachable host
// or a dropped connection: UNAVAILABLE); its exit code is in the Output.
func (h *CLIHost) Run(ctx context.Context, line string, o zfs.RunOptions) (zfs.Output, error) {
	out, err := h.exec.Run(ctx, line, o)
	if err != nil {
		return out, transportErr(h.driver, err)
	}
	return out, nil
}

// SudoPath is zfs.cli.paths.sudo, or the default.
func (h *CLIHost) SudoPath() string {
	if h.cfg.Paths.Sudo != "" {
		return h.cfg.Paths.Sudo
	}
	return zfs.DefaultPaths.Sudo
}

// hostInfo is what is learnt about the storage host once: its login
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
// session) and caching the answer for the host's life.
func (h *CLIHost) facts(ctx context.Context) (hostFacts, error) {
	info := &h.host
	info.mu.Lock()
	defer info.mu.Unlock()
	if info.loaded {
		return info.facts, nil
	}
	// $0 is expanded by the host's shell on purpose: democratic-csi refuses
	// csh, whose quoting rules differ from sh's.
	out, err := h.Run(ctx, "echo $0; whoami; uname -s; uname -r", zfs.RunOptions{})
	if err != nil {
		return hostFacts{}, err
	}
	lines := strings.Split(strings.TrimSpace(out.Stdout), "\n")
	if out.Code != 0 || len(lines) < 4 {
		// A failed probe is not proof of a wrong shell: a busy or
		// restarting host fails it too, and FAILED_PRECONDITION would make
		// the sidecars give up on a DeleteVolume for good (the soak leaked
		// volumes that way). UNAVAILABLE is retried; nothing is cached, so
		// the next call probes again, and the message still names the
		// setting for the case where it never passes (fish, nushell and
		// the like fail on "$0" itself).
		return hostFacts{}, status.Errorf(codes.Unavailable, "%s: probing the storage host failed (echo $0; whoami; uname): %s; if this persists, the login shell of the ssh user (sshConnection.username) must be a POSIX shell such as sh or bash: set it on the host with chsh -s /bin/sh", h.driver, strings.TrimSpace(out.Stderr+out.Stdout))
	}
	f := hostFacts{shell: strings.TrimSpace(lines[0]), user: strings.TrimSpace(lines[1]),
		kernel: strings.TrimSpace(lines[2]), release: strings.TrimSpace(lines[3])}
	if notPOSIX(f.shell) {
		return hostFacts{}, status.Errorf(codes.FailedPrecondition, "%s: the login shell of the ssh user %s (sshConnection.username) is %s, which is not a POSIX shell: the driver's programs need sh, bash, dash, ksh or zsh; set it on the host with chsh -s /bin/sh %s", h.driver, f.user, f.shell, f.user)
	}
	info.facts, info.loaded = f, true
	return f, nil
}

// notPOSIX reports a login shell ($0, maybe "-csh" or a path) whose syntax
// is not sh's: the driver's quoting and compound programs would mean
// something else there.
func notPOSIX(shell string) bool {
	name := strings.TrimPrefix(shell[strings.LastIndexByte(shell, '/')+1:], "-")
	switch name {
	case "csh", "tcsh", "fish", "nu", "xonsh", "elvish", "pwsh", "powershell", "rc", "es":
		return true
	}
	return false
}

// MaxZvolName is Platform.MaxZvolName: it depends on the host's kernel.
func (h *CLIHost) MaxZvolName(ctx context.Context) (int, string, error) {
	f, err := h.facts(ctx)
	if err != nil {
		return 0, "", err
	}
	return f.maxZvolName(), f.kernel + " " + f.release, nil
}

// SetPermissions is Platform.SetPermissions: it applies
// datasetPermissions{Mode,User,Group,Acls} to a new filesystem's
// mountpoint, in one command (one ssh session), with sudo unless the
// host's user is root.
func (h *CLIHost) SetPermissions(ctx context.Context, mountpoint string, p Permissions) error {
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
	f, err := h.facts(ctx)
	if err != nil {
		return err
	}
	lines := make([]string, len(steps))
	for i, s := range steps {
		if f.user != "root" {
			s = append([]string{h.SudoPath()}, s...)
		}
		lines[i] = zfs.Line(s...)
	}
	out, err := h.Run(ctx, strings.Join(lines, " && "), zfs.RunOptions{})
	if err != nil {
		return err
	}
	if out.Code != 0 {
		return status.Errorf(codes.Internal, "%s: setting permissions on %s failed: %s", h.driver, mountpoint, strings.TrimSpace(out.Stderr+out.Stdout))
	}
	return nil
}
