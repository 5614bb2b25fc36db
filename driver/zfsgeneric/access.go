package zfsgeneric

import (
	"context"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/driver/zfs"
	"github.com/switchyard-csi/switchyard/driver/zfs/engine"
)

// Host access (iscsi.hostAccess / nvmeof.hostAccess: allowList): targets
// are made closed (generate_node_acls=0, allow_any_host=0) and
// ControllerPublishVolume adds the node's initiator to the target's
// allow-list: a node ACL under the TPG for LIO, a host linked into the
// subsystem's allowed_hosts for nvmet. Deleting the target or subsystem
// (DeleteVolume) takes its allow-list with it.

var (
	_ engine.HostAccess = iscsiShare{}
	_ engine.HostAccess = nvmeofShare{}
)

func (s iscsiShare) Initiator() engine.Initiator  { return s.d.cfg.share.hostAccess }
func (s nvmeofShare) Initiator() engine.Initiator { return s.d.cfg.share.hostAccess }

// script joins configshell lines.
func script(lines ...string) string { return strings.Join(lines, "\n") + "\n" }

// complaints are the lines of configshell output that report a failure,
// except those that mean the object is there already (or gone already,
// when gone is true).
func complaints(out zfs.Output, exists, gone bool) []string {
	var bad []string
	for _, l := range strings.Split(out.Stdout+"\n"+out.Stderr, "\n") {
		l = strings.TrimSpace(l)
		low := strings.ToLower(l)
		switch {
		case l == "":
		case exists && (strings.Contains(low, "already exists") || strings.Contains(low, "file exists")):
		case gone && notThere(zfs.Output{Stdout: l}):
		case looksLikeError(zfs.Output{Stdout: l}):
			bad = append(bad, l)
		}
	}
	return bad
}

// listed are the names under one configshell node as `ls <path> 1`
// prints them ("o- <name> .... [summary]"), the node itself left out.
func listed(out zfs.Output, prefixes ...string) []string {
	var names []string
	for i, l := range strings.Split(out.Stdout, "\n") {
		_, rest, ok := strings.Cut(l, "o- ")
		if !ok || i == 0 && !strings.HasPrefix(strings.TrimSpace(l), "o- ") {
			continue
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			continue
		}
		for _, p := range prefixes {
			if strings.HasPrefix(f[0], p) {
				names = append(names, f[0])
			}
		}
	}
	return names
}

func (s iscsiShare) targetIQN(dataset string, props zfs.Properties) string {
	return s.d.cfg.share.basename + ":" + s.d.storedAsset(dataset, props, propISCSIAssets)
}

// Grant creates the initiator's node ACL on the target's TPG with LUN 0
// mapped (add_mapped_luns=true, whatever the host's targetcli
// preferences) and, with iscsi.shareStrategyTargetCli.tpg.auth, the same
// CHAP credentials: with ACLs, LIO checks CHAP per ACL, not per TPG.
func (s iscsiShare) Grant(ctx context.Context, dataset string, props zfs.Properties, initiator string) error {
	d := s.d
	iqn := s.targetIQN(dataset, props)
	acls := "/iscsi/" + iqn + "/tpg1/acls"
	// Every line names its path: a line after a failed cd would run
	// somewhere else.
	lines := []string{acls + " create wwn=" + initiator + " add_mapped_luns=true"}
	var secrets []string
	if len(d.cfg.share.tpgAuth) > 0 {
		for _, a := range d.cfg.share.tpgAuth {
			lines = append(lines, acls+"/"+initiator+" set auth "+a.Key+"="+a.Value)
			if strings.Contains(a.Key, "password") {
				secrets = append(secrets, a.Value)
			}
		}
	}
	out, err := d.runCLI(ctx, []string{"targetcli"}, script(lines...), secrets)
	if err != nil {
		return err
	}
	if bad := complaints(out, true, false); out.Code != 0 || len(bad) > 0 {
		if strings.Contains(strings.ToLower(strings.Join(bad, " ")), "no such path") {
			return status.Errorf(codes.NotFound, "%s: iSCSI target %s of %s does not exist on the host (recreate the volume's target, or delete the volume)", d.cfg.driver, iqn, dataset)
		}
		return cliFailed(d, "allowing initiator "+initiator+" on iSCSI target "+iqn+" with targetcli", out, secrets)
	}
	return nil
}

// Revoke deletes the initiator's node ACL (every ACL when initiator is
// ""); an ACL or target that is gone already is fine.
func (s iscsiShare) Revoke(ctx context.Context, dataset string, props zfs.Properties, initiator string) error {
	d := s.d
	iqn := s.targetIQN(dataset, props)
	acls := "/iscsi/" + iqn + "/tpg1/acls"
	who := []string{initiator}
	if initiator == "" {
		out, err := d.runCLI(ctx, []string{"targetcli"}, script("ls "+acls+" 1"), nil)
		if err != nil {
			return err
		}
		if notThere(out) {
			return nil
		}
		who = listed(out, "iqn.", "eui.", "naa.")
	}
	if len(who) == 0 {
		return nil
	}
	var lines []string
	for _, w := range who {
		lines = append(lines, acls+" delete "+w)
	}
	out, err := d.runCLI(ctx, []string{"targetcli"}, script(lines...), nil)
	if err != nil {
		return err
	}
	if bad := complaints(out, false, true); out.Code != 0 && !notThere(out) || len(bad) > 0 {
		return cliFailed(d, "withdrawing "+strings.Join(who, ", ")+" from iSCSI target "+iqn+" with targetcli", out, nil)
	}
	return nil
}

