package node

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"net"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/driver/volumecontext"
)

// ISCSI is the "iscsi" attacher. Per portal (volume_context portal and
// portals) it creates the initiator's node record, sets node.startup to
// manual and the CHAP settings from the secrets, logs in and rescans; the
// volume is the LUN's /dev/disk/by-path device, or the multipath map over
// the devices of several portals. Unstage logs out and deletes the node
// records, unless another staged volume of this node uses the target.
type ISCSI struct{}

// DefaultISCSIPort is added to a portal without a port.
const DefaultISCSIPort = "3260"

// iscsiadm exit statuses (open-iscsi iscsi_err.h).
const (
	iscsiErrIDBM       = 6  // node database failure: retried
	iscsiErrSessExists = 15 // already logged in
	iscsiErrNoObjs     = 21 // no such record or session
	iscsiErrAuthFailed = 24 // login refused: retrying cannot help
)

// SecretNodeDBPrefix marks secrets that are node record settings
// ("node-db.node.session.auth.password" sets node.session.auth.password),
// as in democratic-csi.
const SecretNodeDBPrefix = "node-db."

var nodeDBName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_.\[\]]+$`) }) // compiled on first use

type iscsiTarget struct {
	iqn, lun, iface string
	portals         []string // host:port, IPv6 in brackets
}

func parseISCSI(v *Volume) (iscsiTarget, error) {
	var c volumecontext.ISCSI
	if err := c.Decode(v.Context); err != nil {
		return iscsiTarget{}, invalidContext(v, err)
	}
	t := iscsiTarget{iface: c.Interface, iqn: c.IQN, lun: strconv.Itoa(c.LUN)}
	for _, p := range c.AllPortals() { // at least one (Decode)
		np, err := normalizePortal(p)
		if err != nil {
			return t, status.Errorf(codes.InvalidArgument, "volume %s: volume_context portal %q: %v", v.ID, p, err)
		}
		if !slices.Contains(t.portals, np) {
			t.portals = append(t.portals, np)
		}
	}
	return t, nil
}

// normalizePortal writes a portal as host:port (default port 3260, IPv6
// in brackets).
func normalizePortal(p string) (string, error) {
	host, port := p, DefaultISCSIPort
	switch {
	case strings.HasPrefix(p, "["):
		end := strings.Index(p, "]")
		if end < 0 {
			return "", errors.New("unclosed [")
		}
		host = p[1:end]
		if rest := p[end+1:]; rest != "" {
			if !strings.HasPrefix(rest, ":") {
				return "", errors.New("expected :port after ]")
			}
			port = rest[1:]
		}
	case strings.Count(p, ":") == 1:
		host, port, _ = strings.Cut(p, ":")
	}
	if host == "" {
		return "", errors.New("no host")
	}
	if n, err := strconv.Atoi(port); err != nil || n <= 0 || n > 65535 {
		return "", fmt.Errorf("bad port %q", port)
	}
	return net.JoinHostPort(host, port), nil
}

// resolvePortal replaces a portal's host name by its address: sessions
// and by-path links name the address.
func (h *Host) resolvePortal(ctx context.Context, portal string) (string, error) {
	host, port, _ := net.SplitHostPort(portal)
	ip, err := h.resolveHost(ctx, host)
	if err != nil {
		return "", err
	}
	return net.JoinHostPort(ip, port), nil
}

// byPath is udev's link for a LUN behind a portal (path_id writes IPv6
// addresses without brackets).
func (t iscsiTarget) byPath(h *Host, portal string) string {
	host, port, _ := net.SplitHostPort(portal)
	return h.dev("disk", "by-path", "ip-"+host+":"+port+"-iscsi-"+t.iqn+"-lun-"+t.lun)
}

func (t iscsiTarget) lockKey(portal string) string { return "iscsi:" + t.iqn + "@" + portal }

// Name implements Attacher.
func (ISCSI) Name() string { return "iscsi" }

// Validate implements Attacher.
func (ISCSI) Validate(v *Volume) error {
	if _, err := parseISCSI(v); err != nil {
		return err
	}
	for k := range normalizedSecrets(v) {
		if name, ok := strings.CutPrefix(k, SecretNodeDBPrefix); ok && !nodeDBName().MatchString(name) {
			return status.Errorf(codes.InvalidArgument, "volume %s: secret %q does not name an iSCSI node setting", v.ID, k)
		}
	}
	return validateBlockVolume(v)
}

// Stage implements Attacher.
func (a ISCSI) Stage(ctx context.Context, h *Host, v *Volume) error {
	t, err := parseISCSI(v)
	if err != nil {
		return err
	}
	portals, err := a.resolve(ctx, h, t)
	if err != nil {
		return err
	}
	what := fmt.Sprintf("volume %s: iscsi attach of %s lun %s", v.ID, t.iqn, t.lun)
	dev, err := h.attaches.join(ctx, h, flightKey(v, t, portals), what, func(ctx context.Context) (string, error) {
		return a.attach(ctx, h, v, t, portals)
	})
	if err != nil {
		return err
	}
	return stageDevice(h, v, dev)
}

// flightKey names one attach: the volume, its target and the settings
// (a retry with other credentials does not join the earlier attach; the
// settings enter as a digest, so no secret sits in a key).
func flightKey(v *Volume, t iscsiTarget, portals []string) string {
	d := sha256.New()
	for _, s := range nodeSettings(v) {
		fmt.Fprintf(d, "%s\x00%s\x00", s.name, s.value)
	}
	return flightPrefix(v.ID) + t.iqn + "\x00" + t.lun + "\x00" + t.iface + "\x00" + strings.Join(portals, ",") + "\x00" + hex.EncodeToString(d.Sum(nil))
}

func flightPrefix(volumeID string) string { return "iscsi\x00" + volumeID + "\x00" }

func (ISCSI) resolve(ctx context.Context, h *Host, t iscsiTarget) ([]string, error) {
	out := make([]string, 0, len(t.portals))
	for _, p := range t.portals {
		rp, err := h.resolvePortal(ctx, p)
		if err != nil {
			return nil, fmt.Errorf("iscsi portal %s: %w", p, err)
		}
		out = append(out, rp)
	}
	return out, nil
}

// attach logs in through every portal and returns the volume's device.
// A portal that fails is reported but does not fail the stage while
// another portal gives the device (a degraded multipath volume still works).
func (a ISCSI) attach(ctx context.Context, h *Host, v *Volume, t iscsiTarget, portals []string) (string, error) {
	keys := make([]string, len(portals))
	for i, p := range portals {
		keys[i] = t.lockKey(p)
	}
	unlock, err := h.lockTargets(ctx, keys...)
	if err != nil {
		return "", err
	}
	defer unlock()

	settings := nodeSettings(v)
	var devs []string
	var errs []error
	for _, p := range portals {
		dev, err := a.login(ctx, h, t, p, settings, v.Retry)
		if err != nil {
			errs = append(errs, fmt.Errorf("portal %s: %w", p, err))
			continue
		}
		devs = append(devs, dev)
	}
	if len(devs) == 0 {
		return "", fmt.Errorf("iscsi target %s lun %s: no portal gave a device: %w", t.iqn, t.lun, errors.Join(errs...))
	}
	if len(errs) > 0 {
		h.Log.Warn("iscsi: some portals failed; the volume runs on the others", "volume", v, "error", errors.Join(errs...))
	}
	dev, err := h.pickDevice(ctx, devs, len(portals))
	if err != nil {
		return "", fmt.Errorf("iscsi target %s lun %s: %w", t.iqn, t.lun, err)
	}
	return dev, nil
}

// nodeSetting is one node record setting; secret ones never reach logs.
type nodeSetting struct {
	name, value string
	secret      bool
}

// nodeSettings are the node record settings to apply: node.startup manual
// (so the initiator never logs in at boot, before the node plugin decides),
// then the node-db.* secrets (CHAP) in name order.
func nodeSettings(v *Volume) []nodeSetting {
	settings := []nodeSetting{{name: "node.startup", value: "manual"}}
	sec := normalizedSecrets(v)
	for _, k := range slices.Sorted(maps.Keys(sec)) {
		if name, ok := strings.CutPrefix(k, SecretNodeDBPrefix); ok {
			// The method (CHAP or None) is no secret; names and passwords are.
			settings = append(settings, nodeSetting{name: name, value: sec[k], secret: !strings.HasSuffix(name, ".authmethod")})
		}
	}
	return settings
}

func (t iscsiTarget) node(portal string, op ...string) []string {
	args := []string{"-m", "node", "-T", t.iqn, "-p", portal}
	if t.iface != "" {
		args = append(args, "-I", t.iface)
	}
	return append(args, op...)
}

// iscsiadm runs iscsiadm, retrying while retryable(exit status) holds,
// and treats the exit statuses in ok as success.
func iscsiadm(ctx context.Context, h *Host, args, sensitive []string, retryable func(code int) bool, ok ...int) error {
	return h.retry(ctx, func(err error) bool {
		code, isExit := ExitCode(err)
		return isExit && retryable(code)
	}, func() error {
		_, err := h.Exec.Run(ctx, Command{Name: "iscsiadm", Args: args, Sensitive: sensitive})
		if code, isExit := ExitCode(err); isExit && slices.Contains(ok, code) {
			return nil
		}
		return err
	})
}

// onDBFailure retries node database failures (a concurrent iscsiadm
// holding the database), as open-iscsi's users do.
func onDBFailure(code int) bool { return code == iscsiErrIDBM }

// unlessAuth retries a failed login unless the target refused the
// credentials: the target may still be starting, a path may be flapping.
func unlessAuth(code int) bool { return code != iscsiErrAuthFailed }

// login makes one portal's session and returns the LUN's device. On a
// retry it reads the node record first and leaves out what already holds:
// each iscsiadm call costs seconds on a loaded node.
func (ISCSI) login(ctx context.Context, h *Host, t iscsiTarget, portal string, settings []nodeSetting, retry bool) (string, error) {
	var rec map[string]string // nil: no record known, make it
	if retry {
		r, found, err := t.readRecord(ctx, h, portal, settings)
		switch {
		case err != nil:
			h.Log.Warn("iscsi: reading the node record failed; writing it anew", "iqn", t.iqn, "portal", portal, "error", err)
		case found:
			rec = r
		}
	}
	if rec == nil {
		// "-o new" over a record that a session uses reports the session.
		if err := iscsiadm(ctx, h, t.node(portal, "-o", "new"), nil, onDBFailure, iscsiErrSessExists); err != nil {
			return "", err
		}
	}
	var sensitive []string
	for _, s := range settings {
		var sens []string
		if s.secret {
			sens = []string{s.value}
			sensitive = append(sensitive, s.value)
		}
		if v, ok := rec[s.name]; ok && v == s.value {
			continue
		}
		if err := iscsiadm(ctx, h, t.node(portal, "-o", "update", "-n", s.name, "-v", s.value), sens, onDBFailure); err != nil {
			return "", err
		}
	}
	if err := iscsiadm(ctx, h, t.node(portal, "-l"), sensitive, unlessAuth, iscsiErrSessExists); err != nil {
		return "", fmt.Errorf("login: %w", err)
	}
	// A session that existed before may not show a LUN added since.
	if err := iscsiadm(ctx, h, t.node(portal, "-R"), nil, onDBFailure); err != nil {
		h.Log.Warn("iscsi: session rescan failed", "iqn", t.iqn, "portal", portal, "error", err)
	}
	dev, err := h.waitDevice(ctx, t.byPath(h, portal))
	if err != nil {
		return "", fmt.Errorf("logged in, but: %w", err)
	}
	return dev, nil
}

// readRecord reads a portal's node record ("-o show"), name → value;
// found is false when there is none. With secret settings to compare it
// asks for the CHAP values too (-S), so they are redacted as sensitive.
func (t iscsiTarget) readRecord(ctx context.Context, h *Host, portal string, settings []nodeSetting) (map[string]string, bool, error) {
	op := []string{"-o", "show"}
	var sens []string
	for _, s := range settings {
		if s.secret {
			sens = append(sens, s.value)
		}
	}
	if len(sens) > 0 {
		op = append(op, "-S")
	}
	var out []byte
	err := h.retry(ctx, func(err error) bool {
		code, isExit := ExitCode(err)
		return isExit && code == iscsiErrIDBM
	}, func() error {
		var err error
		out, err = h.Exec.Run(ctx, Command{Name: "iscsiadm", Args: t.node(portal, op...), Sensitive: sens})
		return err
	})
	if code, isExit := ExitCode(err); isExit && code == iscsiErrNoObjs {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	rec := map[string]string{}
	for _, line := range strings.Split(string(out), "\n") {
		name, value, ok := strings.Cut(line, " = ")
		if !ok || strings.HasPrefix(line, "#") {
			continue
		}
		if value = strings.TrimSpace(value); value == "<empty>" {
			value = ""
		}
		rec[strings.TrimSpace(name)] = value
	}
	return rec, true, nil
}

// Unstage implements Attacher: per portal, log out and delete the node
// record unless another volume of this node uses the target there. A
// target that is gone still lets its session and record be removed.
func (a ISCSI) Unstage(ctx context.Context, h *Host, v *Volume) error {
	t, err := parseISCSI(v)
	if err != nil {
		return nil // nothing was attached from a context this broken
	}
	portals := make([]string, 0, len(t.portals))
	for _, p := range t.portals {
		if rp, err := h.resolvePortal(ctx, p); err == nil {
			p = rp
		}
		portals = append(portals, p)
	}
	keys := make([]string, len(portals))
	for i, p := range portals {
		keys[i] = t.lockKey(p)
	}
	unlock, err := h.lockTargets(ctx, keys...)
	if err != nil {
		return err
	}
	defer unlock()
	h.attaches.forget(flightPrefix(v.ID)) // a device of an earlier attach is gone with this
	inUse, err := a.portalsInUse(ctx, h, v.ID, t.iqn)
	if err != nil {
		return err
	}
	for _, p := range portals {
		if inUse[p] {
			h.Log.Info("iscsi: target stays logged in: another volume on this node uses it", "iqn", t.iqn, "portal", p, "volume", v)
			continue
		}
		if err := iscsiadm(ctx, h, t.node(p, "-u"), nil, onDBFailure, iscsiErrNoObjs); err != nil {
			return fmt.Errorf("iscsi logout of %s at %s: %w", t.iqn, p, err)
		}
		if err := iscsiadm(ctx, h, t.node(p, "-o", "delete"), nil, onDBFailure, iscsiErrNoObjs); err != nil {
			return fmt.Errorf("iscsi: delete node record of %s at %s: %w", t.iqn, p, err)
		}
	}
	return nil
}

// portalsInUse are the (resolved) portals through which the node's other
// volumes use target iqn.
func (ISCSI) portalsInUse(ctx context.Context, h *Host, id, iqn string) (map[string]bool, error) {
	others, err := h.otherVolumes(id)
	if err != nil {
		return nil, err
	}
	in := map[string]bool{}
	for _, o := range others {
		if volumecontext.AttachDriver(o.Context) != volumecontext.DriverISCSI {
			continue
		}
		ot, err := parseISCSI(o)
		if err != nil || ot.iqn != iqn {
			continue
		}
		for _, p := range ot.portals {
			in[p] = true
			if rp, err := h.resolvePortal(ctx, p); err == nil {
				in[rp] = true
			}
		}
	}
	return in, nil
}

// findDevice finds a staged volume's device again, without logging in.
func (ISCSI) findDevice(ctx context.Context, h *Host, v *Volume) (string, error) {
	t, err := parseISCSI(v)
	if err != nil {
		return "", err
	}
	var devs []string
	for _, p := range t.portals {
		if rp, err := h.resolvePortal(ctx, p); err == nil {
			p = rp
		}
		if link := t.byPath(h, p); exists(link) {
			devs = append(devs, resolved(link))
		}
	}
	if len(devs) == 0 {
		return "", status.Errorf(codes.NotFound, "volume %s: no device of iscsi target %s lun %s on this node", v.ID, t.iqn, t.lun)
	}
	return h.pickDevice(ctx, devs, len(t.portals))
}

// Expand implements Expander: rescan each SCSI path, then grow.
func (a ISCSI) Expand(ctx context.Context, h *Host, v *Volume, volumePath string, requiredBytes int64) (int64, error) {
	dev, err := a.findDevice(ctx, h, v)
	if err != nil {
		return 0, err
	}
	return expandDevice(ctx, h, v, dev, volumePath, requiredBytes, func(_ context.Context, name string) error {
		return h.rescanSCSI(name)
	})
}
