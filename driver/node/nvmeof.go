package node

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/driver/volumecontext"
)

// NVMeoF is the "nvmeof" attacher. It connects to the subsystem (nqn)
// over every transport of volume_context transport and transports, waits
// for a live path, and finds the namespace by uuid (Infinia) or by nsid:
// the native multipath head when the kernel has native multipath, else the
// one namespace device or the dm-multipath map over several. Unstage
// disconnects the subsystem unless another staged volume of this node uses
// the same nqn.
type NVMeoF struct{}

type nvmeVolume struct {
	nqn, nsid, uuid string
	transports      []nvmeTransport
}

func parseNVMeoF(v *Volume) (nvmeVolume, error) {
	var c volumecontext.NVMeoF
	if err := c.Decode(v.Context); err != nil {
		return nvmeVolume{}, invalidContext(v, err)
	}
	nv := nvmeVolume{nqn: c.NQN, uuid: c.UUID}
	if c.NSID != 0 {
		nv.nsid = strconv.FormatUint(uint64(c.NSID), 10)
	}
	var err error
	if nv.transports, err = nvmeTransports(c.AllTransports()); err != nil { // at least one (Decode)
		return nv, status.Errorf(codes.InvalidArgument, "volume %s: volume_context %v", v.ID, err)
	}
	return nv, nil
}

// nqnOf is the subsystem a volume's context names, even when the context
// is otherwise invalid ("" when it names none).
func nqnOf(vc map[string]string) string {
	var c volumecontext.NVMeoF
	_ = c.Decode(vc) // sets NQN even when another key is wrong
	return c.NQN
}

func (nv nvmeVolume) lockKey() string { return "nvme:" + nv.nqn }

// namespace names the namespace in messages.
func (nv nvmeVolume) namespace() string {
	if nv.uuid != "" {
		return "namespace uuid " + nv.uuid + " of " + nv.nqn
	}
	return "namespace " + nv.nsid + " of " + nv.nqn
}

// Name implements Attacher.
func (NVMeoF) Name() string { return "nvmeof" }

// Validate implements Attacher.
func (NVMeoF) Validate(v *Volume) error {
	if _, err := parseNVMeoF(v); err != nil {
		return err
	}
	return validateBlockVolume(v)
}

// Stage implements Attacher.
func (a NVMeoF) Stage(ctx context.Context, h *Host, v *Volume) error {
	nv, err := parseNVMeoF(v)
	if err != nil {
		return err
	}
	dev, err := a.attach(ctx, h, v, nv)
	if err != nil {
		return err
	}
	return stageDevice(h, v, dev)
}

// The node-stage secret keys that hold the DH-HMAC-CHAP keys (nvme
// connect --dhchap-secret / --dhchap-ctrl-secret), and the StorageClass
// parameter that names the secret.
const (
	SecretDHCHAPHostKey = "dhchapSecret"
	SecretDHCHAPCtrlKey = "dhchapCtrlSecret"                          //nolint:gosec // G101: the name of a secret key, not a secret
	nodeStageSecretName = "csi.storage.k8s.io/node-stage-secret-name" //nolint:gosec // G101: a StorageClass parameter name
)

// nvmeAuth is the DH-HMAC-CHAP keys a node presents; secrets.
type nvmeAuth struct{ hostKey, ctrlKey string }

func (a nvmeAuth) sensitive() []string {
	var s []string
	for _, k := range []string{a.hostKey, a.ctrlKey} {
		if k != "" {
			s = append(s, k)
		}
	}
	return s
}

// args are nvme connect's authentication options.
func (a nvmeAuth) args() []string {
	var args []string
	if a.hostKey != "" {
		args = append(args, "--dhchap-secret="+a.hostKey)
	}
	if a.ctrlKey != "" {
		args = append(args, "--dhchap-ctrl-secret="+a.ctrlKey)
	}
	return args
}

