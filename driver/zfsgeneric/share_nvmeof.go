package zfsgeneric

import (
	"context"
	"strconv"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/driver/volumecontext"
	"github.com/switchyard-csi/switchyard/driver/zfs"
	"github.com/switchyard-csi/switchyard/driver/zfs/engine"
)

// nvmeofShare exports a zvol through the kernel NVMe-oF target with
// nvmetcli: one subsystem per volume (<basename>:<asset>), namespace 1 on
// the zvol, linked to every configured port.
type nvmeofShare struct {
	d       *platform
	listing *listingCache // for CheckShare (share_health_block.go)
}

// nsid is the namespace every volume's subsystem exports.
const nsid = 1

func (s nvmeofShare) cli() []string { return []string{s.d.cfg.share.nvmetcli} }

func (s nvmeofShare) saveLine() string {
	if p := s.d.cfg.share.nvmetConfigPath; p != "" {
		return "saveconfig savefile=" + p
	}
	return "saveconfig"
}

// ready checks configIsImportedFilePath: until the host has restored its
// saved nvmet config, changing the target would race the restore.
func (s nvmeofShare) ready(ctx context.Context) error {
	flag := s.d.cfg.share.importedFlag
	if flag == "" {
		return nil
	}
	out, err := s.d.Run(ctx, zfs.Line("test", "-f", flag), zfs.RunOptions{})
	if err != nil {
		return err
	}
	if out.Code != 0 {
		return s.notReady()
	}
	return nil
}

func (s nvmeofShare) notReady() error {
	return status.Errorf(codes.Unavailable, "nvmet is not configured on the storage host yet: %s does not exist (nvmeof.shareStrategyNvmetCli.configIsImportedFilePath)", s.d.cfg.share.importedFlag)
}

func (s nvmeofShare) Create(ctx context.Context, r engine.ShareRequest) (map[string]string, []zfs.Prop, error) {
	d := s.d
	sh := d.cfg.share
	asset, err := d.assetName("nvmeof", r)
	if err != nil {
		return nil, nil, err
	}
	nqn := sh.basename + ":" + asset
	if err := checkQualifiedName("NQN", nqn, "nvmeof.shareStrategyNvmetCli"); err != nil {
		return nil, nil, err
	}
	var b strings.Builder
	w := func(lines ...string) {
		for _, l := range lines {
			b.WriteString(l)
			b.WriteByte('\n')
		}
	}
	w("cd /subsystems", "create "+nqn, "cd "+nqn)
	for _, a := range sh.subsystemAttrs {
		w("set attr " + a.Key + "=" + a.Value)
	}
	w("cd namespaces", "create "+strconv.Itoa(nsid), "cd "+strconv.Itoa(nsid), "set device path=/dev/zvol/"+r.Dataset, "enable")
	for _, p := range sh.ports {
		w("cd /ports/"+p+"/subsystems", "create "+nqn)
	}
	w(s.saveLine())
	// The readiness check (configIsImportedFilePath) runs in the same exec.
	out, err := d.runCLIWhen(ctx, sh.importedFlag, s.cli(), b.String(), nil)
	if err != nil {
		return nil, nil, err
	}
	if sh.importedFlag != "" && out.Code == notReadyExit {
		return nil, nil, s.notReady()
	}
	// nvmetcli prints nothing for commands that work and may exit 0 after
	// one that failed: any complaint in its output fails the create.
	if out.Code != 0 || looksLikeError(out) {
		return nil, nil, cliFailed(d, "creating NVMe-oF subsystem "+nqn+" with nvmetcli", out, nil)
	}
	vc := volumecontext.NVMeoF{Transport: sh.transport, Transports: sh.transports, NQN: nqn, NSID: nsid, DHCHAP: sh.dhchap.On()}.Encode()
	return vc, []zfs.Prop{{Name: propNVMeoFAssets, Value: asset}}, nil
}

// remove unlinks the subsystem from every port, deletes it, unlinks it
// again and saves the config; each step tolerates the object being gone
// already. The second unlink catches a link made between the first one and
// the deletion by an nvmetcli run this process does not know of (one left
// running on the host by a driver process that was killed mid-call): once
// the subsystem is gone no new link can be made.
func (s nvmeofShare) Remove(ctx context.Context, dataset string, props zfs.Properties) error {
	d := s.d
	asset := d.storedAsset(dataset, props, propNVMeoFAssets)
	nqn := d.cfg.share.basename + ":" + asset
	if err := s.ready(ctx); err != nil {
		return err
	}
	type step struct{ script, what, dir string }
	var steps, unlinks []step
	for _, p := range d.cfg.share.ports {
		dir := "/ports/" + p + "/subsystems"
		unlinks = append(unlinks, step{"cd " + dir + "\ndelete " + nqn + "\n", "unlinking " + nqn + " from port " + p, dir})
	}
	steps = append(steps, unlinks...)
	steps = append(steps, step{"cd /subsystems\ndelete " + nqn + "\n", "deleting subsystem " + nqn, "/subsystems"})
	steps = append(steps, unlinks...)
	for _, st := range steps {
		// nvmetcli prints nothing for a delete that works and may exit 0
		// after one that failed, or after a script it never read: the
		// listing of the folder at the end of the script is the proof.
		out, err := d.runCLI(ctx, s.cli(), st.script+"ls "+st.dir+" 1\n", nil)
		if err != nil {
			return err
		}
		if !nvmetGone(out, st.dir, nqn) {
			return cliFailed(d, st.what+" with nvmetcli", out, nil)
		}
	}
	out, err := d.runCLI(ctx, s.cli(), s.saveLine()+"\n", nil)
	if err != nil {
		return err
	}
	if out.Code != 0 || looksLikeError(out) {
		return cliFailed(d, "saving the nvmet config with nvmetcli", out, nil)
	}
	return nil
}

// nvmetGone reads the "ls <dir> 1" that ends a delete script: the folder
// is listed (so the script ran to its end) without the object, or the
// folder itself does not exist (a port that is gone).
func nvmetGone(out zfs.Output, dir, name string) bool {
	text := out.Stdout + out.Stderr
	if strings.Contains(text, "o- "+name+" ") || strings.HasSuffix(strings.TrimRight(text, "\r\n"), "o- "+name) {
		return false
	}
	header := "o- " + dir[strings.LastIndexByte(dir, '/')+1:] + " "
	return strings.Contains(text, header) || notThere(out)
}

func (nvmeofShare) AssetProps() []string { return []string{propNVMeoFAssets} }
