package node

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	mount "k8s.io/mount-utils"
)

// hostEnv is where the node's trees are and how attachers wait and retry.
// The defaults are the real node; unit tests use temporary trees and
// short intervals.
type hostEnv struct {
	sysRoot string // "/sys"
	devRoot string // "/dev"
	// tempDir holds short-lived private files (SMB credentials); "" → os.TempDir().
	tempDir string
	// poll is the interval between checks while waiting for a device, a
	// live path or a multipath map to appear; wait bounds that wait.
	poll, wait time.Duration
	// attempts and retryDelay bound retried commands (iSCSI login, NVMe
	// connect, node record updates).
	attempts   int
	retryDelay time.Duration
	// resolve turns a host name into addresses (net.DefaultResolver).
	resolve func(ctx context.Context, host string) ([]string, error)
	// attachLimit bounds a started attach that goes on after its request
	// ended (see attachFlights).
	attachLimit time.Duration
}

func defaultHostEnv() hostEnv {
	return hostEnv{
		sysRoot:     "/sys",
		devRoot:     "/dev",
		poll:        250 * time.Millisecond,
		wait:        30 * time.Second,
		attempts:    5,
		retryDelay:  2 * time.Second,
		resolve:     net.DefaultResolver.LookupHost,
		attachLimit: DefaultAttachLimit,
	}
}

// newHost is the Host of a Service.
func newHost(ex *Exec, mounter mount.Interface, log *slog.Logger) *Host {
	return &Host{
		Exec:    ex,
		Mounter: &mount.SafeFormatAndMount{Interface: mounter, Exec: ex},
		Log:     log,
		env:     defaultHostEnv(),
	}
}

// environ returns the host's environment with defaults for unset fields,
// so a Host built by hand (as other packages' tests may) still works.
func (h *Host) environ() hostEnv {
	e, d := h.env, defaultHostEnv()
	if e.sysRoot == "" {
		e.sysRoot = d.sysRoot
	}
	if e.devRoot == "" {
		e.devRoot = d.devRoot
	}
	if e.poll <= 0 {
		e.poll = d.poll
	}
	if e.wait <= 0 {
		e.wait = d.wait
	}
	if e.attempts <= 0 {
		e.attempts = d.attempts
	}
	if e.retryDelay < 0 {
		e.retryDelay = 0
	}
	if e.resolve == nil {
		e.resolve = d.resolve
	}
	if e.attachLimit <= 0 {
		e.attachLimit = d.attachLimit
	}
	return e
}

// sys and dev join a path under the sysfs and device roots.
func (h *Host) sys(parts ...string) string {
	return filepath.Join(append([]string{h.environ().sysRoot}, parts...)...)
}

func (h *Host) dev(parts ...string) string {
	return filepath.Join(append([]string{h.environ().devRoot}, parts...)...)
}

// readSys reads a small sysfs attribute, trimmed; "" when it is missing.
func readSys(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// waitFor polls check until it reports done, an error, or the host's wait
// time passes; what names the awaited thing in the timeout error.
func (h *Host) waitFor(ctx context.Context, what string, check func() (bool, error)) error {
	env := h.environ()
	deadline := time.Now().Add(env.wait)
	tick := time.NewTicker(env.poll)
	defer tick.Stop()
	for {
		done, err := check()
		if err != nil || done {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("timed out after %v waiting for %s", env.wait, what)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w", what, ctx.Err())
		case <-tick.C:
		}
	}
}

// retry runs fn up to the host's attempt count while it fails and
// retryable(err) holds, pausing between attempts. It returns the last error.
func (h *Host) retry(ctx context.Context, retryable func(error) bool, fn func() error) error {
	env := h.environ()
	var err error
	for i := range env.attempts {
		if i > 0 {
			select {
			case <-ctx.Done():
				return fmt.Errorf("%w (gave up: %v)", err, ctx.Err())
			case <-time.After(env.retryDelay):
			}
		}
		if err = fn(); err == nil || !retryable(err) {
			return err
		}
	}
	return err
}

// lockTargets serialises work on shared connections (see Host.targets).
func (h *Host) lockTargets(ctx context.Context, keys ...string) (func(), error) {
	unlock, err := h.targets.Lock(ctx, keys...)
	if err != nil {
		return nil, fmt.Errorf("waiting for another volume's attach or detach of %s: %w", strings.Join(keys, ", "), err)
	}
	return unlock, nil
}

// otherVolumes lists the node's other volumes (see Host.Volumes).
func (h *Host) otherVolumes(id string) ([]*Volume, error) {
	if h.Volumes == nil {
		return nil, nil
	}
	all, err := h.Volumes()
	if err != nil {
		return nil, fmt.Errorf("list this node's other volumes: %w", err)
	}
	out := all[:0:0]
	for _, v := range all {
		if v.ID != id {
			out = append(out, v)
		}
	}
	return out, nil
}

// resolveHost turns a host name into an IP address (IPv4 preferred); an
// IP literal is returned as it is. The kernel keeps NVMe-oF and iSCSI
// addresses as IPs, so matching sysfs and udev names needs the IP.
func (h *Host) resolveHost(ctx context.Context, host string) (string, error) {
	if net.ParseIP(host) != nil {
		return host, nil
	}
	addrs, err := h.environ().resolve(ctx, host)
	if err != nil {
		return "", fmt.Errorf("resolve %s: %w", host, err)
	}
	for _, a := range addrs {
		if ip := net.ParseIP(a); ip != nil && ip.To4() != nil {
			return a, nil
		}
	}
	if len(addrs) == 0 {
		return "", fmt.Errorf("resolve %s: no addresses", host)
	}
	return addrs[0], nil
}