// authOf reads the DH-HMAC-CHAP keys from the node-stage secrets. They are
// passed whenever given; a volume whose context says the target requires
// them (dhchap: required) fails without a host key, naming what to set.
// Errors never quote a key.
func authOf(v *Volume) (nvmeAuth, error) {
	sec := normalizedSecrets(v)
	a := nvmeAuth{hostKey: strings.TrimSpace(sec[SecretDHCHAPHostKey]), ctrlKey: strings.TrimSpace(sec[SecretDHCHAPCtrlKey])}
	required := v.Context[volumecontext.KeyDHCHAP] == volumecontext.DHCHAPRequired
	switch {
	case a.hostKey == "" && required:
		return a, status.Errorf(codes.FailedPrecondition, "volume %s: its NVMe-oF target authenticates hosts with DH-HMAC-CHAP (nvmeof.dhchap), and the node-stage secret has no %s: put the connection's nvmeof.dhchap.hostKey there as %s (and ctrlKey as %s) and name the secret in the StorageClass parameter %s (with its namespace)",
			v.ID, SecretDHCHAPHostKey, SecretDHCHAPHostKey, SecretDHCHAPCtrlKey, nodeStageSecretName)
	case a.ctrlKey != "" && a.hostKey == "":
		return a, status.Errorf(codes.InvalidArgument, "volume %s: node-stage secret %s needs %s: bidirectional authentication is on top of the host's own", v.ID, SecretDHCHAPCtrlKey, SecretDHCHAPHostKey)
	}
	for _, k := range []struct{ name, value string }{{SecretDHCHAPHostKey, a.hostKey}, {SecretDHCHAPCtrlKey, a.ctrlKey}} {
		if k.value != "" && !strings.HasPrefix(k.value, "DHHC-1:") {
			return a, status.Errorf(codes.InvalidArgument, "volume %s: node-stage secret %s is not a DH-HMAC-CHAP key (DHHC-1:<hash>:<base64>:, as nvme gen-dhchap-key prints it)", v.ID, k.name)
		}
	}
	return a, nil
}

func (a NVMeoF) attach(ctx context.Context, h *Host, v *Volume, nv nvmeVolume) (string, error) {
	auth, err := authOf(v)
	if err != nil {
		return "", err
	}
	unlock, err := h.lockTargets(ctx, nv.lockKey())
	if err != nil {
		return "", err
	}
	defer unlock()

	var connected []nvmeTransport
	var errs []error
	for _, t := range nv.transports {
		ensureFabricsModule(ctx, h, t.typ)
	}
	for _, t := range nv.transports {
		rt, err := t.resolved(ctx, h)
		if err == nil {
			err = a.connect(ctx, h, nv.nqn, rt, auth)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", t, err))
			continue
		}
		connected = append(connected, rt)
	}
	if len(connected) == 0 {
		return "", fmt.Errorf("nvme connect to %s failed on every transport: %w", nv.nqn, errors.Join(errs...))
	}
	if len(errs) > 0 {
		h.Log.Warn("nvmeof: some transports failed; the volume runs on the others", "volume", v, "error", errors.Join(errs...))
	}

	var sub *nvmeSubsystem
	err = h.waitFor(ctx, fmt.Sprintf("a live path to NVMe subsystem %s (over %s)", nv.nqn, transportList(connected)), func() (bool, error) {
		sub = h.nvmeSubsystemByNQN(nv.nqn)
		return sub != nil && len(h.liveControllers(sub)) > 0, nil
	})
	if err != nil {
		return "", err
	}

	var devs []string
	rescanned := false
	err = h.waitFor(ctx, nv.namespace(), func() (bool, error) {
		sub = h.nvmeSubsystemByNQN(nv.nqn)
		devs = h.nvmeNamespaces(sub, nv.nsid, nv.uuid)
		if len(devs) == 0 && !rescanned && sub != nil {
			// A connection made before the namespace existed does not
			// show it until the controller rescans.
			rescanned = true
			a.rescan(ctx, h, sub)
		}
		return len(devs) > 0, nil
	})
	if err != nil {
		return "", err
	}
	paths := len(connected)
	if h.nativeNVMeMultipath() {
		paths = 1 // the kernel merges paths into one head device
	}
	dev, err := h.pickDevice(ctx, devs, paths)
	if err != nil {
		return "", fmt.Errorf("%s: %w", nv.namespace(), err)
	}
	return dev, nil
}

// connect runs nvme connect for one path. An existing connection is
// success; failures are retried (a target may still be coming up), except
// a command that timed out.
func (NVMeoF) connect(ctx context.Context, h *Host, nqn string, t nvmeTransport, auth nvmeAuth) error {
	err := h.retry(ctx, func(err error) bool { return !errors.Is(err, context.DeadlineExceeded) }, func() error {
		out, err := h.Exec.Run(ctx, Command{Name: "nvme", Args: append(t.connectArgs(nqn), auth.args()...), Sensitive: auth.sensitive()})
		if err != nil && alreadyConnected(string(out)) {
			return nil
		}
		return err
	})
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("nvme connect to %s at %s timed out: %w", nqn, t, err)
	}
	return err
}

// alreadyConnected recognises nvme-cli's answers for a path that exists
// (EALREADY from /dev/nvme-fabrics).
func alreadyConnected(out string) bool {
	return strings.Contains(out, "already connected") || strings.Contains(out, "Operation already in progress")
}