func (s nvmeofShare) subsystemNQN(dataset string, props zfs.Properties) string {
	return s.d.cfg.share.basename + ":" + s.d.storedAsset(dataset, props, propNVMeoFAssets)
}

// Grant makes the host known to nvmet (/hosts/<nqn>, shared by every
// subsystem) and links it into the subsystem's allowed_hosts, then saves
// the config so the grant survives a reboot of the storage host.
func (s nvmeofShare) Grant(ctx context.Context, dataset string, props zfs.Properties, host string) error {
	d := s.d
	if err := s.ready(ctx); err != nil {
		return err
	}
	nqn := s.subsystemNQN(dataset, props)
	lines := []string{"/hosts create " + host}
	if dh := d.cfg.share.dhchap; dh.On() {
		// The keys go on the host before it is linked: a link first
		// would let the host in unauthenticated meanwhile.
		out, err := d.runCLI(ctx, s.cli(), script(lines...), nil)
		if err != nil {
			return err
		}
		if bad := complaints(out, true, false); out.Code != 0 || len(bad) > 0 {
			return cliFailed(d, "adding NVMe host "+host+" with nvmetcli", out, nil)
		}
		if err := s.setKeys(ctx, host, dh); err != nil {
			return err
		}
		lines = nil
	}
	lines = append(lines, "/subsystems/"+nqn+"/allowed_hosts create "+host, s.saveLine())
	out, err := d.runCLI(ctx, s.cli(), script(lines...), nil)
	if err != nil {
		return err
	}
	if bad := complaints(out, true, false); out.Code != 0 || len(bad) > 0 {
		joined := strings.ToLower(strings.Join(bad, " "))
		switch {
		case strings.Contains(joined, "no such path"):
			return status.Errorf(codes.NotFound, "%s: NVMe-oF subsystem %s of %s does not exist on the host (recreate it, or delete the volume)", d.cfg.driver, nqn, dataset)
		case strings.Contains(joined, "invalid argument"):
			return status.Errorf(codes.FailedPrecondition, "%s: NVMe-oF subsystem %s admits every host (allow_any_host=1: it was made before nvmeof.hostAccess was allowList), so nvmet refuses a host list: set allow_any_host=0 on it by hand (nvmetcli: cd /subsystems/%s; set attr allow_any_host=0) once every node using it is published", d.cfg.driver, nqn, nqn)
		}
		return cliFailed(d, "allowing host "+host+" on NVMe-oF subsystem "+nqn+" with nvmetcli", out, nil)
	}
	return nil
}

// Revoke unlinks the host from the subsystem's allowed_hosts (every host
// when host is ""). The /hosts entry stays: it grants nothing alone and
// other subsystems may link it.
func (s nvmeofShare) Revoke(ctx context.Context, dataset string, props zfs.Properties, host string) error {
	d := s.d
	if err := s.ready(ctx); err != nil {
		return err
	}
	nqn := s.subsystemNQN(dataset, props)
	dir := "/subsystems/" + nqn + "/allowed_hosts"
	who := []string{host}
	if host == "" {
		out, err := d.runCLI(ctx, s.cli(), script("ls "+dir+" 1"), nil)
		if err != nil {
			return err
		}
		if notThere(out) {
			return nil
		}
		who = listed(out, "nqn.")
	}
	if len(who) == 0 {
		return nil
	}
	var lines []string
	for _, w := range who {
		lines = append(lines, dir+" delete "+w)
	}
	out, err := d.runCLI(ctx, s.cli(), script(append(lines, s.saveLine())...), nil)
	if err != nil {
		return err
	}
	if bad := complaints(out, false, true); out.Code != 0 && !notThere(out) || len(bad) > 0 {
		return cliFailed(d, "withdrawing "+strings.Join(who, ", ")+" from NVMe-oF subsystem "+nqn+" with nvmetcli", out, nil)
	}
	return nil
}

// nvmetHostsDir is where nvmet keeps its hosts in configfs.
const nvmetHostsDir = "/sys/kernel/config/nvmet/hosts/"

// setKeys writes the DH-HMAC-CHAP keys into the host's configfs entry
// (dhchap_key, and dhchap_ctrl_key for bidirectional authentication).
// nvmetcli has no host attributes, so this is the kernel's own interface;
// each key travels on the command's stdin, never on a command line the
// storage host's process list or logs would show. nvmetcli's saveconfig
// does not keep the keys: every ControllerPublishVolume writes them again
// (docs/backends/zfs-generic.md).
func (s nvmeofShare) setKeys(ctx context.Context, host string, dh engine.DHCHAP) error {
	d := s.d
	for _, k := range []struct{ file, key string }{{"dhchap_key", dh.HostKey}, {"dhchap_ctrl_key", dh.CtrlKey}} {
		if k.key == "" {
			continue
		}
		cmd := []string{"sh", "-c", "cat > " + zfs.Quote(nvmetHostsDir+host+"/"+k.file)}
		if d.cfg.share.cliSudo {
			cmd = append([]string{d.SudoPath()}, cmd...)
		}
		out, err := d.Run(ctx, zfs.Line(cmd...), zfs.RunOptions{Stdin: []byte(k.key), Sensitive: dh.Secrets()})
		if err != nil {
			return err
		}
		if out.Code != 0 {
			return cliFailed(d, "setting "+k.file+" of NVMe host "+host+" (nvmeof.dhchap; does the storage host's kernel have NVMe in-band authentication, CONFIG_NVME_TARGET_AUTH, Linux 5.19 or later?)", out, dh.Secrets())
		}
	}
	return nil
}