// rescan asks each live controller of the subsystem to rescan namespaces
// (`nvme ns-rescan` wants the controller's character device).
func (NVMeoF) rescan(ctx context.Context, h *Host, sub *nvmeSubsystem) {
	for _, c := range h.liveControllers(sub) {
		if _, err := h.Exec.Run(ctx, Command{Name: "nvme", Args: []string{"ns-rescan", h.dev(c.name)}}); err != nil {
			h.Log.Warn("nvmeof: namespace rescan failed", "controller", c.name, "error", err)
		}
	}
}

func transportList(ts []nvmeTransport) string {
	s := make([]string, len(ts))
	for i, t := range ts {
		s[i] = t.String()
	}
	return strings.Join(s, ", ")
}

// Unstage implements Attacher: disconnect the subsystem unless another
// volume of this node uses it. A subsystem the node no longer has (the
// target vanished and the kernel gave up) needs nothing.
func (NVMeoF) Unstage(ctx context.Context, h *Host, v *Volume) error {
	nqn := nqnOf(v.Context)
	if nqn == "" {
		return nil // nothing was connected from a context without an nqn
	}
	unlock, err := h.lockTargets(ctx, "nvme:"+nqn)
	if err != nil {
		return err
	}
	defer unlock()
	others, err := h.otherVolumes(v.ID)
	if err != nil {
		return err
	}
	for _, o := range others {
		if volumecontext.AttachDriver(o.Context) == volumecontext.DriverNVMeoF && nqnOf(o.Context) == nqn {
			h.Log.Info("nvmeof: subsystem stays connected: another volume on this node uses it", "nqn", nqn, "other", o.ID, "volume", v)
			return nil
		}
	}
	if h.nvmeSubsystemByNQN(nqn) == nil {
		return nil
	}
	if _, err := h.Exec.Run(ctx, Command{Name: "nvme", Args: []string{"disconnect", "--nqn", nqn}}); err != nil {
		// The controllers may have gone meanwhile (deleted after the
		// controller-loss timeout): then there is nothing left to undo.
		if h.nvmeSubsystemByNQN(nqn) == nil {
			return nil
		}
		return fmt.Errorf("nvme disconnect of %s: %w", nqn, err)
	}
	return nil
}

// findDevice finds a staged volume's namespace device, without connecting.
func (a NVMeoF) findDevice(ctx context.Context, h *Host, v *Volume) (string, *nvmeSubsystem, error) {
	nv, err := parseNVMeoF(v)
	if err != nil {
		return "", nil, err
	}
	sub := h.nvmeSubsystemByNQN(nv.nqn)
	devs := h.nvmeNamespaces(sub, nv.nsid, nv.uuid)
	if len(devs) == 0 {
		return "", nil, status.Errorf(codes.NotFound, "volume %s: %s is not on this node", v.ID, nv.namespace())
	}
	paths := len(devs)
	if h.nativeNVMeMultipath() {
		paths = 1
	}
	dev, err := h.pickDevice(ctx, devs, paths)
	return dev, sub, err
}

// Expand implements Expander: rescan the subsystem's controllers, then grow.
func (a NVMeoF) Expand(ctx context.Context, h *Host, v *Volume, volumePath string, requiredBytes int64) (int64, error) {
	dev, sub, err := a.findDevice(ctx, h, v)
	if err != nil {
		return 0, err
	}
	rescanned := false
	return expandDevice(ctx, h, v, dev, volumePath, requiredBytes, func(ctx context.Context, _ string) error {
		if !rescanned && sub != nil {
			rescanned = true // one rescan per controller covers every path
			for _, c := range h.liveControllers(sub) {
				if _, err := h.Exec.Run(ctx, Command{Name: "nvme", Args: []string{"ns-rescan", h.dev(c.name)}}); err != nil {
					return fmt.Errorf("nvme ns-rescan %s: %w", c.name, err)
				}
			}
		}
		return nil
	})
}

// ensureFabricsModule loads the host driver of a transport (nvme-tcp,
// nvme-rdma, nvme-fc) when it is a module that is not loaded yet: without
// it nvme connect has no /dev/nvme-fabrics and fails with a puzzling
// "Failed to scan topology". A failure is only logged; the connect that
// follows then says what is wrong.
func ensureFabricsModule(ctx context.Context, h *Host, typ string) {
	mod := "nvme_" + typ
	if _, err := os.Stat(h.sys("module", mod)); err == nil {
		return
	}
	if _, err := h.Exec.Run(ctx, Command{Name: "modprobe", Args: []string{strings.ReplaceAll(mod, "_", "-")}}); err != nil {
		h.Log.Warn("nvmeof: loading the transport module failed; nvme connect needs it", "module", mod, "error", err)
	}
}
